"""Classify the per-position acceptance curve into a signature the ranking reads."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status
from dflash_doctor.rank.signature import classify


def _curve(pp) -> str:
    shown = ", ".join(f"{r:.3f}" for r in pp[:6])
    return shown + (" …" if len(pp) > 6 else "")


class AcceptanceCurve(Check):
    id = "acceptance-curve"
    area = "acceptance"
    title = "Per-position acceptance curve shape"
    needs = (Kind.ACCEPTANCE,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.ACCEPTANCE)
        acc = ev.value
        sig = classify(acc.per_position, acc.mean_acceptance_length, acc.drafts, acc.min_drafts)
        detail = f"τ {acc.mean_acceptance_length:.2f}, per-position {_curve(acc.per_position)}"
        if sig.id in ("noise", "unknown"):
            return [self.finding(Status.COULD_NOT_CHECK, f"could not judge the curve: {sig.description}", refs=(ev.ref,))]
        status = {"all-zero": Status.FAIL, "cliff-after-first": Status.FAIL, "steep": Status.WARN,
                  "uniform-low": Status.WARN, "geometric": Status.OK, "healthy": Status.OK}[sig.id]
        obs = (Observation(f"signature:{sig.id}", detail, (ev.ref,)),)
        return [self.finding(status, f"curve signature '{sig.id}': {sig.description}", refs=(ev.ref,),
                             details=(detail,), observations=obs)]


class AcceptanceTrend(Check):
    id = "acceptance-trend"
    area = "acceptance"
    title = "Acceptance over the run (first vs last third)"
    needs = (Kind.ACCEPTANCE,)

    # τ falling by more than this fraction from the first to the last third is a real trend.
    DROP = 0.15

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.ACCEPTANCE)
        acc = ev.value
        if acc.tau_first_third is None or acc.tau_last_third is None:
            return [self.finding(Status.COULD_NOT_CHECK, f"could not check: {acc.intervals} interval(s), need ≥ 3 "
                                 "to compare the start and the end of the run", refs=(ev.ref,))]
        first, last = acc.tau_first_third, acc.tau_last_third
        msg = f"τ {first:.2f} in the first third of the run, {last:.2f} in the last"
        if first > 1.0 and (first - last) / first > self.DROP:
            return [self.finding(Status.WARN, msg + ": acceptance fell as the run went on", refs=(ev.ref,),
                                 observations=(Observation("trend:worse-with-context", msg, (ev.ref,)),))]
        return [self.finding(Status.OK, msg, refs=(ev.ref,))]
