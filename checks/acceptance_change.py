"""A step change in τ over time: the moment acceptance fell (a deploy, a restart, a new workload).

Reads the τ-over-time series of the acceptance evidence (log intervals or Prometheus steps) and looks
for the one split whose two sides' count-based intervals do not overlap (stats.change_point). When
the metrics evidence saw a counter reset (a restart) just before the split, the drop is tied to it.
"""

from __future__ import annotations

from datetime import datetime

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.evidence.payloads import MetricsScrape
from dflash_doctor.stats import change_point


def _when(ts) -> datetime | None:
    try:
        return datetime.fromisoformat(str(ts))
    except (TypeError, ValueError):
        return None


class AcceptanceChangePoint(Check):
    id = "acceptance-change-point"
    area = "acceptance"
    title = "A step change in τ over time"
    needs = (AcceptanceSummary,)
    wants = (MetricsScrape,)
    observations = ("trend:drop-after-restart", "trend:step-drop")

    # A drop smaller than this share of the accepted tokens per draft is not worth a warning
    # (the same bar as the first-vs-last-third trend).
    DROP = 0.15
    # A restart this close before the split (seconds) is taken as its trigger.
    NEAR = 900.0

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(AcceptanceSummary)
        acc = evidence.require(AcceptanceSummary)
        series = [s for s in acc.series if s.get("drafts") and s.get("tau") is not None]
        if len(series) < 4:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: {len(series)} point(s) of τ over time, need ≥ 4",
                    refs=(ev.ref,),
                )
            ]
        drafts = [float(s["drafts"]) for s in series]
        accepted = [(float(s["tau"]) - 1.0) * d for s, d in zip(series, drafts, strict=False)]
        cp = change_point(drafts, accepted, acc.per_position, acc.k, min_drafts=acc.min_drafts)
        if cp is None:
            return [
                self.finding(
                    Status.OK,
                    f"no step change in τ over {len(series)} points (99 % intervals of the two "
                    "sides of every split overlap)",
                    refs=(ev.ref,),
                )
            ]
        at = series[cp.index].get("timestamp") or f"point {cp.index + 1}"
        if cp.drop <= self.DROP:
            what = "rose" if cp.drop < 0 else "shifted slightly"
            return [
                self.finding(
                    Status.OK,
                    f"τ {what} at {at}: {cp.before.estimate:.2f} before, {cp.after.estimate:.2f} after",
                    refs=(ev.ref,),
                )
            ]
        refs = [ev.ref]
        restart = self._restart_near(evidence, at)
        msg = (
            f"τ fell from {cp.before.estimate:.2f} to {cp.after.estimate:.2f} at {at} ({cp.drop:.0%} fewer accepted "
            "tokens per draft)"
        )
        detail = (
            f"before: τ {cp.before.estimate:.2f} [{cp.before.low:.2f}–{cp.before.high:.2f}] on {cp.before.n:.0f} "
            f"drafts; after: {cp.after.estimate:.2f} [{cp.after.low:.2f}–{cp.after.high:.2f}] on {cp.after.n:.0f} "
            "drafts (99 % intervals)"
        )
        if restart:
            refs.append(restart[1])
            msg += f", after a restart at {restart[0]}"
            obs = Observation("trend:drop-after-restart", msg, tuple(refs))
            remedy = (
                "Compare what the restart changed (engine version, runner, launch flags, drafter) with the "
                "deploy before it; roll back to confirm."
            )
            status = Status.FAIL  # a deploy made acceptance worse: a regression, not noise
        else:
            obs = Observation("trend:step-drop", msg, tuple(refs))
            remedy = "Look at what changed at that time: traffic (prompts, languages, thinking mode), or a config push."
            status = Status.WARN
        return [self.finding(status, msg, refs=tuple(refs), details=(detail,), remedy=remedy, observations=(obs,))]

    def _restart_near(self, evidence: EvidenceSet, at) -> tuple[str, str] | None:
        """A counter reset up to NEAR before the split, or within one series point after it (a
        reset and the first low step can land in adjacent steps)."""
        t = _when(at)
        if t is None:
            return None
        for ev in evidence.all(MetricsScrape):
            step = ev.value.step_seconds or 0.0
            for r in ev.value.restarts:
                rt = _when(r)
                if (
                    rt is not None
                    and (rt.tzinfo is None) == (t.tzinfo is None)
                    and -max(step, 1.0) <= (t - rt).total_seconds() <= self.NEAR
                ):
                    return str(r), ev.ref
        return None
