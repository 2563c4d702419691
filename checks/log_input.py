"""Was the log itself readable (damage, binary data, encodings, cut compressed streams)?"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.payloads import ScanStats


class LogInputNotes(Check):
    id = "log-input"
    area = "acceptance"
    title = "The log itself was readable"
    needs = (ScanStats,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(ScanStats)
        notes = evidence.require(ScanStats).notes
        if not notes:
            return [self.finding(Status.OK, "no damage, binary data or odd input found in the log", refs=(ev.ref,))]
        return [
            self.finding(
                Status.WARN,
                f"{len(notes)} note(s) about the log input; the rest was parsed",
                refs=(ev.ref,),
                details=tuple(notes[:6]),
            )
        ]
