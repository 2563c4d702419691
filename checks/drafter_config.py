"""Problems in the drafter and target configs themselves: mistyped, absurd or inconsistent fields."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts


class DrafterConfig(Check):
    id = "drafter-config"
    area = "drafter"
    title = "Drafter config is well-formed"
    needs = (DrafterFacts,)
    wants = (TargetFacts,)

    def run(self, evidence: EvidenceSet):
        out = []
        for kind, role in ((DrafterFacts, "drafter"), (TargetFacts, "target")):
            ev = evidence.item(kind)
            if ev is None:
                continue
            v = ev.value
            missing = []
            if kind == DrafterFacts:
                if v.method == "unknown":
                    missing.append(f"architectures {list(v.architectures)} name no known drafter method")
                if v.is_dflash:
                    missing += [
                        f"{name} not stated"
                        for name, val in (
                            ("block_size", v.block_size),
                            ("mask_token_id", v.mask_token_id),
                            ("target_layer_ids", v.target_layer_ids),
                        )
                        if val is None
                    ]
                if v.not_understood:
                    missing.append(
                        f"not understood (may matter to acceptance): {', '.join(v.not_understood[:12])}"
                        + (f" and {len(v.not_understood) - 12} more" if len(v.not_understood) > 12 else "")
                    )
                if v.attention_sinks:
                    missing.append(
                        f"attention sinks ({', '.join(v.attention_sinks)}): an engine that drops them "
                        "runs a different attention than the drafter was trained with"
                    )
            problems = list(v.warnings) + missing
            if problems:
                out.append(
                    self.finding(
                        Status.WARN,
                        f"{role} config: {len(problems)} problem(s): " + "; ".join(problems[:4]),
                        refs=(ev.ref,),
                        details=tuple(problems),
                    )
                )
            else:
                out.append(self.finding(Status.OK, f"{role} config fields well-formed", refs=(ev.ref,)))
        return out
