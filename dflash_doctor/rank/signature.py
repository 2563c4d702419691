"""Classify a per-position acceptance curve into the signatures of root-causes.md.

vLLM's per-position rates are unconditional: rate i = P(first i+1 tokens accepted). The conditional
ratio r_i = rate_i / rate_{i-1} is what separates a cliff from a smooth decay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Signature:
    id: str  # all-zero | cliff-after-first | geometric | steep | uniform-low | small-uniform-drop | healthy | noise | unknown
    description: str


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
        return Signature("healthy", f"τ {tau:.2f} vs the reference {ref_tau:.2f} at k={n} "
                                    f"({rho:.0%} of its accepted tokens/draft): where the pair should be")
    if not smooth:
        return None
    if rho >= SMALL_DROP_RHO:
        return Signature("small-uniform-drop", f"shape intact, level at {rho:.0%} of the reference's accepted "
                                               f"tokens/draft (τ {tau:.2f} vs {ref_tau:.2f}): a small uniform drop")
    return Signature("uniform-low", f"shape intact but every position lower: {rho:.0%} of the reference's accepted "
                                    f"tokens/draft (τ {tau:.2f} vs {ref_tau:.2f})")


def classify(per_position: Sequence[float], tau: float, drafts: float, min_drafts: int = 200,
             baseline: Sequence[float] | None = None) -> Signature:
    pp = list(per_position)
    if drafts < min_drafts:
        return Signature("noise", f"only {drafts:.0f} drafts: below {min_drafts} the curve's shape is noise")
    if not pp:
        return Signature("unknown", "no per-position rates in the evidence")
    if tau <= 1.005 and max(pp) < 0.01:
        return Signature("all-zero", "every draft rejected: mean length 1.00, every position ≈ 0")
    p1 = pp[0]
    p2 = pp[1] if len(pp) > 1 else None
    if p2 is not None and 0.01 <= p1 <= 0.40 and p2 <= max(0.02, 0.12 * p1) and all(r <= p2 + 1e-9 for r in pp[2:]):
        return Signature("cliff-after-first",
                         f"position 1 at {p1:.3f}, position 2 at {p2:.3f}, the rest ≈ 0: single lucky hits, never two in a row")
    if baseline:
        ref = against_reference(pp, tau, baseline)
        if ref is not None:
            return ref
    conds = [pp[i] / pp[i - 1] for i in range(1, min(len(pp), 4)) if pp[i - 1] > 0.02]
    if conds:
        mean_ratio = sum(conds) / len(conds)
        if mean_ratio < 0.4:
            return Signature("steep", f"each position keeps only ~{mean_ratio:.0%} of the previous one: steeper than geometric")
        return Signature("geometric", f"smooth decay, position 1 at {p1:.2f}, ~{mean_ratio:.0%} kept per step")
    return Signature("unknown", "too few non-zero positions to judge the shape")
