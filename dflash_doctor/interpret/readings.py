"""Readings of the acceptance numbers that carry their uncertainty from the counts behind them.

No draft cutoff decides anything here: τ's interval comes from the drafts and the per-position rates
(dflash_doctor.stats), and the verdict asks how likely the data are if τ sits in the healthy band of the
drafter's method at the served k (interpret/reference.toml; a known pair's baseline overrides it) versus below it.

    healthy  τ_true ≥ low     (within what trained drafters of the kind reach, or the pair's 0.9 × baseline)
    impaired τ_true < low
    P(healthy | data) = P(τ_true ≥ low | τ̂) with τ̂ ~ Normal(τ_true, se) and a flat prior on τ_true:
    Φ((τ̂ − low) / se) — the interval sits above the edge, below it, or straddles it.

With the method or k unknown, the reading is the mixture over the method belief (interpret/method.py) and the
k values that method is served with (those τ̂ allows). A per-request average (TensorRT-LLM's [AL] figures) has
no draft counts and is not drafts-weighted: it is read with a wide allowance (REQUEST_AVERAGE_SPREAD), so it
can show a gross failure but rarely settle a close call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING

from .. import stats
from ..evidence.acceptance import AcceptanceSummary
from .baselines import in_force, pair_context
from .method import MethodBelief, family, infer_method
from .reference import Band, healthy_band

if TYPE_CHECKING:
    from ..evidence import EvidenceSet

# How sure a reading must be to decide the verdict (posterior probability).
DECISIVE = 0.9
# A per-request average of acceptance lengths is biased against the drafts-weighted τ by the spread of request
# lengths (short requests weigh as much as long ones): read it as τ ± this share.
REQUEST_AVERAGE_SPREAD = 0.15
# A printed τ whose drafts count was not printed (a benchmark client's one line, a server's running average): a
# whole-run figure, so its sampling error is small, but what stands behind it (warm-up, per-request or per-step
# mean, the prefill token) is not: read as τ ± this share.
PRINTED_SPREAD = 0.10
# Served k values per method when k is not known (chain drafting as engines' docs and recipes show them).
TYPICAL_K = {
    "eagle3": (3, 4, 5, 7),
    "eagle": (3, 4, 5),
    "p-eagle": (4, 7),
    "mtp": (1, 2, 3, 4, 5),
    "dflash": (15, 7),
    "ngram": (3, 5, 7),
    "suffix": (5, 15),
    "draft": (3, 4, 5),
    "medusa": (3, 4, 5),
}
# The most design effect a measured overdispersion may claim (a few bursty intervals must not make every
# reading worthless).
MAX_DESIGN_EFFECT = 30.0


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@dataclass(frozen=True)
class LevelReading:
    """τ against the healthy band, from the counts."""

    tau: float
    interval: stats.Interval
    se: float
    basis: str  # "drafts" | "per-request" | "estimated-drafts"
    design_effect: float
    p_healthy: float | None  # None: no band to judge against (n-gram, unknown method and k with no figures)
    p_dead: float
    band: Band | None  # the band of the most likely method at the most likely k (what the report cites)
    method: MethodBelief
    k: int | None
    drafts_to_settle: int | None = None
    notes: tuple[str, ...] = ()
    by_method: tuple[tuple[str | None, float, float], ...] = ()  # (method, P(method), P(healthy | method))
    # With a known pair and the workload unknown: (dataset, the pair's τ there at k, P(healthy) on it), one per
    # published dataset. The pair's band is the mixture over them: never its lowest figure alone.
    by_dataset: tuple[tuple[str, float, float], ...] = ()

    @property
    def dataset_decides(self) -> bool:
        """The counts settle τ against each of the pair's workloads, but the workloads disagree: naming the
        workload (--dataset) settles it, more drafts do not."""
        if len(self.by_dataset) < 2 or self.verdict != "undecided":
            return False
        return any(ph >= DECISIVE for _, _, ph in self.by_dataset) and any(
            ph <= 1 - DECISIVE for _, _, ph in self.by_dataset
        )

    def workloads(self) -> str:
        ok = [d for d, _, ph in self.by_dataset if ph >= 0.5]
        bad = [d for d, _, ph in self.by_dataset if ph < 0.5]
        return f"healthy on {', '.join(ok) or 'none'}; below on {', '.join(bad) or 'none'}"

    @property
    def method_decides(self) -> bool:
        """The counts settle τ for each likely method, but the methods' bands disagree: naming the method
        (--launch, --drafter) settles it, more drafts do not."""
        likely = [(m, ph) for m, pm, ph in self.by_method if pm >= 0.1]
        return (
            len(likely) >= 2
            and all(ph >= DECISIVE or ph <= 1 - DECISIVE for _, ph in likely)
            and len({ph >= DECISIVE for _, ph in likely}) == 2
        )

    @property
    def verdict(self) -> str:
        """healthy | problem | undecided | no-band."""
        if self.p_dead >= DECISIVE:
            return "problem"
        if self.p_healthy is None:
            return "no-band"
        if self.p_healthy >= DECISIVE:
            return "healthy"
        if self.p_healthy <= 1.0 - DECISIVE:
            return "problem"
        return "undecided"

    def describe(self) -> str:
        iv = self.interval
        hi = "∞" if math.isinf(iv.high) else f"{iv.high:.2f}"
        what = f"τ {self.tau:.2f} [{iv.low:.2f}–{hi}, 95 %] over {iv.n:.0f} drafts"
        if self.basis == "per-request":
            what = f"τ {self.tau:.2f} (a per-request average, no draft counts; read as ±{REQUEST_AVERAGE_SPREAD:.0%})"
        elif self.basis == "printed":
            what = f"τ {self.tau:.2f} (a printed figure without its draft count; read as ±{PRINTED_SPREAD:.0%})"
        if self.band is None or self.band.low is None:
            return what + "; no healthy band to compare with"
        return f"{what}; {self.band.describe()}"

    def to_dict(self) -> dict:
        return {
            "tau": round(self.tau, 4),
            "interval": self.interval.to_dict(),
            "basis": self.basis,
            "design_effect": round(self.design_effect, 2),
            "p_healthy": None if self.p_healthy is None else round(self.p_healthy, 4),
            "p_dead": round(self.p_dead, 4),
            "verdict": self.verdict,
            "k": self.k,
            "method": self.method.to_dict(),
            "band": self.band.to_dict() if self.band else None,
            "drafts_to_settle": self.drafts_to_settle,
            "notes": list(self.notes),
            "by_method": [
                {"method": m, "p_method": round(pm, 4), "p_healthy": round(ph, 4)} for m, pm, ph in self.by_method
            ],
            "by_dataset": [
                {"dataset": d, "tau": round(t, 3), "p_healthy": round(ph, 4)} for d, t, ph in self.by_dataset
            ],
        }


def _var_l(acc: AcceptanceSummary, k: int | None) -> float | None:
    m = max(0.0, acc.mean_acceptance_length - 1.0)
    pp = list(acc.per_position)
    if pp and (k is None or len(pp) >= k):
        v = stats.accepted_length_variance(pp)
        return max(v, min(m, 1.0) * (1 - min(m, 1.0)) * 0.25)
    if k:
        return min(stats.accepted_length_variance(stats.geometric_rates(m, k)), m * max(0.0, k - m))
    return None


def design_effect(acc: AcceptanceSummary, k: int | None) -> float:
    """The spread between intervals against independent drafts (at least stats.DESIGN_EFFECT)."""
    var = _var_l(acc, k)
    pts = [s for s in acc.series if s.get("drafts") and s.get("tau") is not None]
    if var and len(pts) >= 5:
        d = [float(s["drafts"]) for s in pts]
        a = [(float(s["tau"]) - 1.0) * x for s, x in zip(pts, d, strict=False)]
        od = stats.overdispersion(d, a, var)
        if od is not None:
            return min(MAX_DESIGN_EFFECT, max(stats.DESIGN_EFFECT, od))
    return stats.DESIGN_EFFECT


def _by_dataset(pair, k: int, tau: float, se: float) -> list[tuple[str, float, float]]:
    """P(healthy) against the pair's band on each workload it was published on (the same margin as every band)."""
    from .reference import default_reference

    margin = default_reference().margin
    out = []
    for name in pair.tau:
        tau_d = pair.tau_at_k(name, min(k, pair.k))
        out.append((name, tau_d, p_above(tau, se, margin * tau_d)))
    return out


def _p_healthy(band: Band, tau: float, se: float, pair, k: int) -> tuple[float, list]:
    """P(healthy) against a band; with a known pair whose workload is not named, across its published workloads
    (and those workloads' readings)."""
    assert band.low is not None  # the caller skips bands without a low edge
    if pair is None or len(pair.tau) < 2:
        return p_above(tau, se, band.low), []
    by_dataset = _by_dataset(pair, k, tau, se)
    return _across_workloads(by_dataset), by_dataset


def _across_workloads(by_dataset: list[tuple[str, float, float]]) -> float:
    """P(healthy) with the workload unknown, from the pair's published workloads: healthy when τ reaches the band of
    the median workload (typical or better), below when it misses even the easiest workload's band, and otherwise
    the workload decides (0.5: neither side can be claimed)."""
    ordered = sorted(by_dataset, key=lambda x: x[1])
    p_easiest = ordered[0][2]
    p_typical = median(ph for _, _, ph in ordered) if len(ordered) % 2 else ordered[len(ordered) // 2][2]
    if p_typical >= DECISIVE:
        return p_typical
    if p_easiest <= 1.0 - DECISIVE:
        return p_easiest
    return 0.5


def p_above(tau: float, se: float, edge: float) -> float:
    """P(τ_true ≥ edge | τ̂) under a flat prior: Φ((τ̂ − edge) / se)."""
    return _phi((tau - edge) / max(se, 1e-6))


def _interval(acc, tau: float, basis: str, k: int | None, deff: float, belief) -> tuple[stats.Interval, float, list]:
    """τ's interval and standard error for its basis: a spread for per-request and printed figures, the counts'
    interval otherwise (the widest k the numbers allow when k is unknown); with the notes that say which."""
    notes: list[str] = []
    if basis in ("per-request", "printed"):
        spread = REQUEST_AVERAGE_SPREAD if basis == "per-request" else PRINTED_SPREAD
        se = max(spread * tau, 0.05)
        iv = stats.Interval(tau, max(1.0, tau - 1.96 * se), tau + 1.96 * se, 0.0)
        if basis == "per-request":
            notes.append(
                f"τ {tau:.2f} is a per-request average: per-step and per-request means of one run differ by up to "
                "~35 % (a deployment's server mean 2.80 against its per-request mean 2.04, vllm#42690; ModelOpt's "
                "2.4733 per step against 2.5467 per request): read as ±15 %"
            )
        if basis == "printed":
            notes.append(
                f"τ {tau:.2f} is a printed figure without its draft count: read as ±{PRINTED_SPREAD:.0%} (what it "
                "averages is known, how many drafts stand behind it is not)"
            )
    else:
        if k is None:
            # the widest k the numbers allow for the likeliest method bounds the spread of L
            kk = max(max(TYPICAL_K.get(belief.top[0], (5,))), math.ceil(tau))
            iv = stats.tau_interval(acc.drafts, (tau - 1.0) * acc.drafts, acc.per_position, kk, design_effect=deff)
            notes.append(f"k is not in the evidence: the interval assumes up to k = {kk}")
        else:
            iv = stats.tau_interval(acc.drafts, (tau - 1.0) * acc.drafts, acc.per_position, k, design_effect=deff)
        se = (iv.high - iv.low) / (2 * 1.96) if not math.isinf(iv.high) else max(tau, 1.0)
    return iv, se, notes


def level_reading(evidence: EvidenceSet) -> LevelReading | None:
    """The level reading of the evidence's acceptance (None without acceptance numbers)."""
    acc = evidence.get(AcceptanceSummary)
    return None if acc is None else read_level(evidence, acc)


def read_level(evidence: EvidenceSet, acc: AcceptanceSummary) -> LevelReading:
    """The level reading of these acceptance numbers, with what else the evidence says (pair, method)."""
    belief = infer_method(evidence)
    ctx = pair_context(evidence, in_force(evidence))
    tau = acc.mean_acceptance_length
    basis = {"estimated": "estimated-drafts", "printed": "printed"}.get(acc.standing, "drafts")
    basis = "per-request" if acc.per_request else basis
    k = acc.k
    deff = design_effect(acc, k)
    iv, se, notes = _interval(acc, tau, basis, k, deff, belief)
    # mixture over methods (and k when unknown)

    pair = ctx.baseline
    pair_method = family(pair.method) if pair is not None else None
    if pair is not None and pair.method == "any":  # a reference that does not say its method judges the likeliest
        pair_method = belief.top[0]
    num = 0.0
    weight = 0.0
    dead = 0.0
    dead_w = 0.0
    by_dataset: list[tuple[str, float, float]] = []
    best: tuple[float, Band | None, int | None] = (-1.0, None, None)
    by_method: list[tuple[str | None, float, float]] = []  # None: a user reference naming no known method
    # the user's own reference (--reference) judges the deployment whatever the method belief says
    mixture = [(pair_method, 1.0)] if pair is not None and pair.trust == "yours" else list(belief.probs.items())
    for m, pm in mixture:
        if pm < 0.01:
            continue
        m_num = m_w = 0.0
        typical_k = TYPICAL_K.get(m, (3,)) if m is not None else (3,)
        ks = (k,) if k else tuple(x for x in typical_k if x + 1 >= iv.low) or (max(typical_k),)
        for kk in ks:
            w = pm / len(ks)
            b = healthy_band(
                m,
                kk,
                ctx.dataset,
                drafter=pair.id if pair is not None and m == pair_method else None,
                baselines=in_force(evidence),
                temperature=ctx.temperature,
                thinking=ctx.thinking,
            )
            if b is not None and b.dead_excess is not None:
                dead += w * _phi((1.0 + b.dead_excess - tau) / max(se, 1e-6))
                dead_w += w
            if b is None or b.low is None:
                continue
            ph, found = _p_healthy(b, tau, se, pair if m == pair_method and not ctx.dataset else None, kk)
            by_dataset = found or by_dataset
            num += w * ph
            weight += w
            m_num += w * ph
            m_w += w
            if w > best[0]:
                best = (w, b, kk)
        if m_w > 0:
            by_method.append((m, pm, m_num / m_w))
    p_healthy = num / weight if weight > 0.5 * sum(p for _, p in mixture if p >= 0.01) else None
    p_dead = dead / dead_w if dead_w else 0.0
    band = best[1]
    settle = None
    top_ph = next((ph for mm, _, ph in by_method if band is not None and mm == band.method), None)
    if (
        top_ph is not None
        and 1.0 - DECISIVE < top_ph < DECISIVE
        and band is not None
        and band.low is not None
        and basis not in ("per-request", "printed")
    ):
        gap = abs(tau - band.low)
        var = _var_l(acc, k or best[2])
        if gap > 1e-3 and var:
            # drafts for the 95 % half-width to fall within the gap (with the measured design effect)
            settle = int(math.ceil(var * deff * (1.96 / gap) ** 2))
    if ctx.temperature and ctx.temperature > 0:
        notes.append(f"requests sample at temperature {ctx.temperature:g}: the bands are greedy figures")
    if acc.standing == "upper-bound" and p_healthy is not None and p_healthy > 0.5:
        # the true τ is at most this one: it can show a deployment below its band, never that it reaches it
        p_healthy = 0.5
        notes.append(f"τ {tau:.2f} is an upper bound: it cannot show that the deployment reaches its band")
    return LevelReading(
        tau=tau,
        interval=iv,
        se=se,
        basis=basis,
        design_effect=deff,
        p_healthy=p_healthy,
        p_dead=p_dead,
        band=band,
        method=belief,
        k=k or best[2],
        drafts_to_settle=settle,
        notes=tuple(notes),
        by_method=tuple(by_method),
        by_dataset=tuple(by_dataset),
    )


@dataclass(frozen=True)
class CurveReading:
    """The shape of the per-position curve from its counts: how sure the counts make each signature."""

    p1: stats.Interval | None  # position-1 rate
    c2: stats.Interval | None  # P(position 2 accepted | position 1 accepted)
    strengths: dict[str, float] = field(default_factory=dict)  # signature id -> probability it holds


def curve_reading(acc: AcceptanceSummary, deff: float = stats.DESIGN_EFFECT) -> CurveReading:
    """all-zero: τ − 1 under 0.01; cliff-after-first: a few position-1 hits, almost none continue
    (P(pos 2 | pos 1) under 0.15); first-only: position 1 often right (≥ 0.40) and position 2 all but never
    (that conditional under 0.05); geometric: hits continue (that conditional ≥ 0.35); steep: in between."""
    pp = list(acc.per_position)
    d = acc.drafts
    out: dict[str, float] = {}
    m = max(0.0, acc.mean_acceptance_length - 1.0)
    # all-zero from τ itself (no rates needed): the interval of τ − 1 against 0.01
    var0 = m * (1 - m) if m < 1 else 0.25
    se0 = math.sqrt(max(var0, 1e-4) * deff / d) if d > 0 else float("inf")
    out["all-zero"] = _phi((0.01 - m) / se0) if d > 0 and not math.isinf(se0) else 0.0
    if not pp or not d or d <= 0:
        return CurveReading(None, None, out)
    p1 = stats.wilson(pp[0] * d, d, design_effect=deff)
    c2 = None
    if len(pp) >= 2 and pp[0] > 0:
        n1 = pp[0] * d
        c2 = stats.wilson(pp[1] * d, n1, design_effect=deff)
        c = c2.estimate
        se = max((c2.high - c2.low) / (2 * 1.96), 1e-4)
        p1_small = _phi((0.40 - p1.estimate) / max((p1.high - p1.low) / 3.92, 1e-4))
        out["cliff-after-first"] = _phi((0.15 - c) / se) * p1_small * (1.0 - out["all-zero"])
        out["first-only"] = _phi((0.05 - c) / se) * (1.0 - p1_small) * (1.0 - out["all-zero"])
        out["geometric"] = _phi((c - 0.35) / se) * (1.0 - out["all-zero"])
        out["steep"] = max(0.0, 1.0 - out["cliff-after-first"] - out["first-only"] - out["geometric"] - out["all-zero"])
    return CurveReading(p1, c2, out)
