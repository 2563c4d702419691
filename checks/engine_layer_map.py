"""Does the engine release hand the drafter's target_layer_ids to the target with the +1 they need?

DFlash ids name layer *outputs* (the reference reads hidden_states[id + 1]); engines capture the
stream *entering* a layer, so they must add 1. A release that passes them raw taps every layer one
early. Speculators-format ids (eagle_aux_hidden_state_layer_ids) are already shifted and are used
as-is by every release.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status
from dflash_doctor.models.launch_view import launch_method


class EngineLayerMap(Check):
    id = "engine-layer-map"
    area = "engine"
    title = "Engine maps target_layer_ids with +1"
    needs = (Kind.ENGINE_SUPPORT,)
    wants = (Kind.DRAFTER, Kind.LAUNCH, Kind.STARTUP, Kind.ENGINE_SOURCE)
    observations = ("engine-layer-map:plus-one", "engine-layer-map:raw")

    def run(self, evidence: EvidenceSet):
        sev = evidence.get(Kind.ENGINE_SUPPORT)
        row = evidence.engine_support()
        src = evidence.engine_source()
        if src is not None and src.layer_map is not None:
            # The installed source on the host outranks the release table (patched or source installs differ).
            return [self.finding(Status.NOT_APPLICABLE, f"the installed engine source was read ({src.layer_map} mapping); "
                                 "engine-source-layer-map decides, not the release table",
                                 refs=(sev.ref, evidence.ref(Kind.ENGINE_SOURCE)))]
        dev = evidence.get(Kind.DRAFTER)
        d = evidence.drafter()
        method, _, mev = launch_method(evidence)
        refs = tuple(e.ref for e in (sev, dev, mev) if e is not None)
        who = f"{row.engine} {row.version}"
        drafter_method = d.method if d else method
        if drafter_method is None:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: neither a drafter config nor a launch "
                                 "method says whether this is a DFlash drafter (give --drafter)", refs=refs)]
        from dflash_doctor.models.architectures import support_from_evidence
        arch = support_from_evidence(evidence)
        if arch is not None and arch.loadable is False:
            return [self.finding(Status.NOT_APPLICABLE, f"does not apply: {arch.sentence}", refs=refs)]
        if drafter_method not in ("dflash", "dflash2"):
            return [self.finding(Status.NOT_APPLICABLE, f"the drafter is {drafter_method}: the DFlash +1 mapping does not apply "
                                 f"(EAGLE-3 aux ids are used {row.eagle3_aux})", refs=refs)]
        if not row.dflash:
            return [self.finding(Status.FAIL, f"{who} has no DFlash support", refs=refs,
                                 remedy="Use vLLM >= 0.22 (or SGLang >= 0.5.23) for DFlash drafters.")]
        if d is not None and d.ids_capture_before:
            msg = (f"speculators-format ids {list(d.hf_hidden_state_indices or ())} are already shifted and {who} "
                   "uses them as-is: the taps are right")
            return [self.finding(Status.OK, msg, refs=refs,
                                 observations=(Observation("engine-layer-map:plus-one", msg, refs),))]
        ids = list(d.target_layer_ids) if d is not None and d.target_layer_ids else None
        if row.layer_map == "raw":
            msg = (f"{who} passes target_layer_ids raw: every tap is one layer early"
                   + (f" (the drafter gets the outputs of layers {[i - 1 for i in ids]} instead of {ids})" if ids else ""))
            return [self.finding(Status.FAIL, msg, refs=refs,
                                 details=tuple(f"{row.engine} {row.verified} source: {x}" for x in row.source_about("target_layer_ids", "aux")) if row.verified else (),
                                 remedy="Upgrade to vLLM >= 0.22 (PR #40727 adds the +1); do not shift the ids in "
                                        "the config by hand on a fixed release.",
                                 observations=(Observation("engine-layer-map:raw", msg, refs),))]
        if row.layer_map == "plus-one":
            msg = f"{who} maps target_layer_ids with +1, as the drafter was trained"
            return [self.finding(Status.OK, msg, refs=refs,
                                 observations=(Observation("engine-layer-map:plus-one", msg, refs),))]
        return [self.finding(Status.COULD_NOT_CHECK, f"could not check: the layer-id mapping of {who} is not "
                             "in the support table", refs=refs)]
