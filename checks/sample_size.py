"""Is there enough data to judge? Below the minimum sample, per-position zeros are noise."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status


class SampleSize(Check):
    id = "sample-size"
    area = "acceptance"
    title = "Enough drafts to judge acceptance"
    needs = (Kind.ACCEPTANCE,)
    observations = ("sample:insufficient",)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.ACCEPTANCE)
        acc = evidence.acceptance()
        if acc.sufficient:
            return [self.finding(Status.OK, f"{acc.drafts:.0f} drafts over {acc.intervals} interval(s)", refs=(ev.ref,))]
        return [self.finding(
            Status.WARN, f"only {acc.drafts:.0f} drafts (minimum {acc.min_drafts}): per-position zeros are noise",
            refs=(ev.ref,), remedy="Collect a longer log under real load before judging the drafter.",
            observations=(Observation("sample:insufficient", f"{acc.drafts:.0f} drafts", (ev.ref,)),))]
