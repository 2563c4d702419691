"""Classify the per-position acceptance curve into a signature the ranking reads."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.interpret.readings import design_effect
from dflash_doctor.interpret.signature import classify


def _curve(pp) -> str:
    shown = ", ".join(f"{r:.3f}" for r in pp[:6])
    return shown + (" …" if len(pp) > 6 else "")


class AcceptanceCurve(Check):
    id = "acceptance-curve"
    area = "acceptance"
    title = "Per-position acceptance curve shape"
    needs = (AcceptanceSummary,)
    observations = ("signature:all-zero", "signature:cliff-after-first", "signature:steep", "signature:geometric")

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(AcceptanceSummary)
        acc = evidence.require(AcceptanceSummary)
        sig = classify(acc, design_effect(acc, acc.k))
        detail = f"τ {acc.mean_acceptance_length:.2f}, per-position {_curve(acc.per_position)}"
        if sig.id in ("noise", "unknown"):
            return [
                self.finding(Status.COULD_NOT_CHECK, f"could not judge the curve: {sig.description}", refs=(ev.ref,))
            ]
        status = {
            "all-zero": Status.FAIL,
            "cliff-after-first": Status.FAIL,
            "steep": Status.WARN,
            "uniform-low": Status.WARN,
            "geometric": Status.OK,
            "healthy": Status.OK,
        }[sig.id]
        detail += f" — {sig.strength:.0%} sure from the counts" if sig.strength < 0.995 else ""
        obs = (Observation(f"signature:{sig.id}", detail, (ev.ref,), strength=sig.strength),)
        return [
            self.finding(
                status,
                f"curve signature '{sig.id}': {sig.description}",
                refs=(ev.ref,),
                details=(detail,),
                observations=obs,
            )
        ]
