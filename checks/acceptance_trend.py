"""Does acceptance fall over the run (first vs last third)? Contexts grow as a run goes on."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary


class AcceptanceTrend(Check):
    id = "acceptance-trend"
    area = "acceptance"
    title = "Acceptance over the run (first vs last third)"
    needs = (AcceptanceSummary,)
    observations = ("trend:worse-with-context",)

    # τ falling by more than this fraction from the first to the last third is a real trend.
    DROP = 0.15

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(AcceptanceSummary)
        acc = evidence.require(AcceptanceSummary)
        if acc.tau_first_third is None or acc.tau_last_third is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: {acc.intervals} interval(s), need ≥ 3 "
                    "to compare the start and the end of the run",
                    refs=(ev.ref,),
                )
            ]
        first, last = acc.tau_first_third, acc.tau_last_third
        msg = f"τ {first:.2f} in the first third of the run, {last:.2f} in the last"
        if first > 1.0 and (first - last) / first > self.DROP:
            return [
                self.finding(
                    Status.WARN,
                    msg + ": acceptance fell as the run went on",
                    refs=(ev.ref,),
                    observations=(Observation("trend:worse-with-context", msg, (ev.ref,)),),
                )
            ]
        return [self.finding(Status.OK, msg, refs=(ev.ref,))]
