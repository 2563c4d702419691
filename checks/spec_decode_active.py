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
        size = f"{stats['lines']} lines" if stats.get("lines") is not None else f"{stats.get('bytes', 0)} bytes"
        if stats["intervals"] > 0:
            return [self.finding(Status.OK, f"{stats['intervals']} spec-decode metrics intervals in {size}",
                                 refs=(ev.ref,))]
        if not stats.get("bytes", stats.get("lines")):
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the log is empty", refs=(ev.ref,))]
        if stats.get("malformed"):
            return [self.finding(Status.COULD_NOT_CHECK, f"could not check: {stats['malformed']} metrics-like line(s) "
                                 "in the log, none parsed", refs=(ev.ref,))]
        return [self.finding(
            Status.FAIL, f"no spec-decode metrics in {size}", refs=(ev.ref,),
            remedy="Check that --speculative-config reached the server and that stats logging is on "
                   "(no --disable-log-stats); an idle engine logs these lines only at DEBUG.",
            observations=(Observation("launch:no-spec-lines", f"0 metrics lines in {size}", (ev.ref,)),))]


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
        examples = tuple(f"{m.get('where') or m['source']}: {m['reason']}: {m['text']}"
                         for m in stats["malformed_examples"])
        return [self.finding(Status.WARN, f"{bad} metrics-like line(s) did not parse and were skipped", refs=(ev.ref,),
                             details=examples)]


class LogInputNotes(Check):
    id = "log-input"
    area = "acceptance"
    title = "The log itself was readable"
    needs = (Kind.LOG_SCAN,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.LOG_SCAN)
        notes = ev.value.get("notes") or []
        if not notes:
            return [self.finding(Status.OK, "no damage, binary data or odd input found in the log", refs=(ev.ref,))]
        return [self.finding(Status.WARN, f"{len(notes)} note(s) about the log input; the rest was parsed",
                             refs=(ev.ref,), details=tuple(notes[:6]))]
