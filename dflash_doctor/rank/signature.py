"""Classify a per-position acceptance curve into the signatures of root-causes.md.

vLLM's per-position rates are unconditional: rate i = P(first i+1 tokens accepted). The conditional
ratio r_i = rate_i / rate_{i-1} is what separates a cliff from a smooth decay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Signature:
    id: str  # all-zero | cliff-after-first | geometric | steep | uniform-low | healthy | noise | unknown
    description: str


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
        n = min(len(pp), len(baseline))
        if n >= 2 and all(pp[i] >= 0.9 * baseline[i] for i in range(n)):
            return Signature("healthy", "every position at or above the pair's reference curve")
        ratios = [pp[i] / baseline[i] for i in range(n) if baseline[i] > 0.05]
        if len(ratios) >= 2 and max(ratios) - min(ratios) < 0.25 and max(ratios) < 0.9:
            return Signature("uniform-low", f"every position at {min(ratios):.0%}–{max(ratios):.0%} of the pair's reference: shape intact, level lower")
    conds = [pp[i] / pp[i - 1] for i in range(1, min(len(pp), 4)) if pp[i - 1] > 0.02]
    if conds:
        mean_ratio = sum(conds) / len(conds)
        if mean_ratio < 0.4:
            return Signature("steep", f"each position keeps only ~{mean_ratio:.0%} of the previous one: steeper than geometric")
        return Signature("geometric", f"smooth decay, position 1 at {p1:.2f}, ~{mean_ratio:.0%} kept per step")
    return Signature("unknown", "too few non-zero positions to judge the shape")
