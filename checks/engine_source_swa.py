"""Can the INSTALLED engine serve this drafter with this launch, and does it honour its sliding windows?

From dflash_doctor.engines' reading of the engine's files on the host (the DFlash drafter module, its
mixed-layer refusals and their conditions, the runner the engine picks from VLLM_USE_V2_MODEL_RUNNER and
its own rules): one outcome — honoured, ignored, refused or absent. Refused and absent are failing
findings about the launch (the engine's own error, the launch that works), not causes of low acceptance.
Outranks the release table's engine-drafter-swa when it decided.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.evidence.engine_facts import EngineAnalysis, EngineSupport
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import Environment, LaunchConfig

from ._engine_view import (
    LAUNCH_OBSERVATIONS,
    SWA_OBSERVATIONS,
    analysed_outcome,
    drafter_span,
    not_dflash,
    origin,
    swa_finding,
    table_note,
)


class EngineSlidingWindow(Check):
    id = "engine-source-swa"
    area = "engine"
    title = "Installed engine can serve this drafter and honours its sliding windows"
    needs = (EngineAnalysis,)
    wants = (DrafterFacts, TargetFacts, Environment, LaunchConfig, EngineSupport, AcceptanceSummary)
    observations = SWA_OBSERVATIONS + LAUNCH_OBSERVATIONS

    def run(self, evidence: EvidenceSet):
        a, ev = evidence.require(EngineAnalysis), evidence.require_item(EngineAnalysis)
        dev = evidence.item(DrafterFacts)
        refs = (ev.ref,) + ((dev.ref,) if dev else ())
        method = not_dflash(evidence)
        if method:
            return [
                self.finding(
                    Status.NOT_APPLICABLE,
                    f"the drafter is {method}, not DFlash: the DFlash checks do not apply",
                    refs=refs,
                )
            ]
        o = analysed_outcome(evidence, a)
        extra = table_note(
            a,
            evidence.get(EngineSupport),
            ("dflash", "drafter_swa", "v2_dflash", "runner_unset", "mixed_forces_v2", "v1_rejects_mixed"),
        )
        if o.value in ("refused", "absent") and evidence.has(AcceptanceSummary):
            extra += (
                "yet acceptance numbers were collected for this server: what runs is not what was read (another "
                "drafter revision, environment or install) — re-check the process",
            )
        return [swa_finding(self, o, refs, origin(a), extra, lead=drafter_span(evidence))]
