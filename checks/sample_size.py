"""Do the counts settle the level? Not a draft cutoff: the interval of τ from its drafts and per-position
rates (interpret/readings.py) either sits on one side of the healthy band's edge, or straddles it — then the
finding says how many drafts at this τ would settle it."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.interpret.readings import read_level


class SampleSize(Check):
    id = "sample-size"
    area = "acceptance"
    title = "The counts settle the acceptance level"
    needs = (AcceptanceSummary,)
    observations = ("sample:insufficient",)

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(AcceptanceSummary)
        acc = evidence.require(AcceptanceSummary)
        r = read_level(evidence, acc)
        where = f"{acc.drafts:.0f} drafts over {acc.intervals} interval(s)"
        if r.basis == "per-request":
            where = "a per-request average (no draft counts)"
        elif r.basis == "printed":
            where = "a printed τ (no draft count)"
        settle = "settles" if r.basis in ("per-request", "printed") else "settle"
        if r.verdict in ("healthy", "problem"):
            return [self.finding(Status.OK, f"{where} {settle} it: {r.describe()}", refs=(ev.ref,))]
        if r.verdict == "no-band":
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: no healthy band to compare {where} with ({r.describe()})",
                    refs=(ev.ref,),
                )
            ]
        more = (
            "; the workload decides it, not more drafts (name it with --dataset)"
            if r.dataset_decides
            else "; the method decides it, not more drafts (name it with --launch or --drafter)"
            if r.method_decides
            else f"; about {r.drafts_to_settle:,} drafts at this τ would settle it"
            if r.drafts_to_settle
            else "; a pair baseline (--drafter) or a probe would settle it sooner"
        )
        return [
            self.finding(
                Status.WARN,
                f"{where} {'does' if settle == 'settles' else 'do'} not separate healthy from impaired: "
                f"{r.describe()}{more}",
                refs=(ev.ref,),
                remedy="Collect a longer log under real load, or run `dflash-doctor probe` for the clean-room τ.",
                observations=(
                    Observation(
                        "sample:insufficient", where, (ev.ref,), strength=1.0 - abs(2 * (r.p_healthy or 0.5) - 1.0)
                    ),
                ),
            )
        ]
