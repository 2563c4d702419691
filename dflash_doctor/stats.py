"""Uncertainty from counts: what a number of drafts can and cannot settle.

Readings of the acceptance picture are judged by intervals computed from the counts behind them, never
by a fixed draft cutoff (root-causes.md, "few drafts"):

* a per-position rate is a binomial proportion (accepted at position i over drafts): Wilson interval;
* τ − 1 is the mean of the per-draft accepted length L ∈ [0, k]. Its variance follows exactly from the
  unconditional per-position rates r_i = P(L ≥ i):  Var(L) = Σ_i Σ_j r_max(i,j) − (Σ_i r_i)²  (because
  1[L ≥ i]·1[L ≥ j] = 1[L ≥ max(i, j)]). Without the rates, Var(L) ≤ m (k − m) (Bhatia–Davis) bounds it.

Drafts are not independent: steps of one request share its prompt, so the effective sample is smaller than
the draft count. DESIGN_EFFECT divides the count: a floor for that correlation (acceptance length correlates
within a request over tens of steps); where a log has many intervals, the diagnosis can measure the spread
between them instead (`overdispersion`).

Pure Python (math only): imported by the CLI's light paths.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# z for a two-sided 95 % interval: the confidence level every "settled" reading in a report uses.
Z95 = 1.959963984540054
# Effective sample = counted drafts / DESIGN_EFFECT (see the module doc).
DESIGN_EFFECT = 2.0


@dataclass(frozen=True)
class Interval:
    """A point estimate with its two-sided interval at `level` (e.g. 0.95), and the counts behind it."""

    estimate: float
    low: float
    high: float
    n: float  # the count the interval rests on (drafts, before the design effect)
    level: float = 0.95

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high

    def below(self, x: float) -> bool:
        """The whole interval lies below x: the data settle that the true value is under x."""
        return self.high < x

    def above(self, x: float) -> bool:
        return self.low >= x

    def width(self) -> float:
        return self.high - self.low

    def to_dict(self) -> dict:
        return {
            "estimate": _r(self.estimate),
            "low": _r(self.low),
            "high": _r(self.high),
            "n": _r(self.n, 1),
            "level": self.level,
        }


def _r(x: float, n: int = 4) -> float | None:
    return None if x is None or x != x or math.isinf(x) else round(x, n)


def z_for(level: float) -> float:
    """Two-sided normal quantile for a confidence level (0.5 < level < 1), via the inverse error function."""
    if not 0.5 < level < 1.0:
        raise ValueError(f"confidence level {level} must be in (0.5, 1)")
    p = 1.0 - (1.0 - level) / 2.0
    # Acklam's rational approximation of the normal quantile (relative error < 1.2e-9)
    a = (
        -3.969683028665376e01,
        2.209460984245205e02,
        -2.759285104469687e02,
        1.383577518672690e02,
        -3.066479806614716e01,
        2.506628277459239e00,
    )
    b = (
        -5.447609879822406e01,
        1.615858368580409e02,
        -1.556989798598866e02,
        6.680131188771972e01,
        -1.328068155288572e01,
    )
    c = (
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e00,
        -2.549732539343734e00,
        4.374664141464968e00,
        2.938163982698783e00,
    )
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
    if p > 1 - 0.02425:
        q = math.sqrt(-2 * math.log(1 - p))
        return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    q = p - 0.5
    r = q * q
    return (
        (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5])
        * q
        / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    )


def effective_n(n: float, design_effect: float = DESIGN_EFFECT) -> float:
    return max(0.0, n) / max(1.0, design_effect)


def wilson(successes: float, n: float, level: float = 0.95, design_effect: float = DESIGN_EFFECT) -> Interval:
    """Wilson score interval of a proportion successes / n, on the effective sample n / design_effect.

    Counts need not be integers (drafts estimated from Drafted / k, pooled intervals). n = 0 gives
    the uninformative [0, 1].
    """
    if not (n > 0) or math.isinf(n):
        return Interval(float("nan"), 0.0, 1.0, 0.0 if n != n else n, level)
    p = min(1.0, max(0.0, successes / n))
    m = effective_n(n, design_effect)
    if m <= 0:
        return Interval(p, 0.0, 1.0, n, level)
    z = Z95 if level == 0.95 else z_for(level)
    z2 = z * z
    denom = 1.0 + z2 / m
    centre = (p + z2 / (2 * m)) / denom
    half = z * math.sqrt(p * (1 - p) / m + z2 / (4 * m * m)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), n, level)


def accepted_length_variance(per_position: Sequence[float]) -> float:
    """Var(L) of the per-draft accepted length from the unconditional rates r_i = P(L ≥ i) (module doc)."""
    r = [min(1.0, max(0.0, float(x))) for x in per_position]
    # keep the rates non-increasing, as they are by definition (printed rounding can break it by 0.001)
    for i in range(1, len(r)):
        r[i] = min(r[i], r[i - 1])
    k = len(r)
    second = sum((2 * (i + 1) - 1) * r[i] for i in range(k))  # Σ_{i,j} r_max(i,j) = Σ_m (2m − 1) r_m
    mean = sum(r)
    return max(0.0, second - mean * mean)


def geometric_rates(excess: float, k: int) -> list[float]:
    """The unconditional rates a^1 … a^k of the geometric curve whose sum (τ − 1) is `excess`."""
    target = max(0.0, min(float(k), excess))
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sum(mid**i for i in range(1, k + 1)) < target else (lo, mid)
    a = (lo + hi) / 2
    return [a**i for i in range(1, k + 1)]


def tau_interval(
    drafts: float,
    accepted: float,
    per_position: Sequence[float] = (),
    k: int | None = None,
    level: float = 0.95,
    design_effect: float = DESIGN_EFFECT,
) -> Interval:
    """Interval of τ = 1 + accepted / drafts.

    The variance of the per-draft accepted length comes from the per-position rates when they cover the
    whole draft (len == k), else from the geometric curve with this mean at k (capped by the Bhatia–Davis
    bound m (k − m), the most a bounded mean can vary), else from the rates' own length as k. With neither
    rates nor k, the interval is τ ± ∞ clipped to [1, ∞): nothing bounds it.
    """
    if not (drafts > 0) or math.isinf(drafts) or accepted != accepted:
        return Interval(float("nan"), 1.0, float("inf"), 0.0, level)
    m = max(0.0, accepted / drafts)
    kk = k if k else (len(per_position) or None)
    if per_position and (k is None or len(per_position) >= k):
        var = accepted_length_variance(per_position)
        # printed rates are rounded: never claim less spread than the counts' own Bernoulli floor
        if kk:
            var = max(var, min(m, 1.0) * (1 - min(m, 1.0)) * 0.25)
    elif kk:
        # no rates: the variance of the geometric curve with this mean at this k (how trained drafters' curves
        # decay, interpret/reference.toml), with the Bhatia–Davis bound m (k − m) as its ceiling
        var = min(accepted_length_variance(geometric_rates(m, kk)), m * max(0.0, kk - m))
    else:
        return Interval(1.0 + m, 1.0, float("inf"), drafts, level)
    ne = effective_n(drafts, design_effect)
    z = Z95 if level == 0.95 else z_for(level)
    half = z * math.sqrt(var / ne) if ne > 0 else float("inf")
    high = 1.0 + m + half
    if kk:
        high = min(high, 1.0 + kk)
    return Interval(1.0 + m, max(1.0, 1.0 + m - half), high, drafts, level)


def drafts_to_settle(
    p_hat: float, threshold: float, level: float = 0.95, design_effect: float = DESIGN_EFFECT, limit: float = 1e9
) -> float | None:
    """How many drafts a proportion near p_hat needs before its Wilson interval excludes `threshold`
    (None when p_hat sits on the threshold: no sample size separates them)."""
    if abs(p_hat - threshold) < 1e-6:
        return None
    lo, hi = 1.0, 2.0
    while hi < limit:
        iv = wilson(p_hat * hi, hi, level, design_effect)
        if not iv.contains(threshold):
            break
        lo, hi = hi, hi * 2
    else:
        return None
    while hi - lo > max(1.0, 0.01 * hi):
        mid = (lo + hi) / 2
        iv = wilson(p_hat * mid, mid, level, design_effect)
        if iv.contains(threshold):
            lo = mid
        else:
            hi = mid
    return math.ceil(hi)


def overdispersion(drafts: Sequence[float], accepted: Sequence[float], var_l: float) -> float | None:
    """The design effect measured from per-interval counts: Pearson's dispersion of the interval means
    around the pooled mean, against what independent drafts with per-draft variance var_l would give.
    None with fewer than 5 usable intervals or no variance to compare with."""
    pairs = [(d, a) for d, a in zip(drafts, accepted, strict=False) if d and d > 0 and a == a and not math.isinf(d)]
    if len(pairs) < 5 or not var_l > 0:
        return None
    total_d = sum(d for d, _ in pairs)
    m = sum(a for _, a in pairs) / total_d
    chi = sum(d * (a / d - m) ** 2 for d, a in pairs) / var_l
    return max(1.0, chi / (len(pairs) - 1))


@dataclass(frozen=True)
class ChangePoint:
    """τ before and after the one split of a series that separates it most (see `change_point`)."""

    index: int  # first point of the second segment
    before: Interval
    after: Interval

    @property
    def drop(self) -> float:
        """Share of the accepted tokens per draft lost at the split (τ − 1 after vs before)."""
        b = self.before.estimate - 1.0
        return (b - (self.after.estimate - 1.0)) / b if b > 0 else 0.0


def change_point(
    drafts: Sequence[float],
    accepted: Sequence[float],
    per_position: Sequence[float] = (),
    k: int | None = None,
    min_drafts: float = 200.0,
    level: float = 0.99,
    design_effect: float = DESIGN_EFFECT,
) -> ChangePoint | None:
    """The split of a τ series (per-step drafts and accepted tokens, in time order) into two segments
    whose τ differ most in units of their standard error, when their `level` intervals do not overlap.

    Every split is tried, so the interval level is stricter than the 95 % of single readings; each
    segment needs `min_drafts`. Var(L) comes from the whole series' per-position rates (as in
    `tau_interval`). None when no split separates the two sides.
    """
    pts = [(float(d), float(a)) for d, a in zip(drafts, accepted, strict=False) if d == d and a == a and d >= 0]
    if len(pts) < 4:
        return None
    total_d = sum(d for d, _ in pts)
    total_a = sum(a for _, a in pts)
    best, best_score = None, 0.0
    cd = ca = 0.0
    for i in range(1, len(pts)):
        cd += pts[i - 1][0]
        ca += pts[i - 1][1]
        rd, ra = total_d - cd, total_a - ca
        if cd < min_drafts or rd < min_drafts:
            continue
        diff = abs(ca / cd - ra / rd)
        score = diff * math.sqrt(cd * rd / (cd + rd))
        if score > best_score:
            best, best_score = (i, cd, ca, rd, ra), score
    if best is None:
        return None
    i, cd, ca, rd, ra = best
    before = tau_interval(cd, ca, per_position, k, level, design_effect)
    after = tau_interval(rd, ra, per_position, k, level, design_effect)
    if before.high < after.low or after.high < before.low:
        return ChangePoint(i, before, after)
    return None
