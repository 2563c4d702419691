"""The launch method against the drafter's architecture (e.g. an EAGLE-3 drafter launched as EAGLE
never receives its three-layer features and drafts garbage, with no warning)."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import StartupFacts
from dflash_doctor.evidence.model_facts import DrafterFacts
from dflash_doctor.evidence.payloads import LaunchConfig
from dflash_doctor.models.launch_view import launch_method, launch_parallel_drafting

from .standalone_drafter import is_plain_lm


class LaunchMethod(Check):
    id = "launch-method"
    area = "launch"
    title = "Launch method matches the drafter"
    needs = (DrafterFacts,)
    wants = (LaunchConfig, StartupFacts)
    observations = ("method:ok", "method:mismatch")

    def run(self, evidence: EvidenceSet):
        dev = evidence.require_item(DrafterFacts)
        d = evidence.require(DrafterFacts)
        method, written, mev = launch_method(evidence)
        refs = tuple(e.ref for e in (dev, mev) if e is not None)
        if method is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: no launch method known (give --launch, or a log with the engine's startup lines)",
                    refs=refs,
                )
            ]
        if d.method == "unknown" and method in ("draft", "draft_model") and is_plain_lm(tuple(d.architectures)):
            # vLLM's draft_model / SGLang's STANDALONE serve a whole small LM: its class names no method
            msg = f"launched as {written!r} with a whole language model ({', '.join(d.architectures)}) as drafter"
            return [self.finding(Status.OK, msg, refs=refs, observations=(Observation("method:ok", msg, refs),))]
        if d.method == "unknown":
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: the drafter's architecture "
                    f"({', '.join(d.architectures) or 'none'}) names no known method",
                    refs=refs,
                )
            ]
        if d.method == "peagle" and method == "eagle3":
            # vLLM serves P-EAGLE as eagle3 + parallel_drafting (a speculators `peagle` config is turned into exactly
            # that, transformers_utils/configs/speculators/base.py, 0.22.0+); it has no method of that name.
            if launch_parallel_drafting(evidence):
                msg = f"launched as {written!r} with parallel_drafting, how vLLM serves a P-EAGLE drafter"
                return [self.finding(Status.OK, msg, refs=refs, observations=(Observation("method:ok", msg, refs),))]
            msg = (
                f'launched as {written!r} for a P-EAGLE drafter, without "parallel_drafting": true in the '
                "speculative config as far as the launch shows: it drafts one position per pass, not the "
                "parallel drafting it was trained for"
            )
            return [
                self.finding(
                    Status.WARN,
                    msg,
                    refs=refs,
                    remedy='Add "parallel_drafting": true to --speculative-config (vLLM 0.19.0+).',
                )
            ]
        if method == d.method:
            msg = f"launched as {written!r}, matching the {d.method} drafter"
            return [self.finding(Status.OK, msg, refs=refs, observations=(Observation("method:ok", msg, refs),))]
        msg = f"launched as {written!r} but the drafter is {d.method} ({', '.join(d.architectures)})"
        return [
            self.finding(
                Status.FAIL,
                msg,
                refs=refs,
                remedy=f"Launch with method {d.method!r}.",
                observations=(Observation("method:mismatch", msg, refs),),
            )
        ]
