"""Classify the per-position acceptance curve into a signature the ranking reads.

The signatures describe learned drafters (a model that predicts from features). An n-gram or suffix drafter predicts
nothing: it copies the continuation of an earlier occurrence of the last tokens from the context, so how often its
first copied token is right measures how much the traffic repeats its own context — single lucky hits are what a
non-repetitive text gives it, not a sign of wrong inputs. For those methods the check reads that instead.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.interpret.method import infer_method
from dflash_doctor.interpret.readings import design_effect
from dflash_doctor.interpret.signature import classify
from dflash_doctor.stats import wilson

LOOKUP_METHODS = ("ngram", "suffix")
LOOKUP_HIT = 0.5  # a copied first token right less often than this: the text rarely continues as it did before


def _curve(pp) -> str:
    shown = ", ".join(f"{r:.3f}" for r in pp[:6])
    return shown + (" …" if len(pp) > 6 else "")


class AcceptanceCurve(Check):
    id = "acceptance-curve"
    area = "acceptance"
    title = "Per-position acceptance curve shape"
    needs = (AcceptanceSummary,)
    observations = (
        "signature:all-zero",
        "signature:cliff-after-first",
        "signature:first-only",
        "signature:steep",
        "signature:geometric",
        "draft-model:all-rejected",
    )

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(AcceptanceSummary)
        acc = evidence.require(AcceptanceSummary)
        method = infer_method(evidence).known
        if method in LOOKUP_METHODS:
            return self._lookup(acc, ev.ref)
        sig = classify(acc, design_effect(acc, acc.k))
        detail = f"τ {acc.mean_acceptance_length:.2f}, per-position {_curve(acc.per_position)}"
        if sig.id in ("noise", "unknown"):
            return [
                self.finding(Status.COULD_NOT_CHECK, f"could not judge the curve: {sig.description}", refs=(ev.ref,))
            ]
        status = {
            "all-zero": Status.FAIL,
            "cliff-after-first": Status.FAIL,
            "first-only": Status.FAIL,
            "steep": Status.WARN,
            "uniform-low": Status.WARN,
            "geometric": Status.OK,
            "healthy": Status.OK,
        }[sig.id]
        detail += f" — {sig.strength:.0%} sure from the counts" if sig.strength < 0.995 else ""
        obs: tuple[Observation, ...] = (Observation(f"signature:{sig.id}", detail, (ev.ref,), strength=sig.strength),)
        if sig.id == "all-zero" and method == "draft":
            # a standalone draft model is an ordinary LM the engine runs like the target: nothing accepted means
            # the two predict different things, whatever feeds a head's features has no part in it
            obs += (Observation("draft-model:all-rejected", detail, (ev.ref,), strength=sig.strength),)
        return [
            self.finding(
                status,
                f"curve signature '{sig.id}': {sig.description}",
                refs=(ev.ref,),
                details=(detail,),
                observations=obs,
            )
        ]

    def _lookup(self, acc, ref):
        """An n-gram/suffix drafter: how often its first copied token is right (position 1 over the drafts)."""
        pp, drafts = acc.per_position, acc.drafts
        if not pp or not drafts or drafts <= 0:
            return [
                self.finding(Status.COULD_NOT_CHECK, "no per-position counts to read the lookups from", refs=(ref,))
            ]
        hit = wilson(pp[0] * drafts, drafts)
        detail = (
            f"τ {acc.mean_acceptance_length:.2f}, first copied token right in {pp[0]:.1%} of {drafts:.0f} drafts "
            f"[{hit.low:.1%}–{hit.high:.1%}, 95%], per-position {_curve(pp)}"
        )
        if hit.estimate >= LOOKUP_HIT:
            return [
                self.finding(
                    Status.OK, "n-gram lookups land: the traffic repeats its context", refs=(ref,), details=(detail,)
                )
            ]
        return [
            self.finding(
                Status.WARN,
                "n-gram drafting copies continuations from the context, and this traffic rarely repeats them "
                "(tau-vs-baseline weighs it against the method's band)",
                refs=(ref,),
                details=(detail,),
            )
        ]
