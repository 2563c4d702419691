"""Warnings in the drafter's model card (README.md beside its config): under training, preview,
trained without thinking traces."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.model_facts import DrafterFacts

_SAYS = {
    "under-training": "the model card says the drafter is still under training",
    "preview": "the model card calls the drafter a preview",
    "non-thinking": "the drafter was trained without thinking traces",
}
_REMEDY = {
    "under-training": "Expect lower acceptance than a finished checkpoint; check for a newer revision.",
    "preview": "Expect lower acceptance than a finished checkpoint; check for a newer revision.",
    "non-thinking": "Serve with thinking disabled (e.g. enable_thinking=false) for this drafter.",
}


class DrafterCard(Check):
    id = "drafter-card"
    area = "drafter"
    title = "Drafter model-card warnings"
    needs = (DrafterFacts,)
    observations = ("card:under-training", "card:preview", "card:non-thinking")

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(DrafterFacts)
        d = evidence.require(DrafterFacts)
        if d.card_file is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: no README.md model card beside the drafter config",
                    refs=(ev.ref,),
                )
            ]
        if not d.card:
            return [
                self.finding(
                    Status.OK, "the model card has no training-status or thinking-mode warnings", refs=(ev.ref,)
                )
            ]
        out = []
        for w in d.card:
            out.append(
                self.finding(
                    Status.WARN,
                    f"{_SAYS[w.kind]}: “{w.line}”",
                    refs=(ev.ref,),
                    remedy=_REMEDY[w.kind],
                    observations=(Observation(f"card:{w.kind}", f"model card: “{w.line}”", (ev.ref,)),),
                )
            )
        return out
