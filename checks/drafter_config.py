"""Problems in the drafter and target configs themselves: mistyped, absurd or inconsistent fields."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Status


class DrafterConfig(Check):
    id = "drafter-config"
    area = "drafter"
    title = "Drafter config is well-formed"
    needs = (Kind.DRAFTER,)
    wants = (Kind.TARGET,)

    def run(self, evidence: EvidenceSet):
        out = []
        for kind, role in ((Kind.DRAFTER, "drafter"), (Kind.TARGET, "target")):
            ev = evidence.get(kind)
            if ev is None:
                continue
            v = ev.value
            missing = []
            if kind == Kind.DRAFTER:
                if v.method == "unknown":
                    missing.append(f"architectures {list(v.architectures)} name no known drafter method")
                if v.is_dflash:
                    missing += [f"{name} not stated" for name, val in (("block_size", v.block_size),
                                ("mask_token_id", v.mask_token_id), ("target_layer_ids", v.target_layer_ids)) if val is None]
            problems = list(v.warnings) + missing
            if problems:
                out.append(self.finding(Status.WARN, f"{role} config: {len(problems)} problem(s): " + "; ".join(problems[:4]),
                                        refs=(ev.ref,), details=tuple(problems)))
            else:
                out.append(self.finding(Status.OK, f"{role} config fields well-formed", refs=(ev.ref,)))
        return out
