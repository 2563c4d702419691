"""Did speculative decoding run at all? A log with no spec-decode metrics is a finding, not a pass."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status


class SpecDecodeActive(Check):
    id = "spec-decode-active"
    area = "launch"
    title = "Spec-decode metrics present in the log"
    needs = (Kind.LOG_SCAN,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.LOG_SCAN)
        stats = ev.value
        if stats["intervals"] > 0:
            return [self.finding(Status.OK, f"{stats['intervals']} spec-decode metrics intervals in {stats['lines']} lines",
                                 refs=(ev.ref,))]
        if stats["lines"] == 0:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the log is empty", refs=(ev.ref,))]
        return [self.finding(
            Status.FAIL, f"no spec-decode metrics in {stats['lines']} log lines", refs=(ev.ref,),
            remedy="Check that --speculative-config reached the server and that stats logging is on "
                   "(no --disable-log-stats); an idle engine logs these lines only at DEBUG.",
            observations=(Observation("launch:no-spec-lines", f"0 metrics lines in {stats['lines']} lines", (ev.ref,)),))]


class LogReadable(Check):
    id = "log-parse"
    area = "acceptance"
    title = "Every metrics-like log line parsed"
    needs = (Kind.LOG_SCAN,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.LOG_SCAN)
        stats = ev.value
        bad = stats["malformed"]
        if not bad:
            return [self.finding(Status.OK, f"{stats['candidate_lines']} metrics-like line(s), all parsed", refs=(ev.ref,))]
        examples = tuple(f"{m['source']}:{m['line_no']}: {m['reason']}: {m['text']}" for m in stats["malformed_examples"])
        return [self.finding(Status.WARN, f"{bad} metrics-like line(s) did not parse and were skipped", refs=(ev.ref,),
                             details=examples)]
