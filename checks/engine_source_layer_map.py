"""Does the INSTALLED engine's source map DFlash target_layer_ids with +1, on the runner this launch uses?

Answered by dflash_doctor.engines from the engine's files read on the host (`check host`), parsed with
`ast` here (nothing from the engine is run): the code that reads the ids, followed to where they leave,
and the target model's capture loop. A patched or source install can differ from its version number, so
this outranks the release table's engine-layer-map when it decided; a disagreement shows both.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.engine_facts import EngineAnalysis, EngineSupport
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import Environment, LaunchConfig

from ._engine_view import MAP_OBSERVATIONS, analysed_outcome, map_finding, not_dflash, origin, table_note


class EngineLayerMap(Check):
    id = "engine-source-layer-map"
    area = "engine"
    title = "Installed engine source maps DFlash target_layer_ids with +1"
    needs = (EngineAnalysis,)
    wants = (DrafterFacts, TargetFacts, Environment, LaunchConfig, EngineSupport)
    observations = MAP_OBSERVATIONS

    def run(self, evidence: EvidenceSet):
        a, ev = evidence.require(EngineAnalysis), evidence.require_item(EngineAnalysis)
        refs = (ev.ref,) + tuple(e.ref for e in (evidence.item(DrafterFacts),) if e is not None)
        method = not_dflash(evidence)
        if method:
            return [
                self.finding(
                    Status.NOT_APPLICABLE,
                    f"the drafter is {method}: the DFlash target_layer_ids mapping does not apply",
                    refs=refs,
                )
            ]
        d = evidence.get(DrafterFacts)
        who = f"{a.engine} {a.version.value or '(version unknown)'}"
        if d is not None and d.ids_capture_before:
            msg = (
                f"the drafter's ids are already in the capture-before convention (speculators format) and {who} "
                "uses them as-is: the taps are right"
            )
            return [
                self.finding(
                    Status.OK, msg, refs=refs, observations=(Observation("engine-layer-map:plus-one", msg, refs),)
                )
            ]
        o = analysed_outcome(evidence, a)
        return [map_finding(self, o, refs, origin(a), who, table_note(a, evidence.get(EngineSupport), ("layer_map",)))]
