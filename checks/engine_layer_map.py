"""Does the engine release hand the drafter's target_layer_ids to the target with the +1 they need?

DFlash ids name layer *outputs* (the reference reads hidden_states[id + 1]); engines capture the
stream *entering* a layer, so they must add 1. A release that passes them raw taps every layer one
early. Speculators-format ids (eagle_aux_hidden_state_layer_ids) are already shifted and are used
as-is by every release. The release table's answer, through the same outcome logic as the source
(engine-source-layer-map outranks it when the installed source was read).
"""

from __future__ import annotations

from dataclasses import replace

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import StartupFacts
from dflash_doctor.evidence.engine_facts import EngineAnalysis, EngineSupport
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import Environment, LaunchConfig
from dflash_doctor.models.architectures import support_from_evidence
from dflash_doctor.models.launch_view import launch_method

from ._engine_view import MAP_OBSERVATIONS, map_finding, source_outcome, table_outcome


class EngineLayerMap(Check):
    id = "engine-layer-map"
    area = "engine"
    title = "Engine maps target_layer_ids with +1"
    needs = (EngineSupport,)
    wants = (DrafterFacts, LaunchConfig, StartupFacts, EngineAnalysis, TargetFacts, Environment)
    observations = MAP_OBSERVATIONS

    def run(self, evidence: EvidenceSet):
        sev = evidence.require_item(EngineSupport)
        row = evidence.require(EngineSupport)
        src_o, _ = source_outcome(evidence)
        if src_o is not None and src_o.layer_map is not None and src_o.layer_map.decided:
            # The installed source on the host outranks the release table (patched or source installs differ).
            lm = src_o.layer_map.value
            agree = (
                "agrees"
                if (row.layer_map or "n/a") == lm or lm == "n/a"
                else f"disagrees: the table says {row.layer_map or 'n/a'}"
            )
            return [
                self.finding(
                    Status.NOT_APPLICABLE,
                    f"the installed engine source was read ({lm} mapping); "
                    f"engine-source-layer-map decides, not the release table (which {agree})",
                    refs=(sev.ref, evidence.ref(EngineAnalysis)),
                )
            ]
        dev = evidence.item(DrafterFacts)
        d = evidence.get(DrafterFacts)
        method, _, mev = launch_method(evidence)
        refs = tuple(e.ref for e in (sev, dev, mev) if e is not None)
        who = f"{row.engine} {row.version}"
        drafter_method = d.method if d else method
        if drafter_method is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: neither a drafter config nor a launch "
                    "method says whether this is a DFlash drafter (give --drafter)",
                    refs=refs,
                )
            ]

        arch = support_from_evidence(evidence)
        if arch is not None and arch.loadable is False:
            return [self.finding(Status.NOT_APPLICABLE, f"does not apply: {arch.sentence}", refs=refs)]
        if drafter_method not in ("dflash", "dflash2"):
            return [
                self.finding(
                    Status.NOT_APPLICABLE,
                    f"the drafter is {drafter_method}: the DFlash +1 mapping does not apply "
                    "(engine-aux-taps compares the layers it taps with the ones it was trained on)",
                    refs=refs,
                )
            ]
        if d is not None and d.ids_capture_before:
            msg = (
                f"speculators-format ids {list(d.hf_hidden_state_indices or ())} are already shifted and {who} "
                "uses them as-is: the taps are right"
            )
            return [
                self.finding(
                    Status.OK, msg, refs=refs, observations=(Observation("engine-layer-map:plus-one", msg, refs),)
                )
            ]
        o = table_outcome(evidence, row)
        where = f"the engine-support table ({row.engine} {row.range}" + (
            f", read from {row.verified} wheels)" if row.verified else ", from the reference)"
        )
        finding = map_finding(
            self,
            o,
            refs,
            where,
            who,
            tuple(
                f"{row.engine} {row.verified} source: {x}" for x in row.source_about("target_layer_ids", "aux", "add 1")
            )
            if row.verified
            else (),
        )
        ids = list(d.target_layer_ids) if d is not None and d.target_layer_ids else None
        if ids and o.layer_map is not None and o.layer_map.value == "raw" and finding.status == Status.FAIL:
            finding = replace(
                finding,
                message=finding.message + f" (the drafter gets the outputs of layers "
                f"{[i - 1 for i in ids]} instead of {ids})",
            )
        return [finding]
