"""Is num_speculative_tokens a good choice for this curve? (the cost model is in interpret/advice.py)"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.interpret.advice import advise_k
from dflash_doctor.interpret.signature import classify

# Curves that say the drafter path is broken: tuning k to them would lock in the bug.
BROKEN = ("all-zero", "cliff-after-first", "first-only")


def cost_words(cm: dict) -> str:
    """The cost model in words (never a Python dict in a report)."""
    return (
        f"cost model, in target decode steps: verify {cm['verify_per_draft_position']:g} per draft position; "
        f"drafting {cm['one_pass_draft']:g} per block (one-pass) or {cm['chained_draft_per_position']:g} per "
        "position (chained)"
    )


class KChoice(Check):
    id = "k-choice"
    area = "acceptance"
    title = "num_speculative_tokens against the measured curve"
    needs = (AcceptanceSummary,)

    def run(self, evidence: EvidenceSet):
        ref = evidence.require_item(AcceptanceSummary).ref
        a = advise_k(evidence)
        if a is None or not a.get("advised"):
            reason = a["reason"] if a else "no acceptance figures"
            return [self.finding(Status.COULD_NOT_CHECK, f"could not check: {reason}", refs=(ref,))]
        details = tuple(a["notes"]) + (a["formula"], cost_words(a["cost_model"]))
        acc = evidence.require(AcceptanceSummary)
        sig = classify(acc).id
        if sig in BROKEN and a["recommended_k"] != a["current_k"]:
            return [
                self.finding(
                    Status.WARN,
                    f"{a['summary']} — but only for the curve as measured, whose shape ('{sig}') says the "
                    "drafter path is broken: fix the ranked causes first, then re-measure before changing k",
                    refs=(ref,),
                    details=details,
                    remedy="after the fix, re-run; for DFlash, k = block_size − 1 matches how the drafter was trained",
                )
            ]
        if a["recommended_k"] == a["current_k"]:
            return [self.finding(Status.OK, a["summary"], refs=(ref,), details=details)]
        # k never lowers τ; it is throughput advice, not a cause (root-causes.md, item 12).
        return [
            self.finding(
                Status.WARN,
                a["summary"],
                refs=(ref,),
                details=details,
                remedy=f"set num_speculative_tokens to {a['recommended_k']} in --speculative-config"
                if a["recommended_k"]
                else "fix the top cause before paying for speculative decoding",
            )
        ]
