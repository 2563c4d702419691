"""Did every line that looked like spec-decode metrics parse? The ones that did not are shown, redacted."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.payloads import ScanStats


class LogReadable(Check):
    id = "log-parse"
    area = "acceptance"
    title = "Every metrics-like log line parsed"
    needs = (ScanStats,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.item(ScanStats)
        stats = evidence.get(ScanStats)
        bad = stats.malformed
        if not bad:
            return [
                self.finding(Status.OK, f"{stats.candidate_lines} metrics-like line(s), all parsed", refs=(ev.ref,))
            ]
        examples = tuple(f"{m.where or m.source}: {m.reason}: {m.text}" for m in stats.malformed_examples)
        return [
            self.finding(
                Status.WARN,
                f"{bad} metrics-like line(s) did not parse and were skipped",
                refs=(ev.ref,),
                details=examples,
            )
        ]
