"""Classify a per-position acceptance curve into the signatures of root-causes.md.

vLLM's per-position rates are unconditional: rate i = P(first i+1 tokens accepted). The conditional
ratio r_i = rate_i / rate_{i-1} is what separates a cliff from a smooth decay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import stats
from .readings import curve_reading


@dataclass(frozen=True)
class Signature:
    # all-zero | cliff-after-first | first-only | geometric | steep | uniform-low | small-uniform-drop | healthy |
    # noise | unknown
    id: str
    description: str
    strength: float = 1.0  # how sure the counts make it (0–1)


# Level against the pair's reference, as the share of the reference's accepted tokens/draft that
# the deployment reaches: ρ = (τ − 1) / (τ_ref − 1). ρ ≥ HEALTHY_RHO is within what vLLM's own e2e test
# accepts (τ ≥ 0.9 × published); a one-layer tap offset measured 5.56 vs 6.61 (ρ 0.81) lands in the
# small-drop band; below SMALL_DROP_RHO the shift is larger than any known integration offset.
HEALTHY_RHO = 0.88
SMALL_DROP_RHO = 0.65
# The shape is intact when no step keeps less than this share of the previous position (else: steep/cliff).
SMOOTH_STEP = 0.4


def excess_ratio(tau: float, ref_tau: float) -> float:
    return (tau - 1.0) / (ref_tau - 1.0) if ref_tau > 1.0 else 0.0


def against_reference(per_position: Sequence[float], tau: float, reference: Sequence[float]) -> Signature | None:
    """Compare a smooth curve with the pair's reference curve (same k). None when the shape is broken
    (cliff, steep), because then the level says nothing about a uniform shift."""
    n = min(len(per_position), len(reference))
    if n < 2:
        return None
    pp, ref = list(per_position[:n]), list(reference[:n])
    ref_tau = 1.0 + sum(ref)
    rho = excess_ratio(tau, ref_tau)
    steps = [pp[i] / pp[i - 1] for i in range(1, n) if pp[i - 1] > 0.05]
    smooth = bool(steps) and min(steps) >= SMOOTH_STEP
    if rho >= HEALTHY_RHO and (smooth or pp[0] >= 0.9 * ref[0]):
        return Signature(
            "healthy",
            f"τ {tau:.2f} vs the reference {ref_tau:.2f} at k={n} "
            f"({rho:.0%} of its accepted tokens/draft): where the pair should be",
        )
    if not smooth:
        return None
    if rho >= SMALL_DROP_RHO:
        return Signature(
            "small-uniform-drop",
            f"shape intact, level at {rho:.0%} of the reference's accepted "
            f"tokens/draft (τ {tau:.2f} vs {ref_tau:.2f}): a small uniform drop",
        )
    return Signature(
        "uniform-low",
        f"shape intact but every position lower: {rho:.0%} of the reference's accepted "
        f"tokens/draft (τ {tau:.2f} vs {ref_tau:.2f})",
    )


def classify(acc, deff: float | None = None) -> Signature:
    """The curve's signature from its counts (an AcceptanceSummary): the signature the counts make most
    likely, with that probability as `strength` (interpret/readings.curve_reading). No draft cutoff: 14 hits
    at position 1 over 200 drafts settle a cliff; 65 drafts of a smooth curve settle nothing."""

    pp = list(acc.per_position)
    reading = curve_reading(acc, stats.DESIGN_EFFECT if deff is None else deff)
    if reading.strengths.get("all-zero", 0.0) >= 0.5:
        return Signature(
            "all-zero", "every draft rejected: mean length 1.00, every position ≈ 0", reading.strengths["all-zero"]
        )
    if not pp:
        return Signature("unknown", "no per-position rates in the evidence")
    if len(pp) < 2:
        return Signature("unknown", "one position only: no shape to read")
    sid, strength = max(
        ((k, v) for k, v in reading.strengths.items() if k != "all-zero"), key=lambda x: x[1], default=("unknown", 0.0)
    )
    c2 = reading.c2
    if strength < 0.5 or c2 is None:
        need = "more drafts" if c2 is not None else "hits at position 1"
        return Signature(
            "noise",
            f"{acc.drafts:.0f} drafts do not settle the curve's shape (position 1 at {pp[0]:.3f}; {need} would)",
            strength,
        )
    cond = f"P(position 2 | position 1) {c2.estimate:.2f} [{c2.low:.2f}–{c2.high:.2f}]"
    if sid == "cliff-after-first":
        return Signature(
            sid,
            f"position 1 at {pp[0]:.3f}, position 2 at {pp[1]:.3f} ({cond}): single lucky hits, never two in a row",
            strength,
        )
    if sid == "first-only":
        return Signature(
            sid,
            f"position 1 at {pp[0]:.3f}, position 2 at {pp[1]:.3f} ({cond}): the first draft token is usually right "
            "and the next all but never: the drafter's later steps get other inputs than its first",
            strength,
        )
    if sid == "geometric":
        return Signature(sid, f"smooth decay, position 1 at {pp[0]:.2f}, {cond}", strength)
    return Signature(
        "steep", f"each position keeps little of the previous one ({cond}): steeper than geometric", strength
    )
