"""Did every line that looked like spec-decode metrics parse? The ones that did not are shown, redacted. And
do the log's startup facts agree with themselves and with the other sources (a disagreement means one of
them is not the engine's: models/launch_view.facts_conflicts)?"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.payloads import ScanStats
from dflash_doctor.models.launch_view import facts_conflicts


class LogReadable(Check):
    id = "log-parse"
    area = "acceptance"
    title = "Every metrics-like log line parsed"
    needs = (ScanStats,)

    def run(self, evidence: EvidenceSet):
        return self._parsed(evidence) + self._agreed(evidence)

    def _agreed(self, evidence: EvidenceSet) -> list:
        conflicts = facts_conflicts(evidence)
        if not conflicts:
            return []
        return [
            self.finding(
                Status.WARN,
                f"the sources disagree on {len(conflicts)} fact(s): one of each pair is not the engine's",
                refs=(evidence.ref(ScanStats),),
                details=tuple(conflicts),
                remedy="Check which release, method and k the engine runs (its startup lines, the process, the "
                "install); a gate fails on a disagreement until the log and the other sources agree.",
            )
        ]

    def _parsed(self, evidence: EvidenceSet) -> list:
        ev = evidence.require_item(ScanStats)
        stats = evidence.require(ScanStats)
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
