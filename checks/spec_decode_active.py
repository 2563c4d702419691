"""Did speculative decoding run at all? A log with no spec-decode metrics is a finding, not a pass."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import StartupFacts
from dflash_doctor.evidence.payloads import (
    MIN_SERVER_LOG_LINES,
    EngineFailures,
    Environment,
    MetricsScrape,
    ScanStats,
)


def _counters(evidence: EvidenceSet) -> str | None:
    """What the /metrics counters show when the log has no stats line: vLLM prints its `SpecDecoding metrics`
    line only every VLLM_LOG_STATS_INTERVAL seconds (10 by default), so a short run, or a long interval, leaves
    the counters as the only evidence that speculative decoding ran."""
    m = evidence.get(MetricsScrape)
    acc = m.acceptance if m is not None else None
    if acc is None or not acc.drafts or acc.drafts <= 0:
        return None
    env = evidence.get(Environment)
    interval = env.get("VLLM_LOG_STATS_INTERVAL") if env is not None else None
    why = (
        f"VLLM_LOG_STATS_INTERVAL={interval}: the stats line comes every {interval} s"
        if interval
        else "the stats line comes every VLLM_LOG_STATS_INTERVAL seconds (10 by default)"
    )
    seen = f"counters show {acc.drafts:,.0f} drafts (τ {acc.mean_acceptance_length:.2f})"
    return f"{seen} but the log has no stats line; {why}"


class SpecDecodeActive(Check):
    id = "spec-decode-active"
    area = "launch"
    title = "Spec-decode metrics present in the log"
    needs = (ScanStats,)
    wants = (StartupFacts, MetricsScrape, Environment, EngineFailures)
    observations = ("launch:no-spec-lines",)

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(ScanStats)
        stats = evidence.require(ScanStats)
        size = f"{stats.lines} lines" if stats.lines is not None else f"{stats.bytes} bytes"
        if stats.intervals > 0:
            return [
                self.finding(Status.OK, f"{stats.intervals} spec-decode metrics intervals in {size}", refs=(ev.ref,))
            ]
        counted = _counters(evidence)
        if counted:
            refs = tuple(r for r in (ev.ref, evidence.ref(MetricsScrape)) if r)
            return [self.finding(Status.OK, counted, refs=refs)]
        failed = evidence.get(EngineFailures)
        if failed is not None and failed.items:
            # the engine's own failure lines say why no interval was logged (check engine-failure): the launch
            # did not merely lack the spec config or the stats logging
            refs = tuple(r for r in (ev.ref, evidence.ref(EngineFailures)) if r)
            msg = (
                f"no spec-decode metrics in {size}: the engine failed ({', '.join(failed.kinds())}; see engine-failure)"
            )
            return [self.finding(Status.FAIL, msg, refs=refs)]
        if not (stats.bytes or stats.lines):
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the log is empty", refs=(ev.ref,))]
        if stats.malformed:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: {stats.malformed} metrics-like line(s) in the log, none parsed",
                    refs=(ev.ref,),
                )
            ]
        if evidence.get(StartupFacts) is None and (stats.lines or 0) < MIN_SERVER_LOG_LINES:
            # Text with no line an engine writes (a pasted summary, another program's log) says nothing about
            # whether speculative decoding ran: its silence is not the server's.
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: nothing in the log ({size}) shows it comes "
                    "from a vLLM or SGLang server (no metrics, no startup lines)",
                    refs=(ev.ref,),
                )
            ]
        return [
            self.finding(
                Status.FAIL,
                f"no spec-decode metrics in {size}",
                refs=(ev.ref,),
                remedy="Check that --speculative-config reached the server and that stats logging is on "
                "(no --disable-log-stats); an idle engine logs these lines only at DEBUG.",
                observations=(Observation("launch:no-spec-lines", f"0 metrics lines in {size}", (ev.ref,)),),
            )
        ]
