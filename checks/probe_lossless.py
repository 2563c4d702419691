"""Is the probe lossless: at temperature 0 its output must equal the target's own greedy decoding."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.payloads import ProbeResult


class ProbeLossless(Check):
    id = "probe-lossless"
    area = "probe"
    title = "Probe output equals the target's own greedy decoding"
    needs = (ProbeResult,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(ProbeResult)
        probe = evidence.require(ProbeResult)
        lossless = probe.lossless
        if lossless is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: the probe sampled (temperature > 0), so token-for-token equality is not defined",
                    refs=(ev.ref,),
                )
            ]
        if lossless:
            return [
                self.finding(
                    Status.OK, "the probe's output equals the target's greedy decoding on every prompt", refs=(ev.ref,)
                )
            ]
        bad = probe.mismatches
        return [
            self.finding(
                Status.WARN,
                f"the probe's output differs from the target's greedy decoding on "
                f"{len(bad)} prompt(s): low-precision ties between block and single-token forwards, "
                "or a probe bug",
                refs=(ev.ref,),
                details=tuple(
                    f"{m['prompt']}: first difference at output position {m['first_difference_at']}" for m in bad[:5]
                ),
            )
        ]
