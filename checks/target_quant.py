"""A target quantised with a rotation (QuaRot/SpinQuant-style Hadamard transforms) hands the drafter
rotated hidden states it was never trained on."""

from __future__ import annotations

import json

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.model_facts import TargetFacts

_ROTATION_WORDS = ("rotation", "rotate", "hadamard", "quarot", "spinquant")


class TargetQuantRotation(Check):
    id = "target-quant-rotation"
    area = "pairing"
    title = "Target quantisation keeps hidden states unrotated"
    needs = (TargetFacts,)
    observations = ("quant:rotation",)

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(TargetFacts)
        q = ev.value.quantization
        if not q:
            return [self.finding(Status.OK, "the target config has no quantization_config", refs=(ev.ref,))]
        method = q.get("quant_method") or q.get("quant_algo") or "unnamed method"
        text = json.dumps(q, default=str).lower()
        hits = sorted({w for w in _ROTATION_WORDS if w in text})
        if hits:
            msg = f"the target is quantised ({method}) with rotation settings ({', '.join(hits)})"
            return [
                self.finding(
                    Status.WARN,
                    msg,
                    refs=(ev.ref,),
                    remedy="Counter-rotate the drafter's fc input or serve an unrotated target.",
                    observations=(Observation("quant:rotation", msg, (ev.ref,)),),
                )
            ]
        return [
            self.finding(Status.OK, f"the target is quantised ({method}) without rotation settings", refs=(ev.ref,))
        ]
