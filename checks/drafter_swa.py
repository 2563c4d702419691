"""Sliding-window drafter layers, and whether the named engine release honours them.

The seed case: a drafter with 4 sliding layers (window 2048) served by an engine that silently runs
them as full, non-causal attention. Neither fact appears in any log; both come from the drafter's
config and the engine-support table.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status
from dflash_doctor.models.facts import layer_span

from ._engine_view import LAUNCH_OBSERVATIONS, SWA_OBSERVATIONS, drafter_span, source_outcome, swa_finding, table_outcome


class DrafterSwa(Check):
    id = "drafter-swa"
    area = "drafter"
    title = "Drafter sliding-window layers"
    needs = (Kind.DRAFTER,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.DRAFTER)
        d = ev.value
        if not d.layers:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the drafter config has no usable "
                                 "num_hidden_layers, so its layers are unknown", refs=(ev.ref,))]
        swa = d.swa_layers
        if not swa:
            what = "the drafter's single layer is" if len(d.layers) == 1 else f"all {len(d.layers)} drafter layers are"
            return [self.finding(Status.OK, f"{what} full attention", refs=(ev.ref,),
                                 observations=(Observation("drafter-swa:absent",
                                                           f"{len(d.layers)} layers, none sliding", (ev.ref,)),))]
        causal = "causal" if all(d.layers[i].causal for i in swa) else "non-causal"
        msg = (f"drafter layers {layer_span(swa)} are sliding-window attention (window {d.sliding_window}, "
               f"{causal}); {len(d.layers) - len(swa)} full (from {d.swa_config})")
        return [self.finding(Status.WARN if d.swa_mix == "mixed" else Status.OK, msg, refs=(ev.ref,),
                             remedy="Serve it with an engine release that honours drafter layer_types "
                                    "(`--engine NAME==VERSION` says whether yours does).",
                             observations=(Observation("drafter-swa:present", msg, (ev.ref,)),))]


class EngineDrafterSwa(Check):
    id = "engine-drafter-swa"
    area = "engine"
    title = "Engine can serve the drafter and honours its sliding windows"
    needs = (Kind.DRAFTER, Kind.ENGINE_SUPPORT)
    wants = (Kind.ENVIRONMENT, Kind.ACCEPTANCE, Kind.ENGINE_SOURCE, Kind.TARGET, Kind.LAUNCH)
    observations = SWA_OBSERVATIONS + LAUNCH_OBSERVATIONS

    def run(self, evidence: EvidenceSet):
        dev, sev = evidence.get(Kind.DRAFTER), evidence.get(Kind.ENGINE_SUPPORT)
        d, row = dev.value, sev.value
        refs = (dev.ref, sev.ref)
        src_o, a = source_outcome(evidence)
        if src_o is not None and src_o.decided:
            # The installed source on the host outranks the release table (patched or source installs differ).
            tab = table_outcome(evidence, row)
            agree = "agrees" if tab.value == src_o.value else f"disagrees: the table alone says {tab.value}"
            return [self.finding(Status.OK, f"the installed engine source was read ({src_o.value}); engine-source-swa "
                                 f"decides, not the release table (which {agree})",
                                 refs=refs + (evidence.get(Kind.ENGINE_SOURCE).ref,))]
        if not d.is_dflash:
            return [self.finding(Status.OK, f"the drafter is {d.method}, not DFlash: the DFlash sliding-window "
                                 "support of the engine does not apply", refs=refs)]
        if not d.layers:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the drafter's layers are unknown", refs=refs)]
        o = table_outcome(evidence, row)
        origin = (f"the engine-support table ({row.engine} {row.range}"
                  + (f", read from {row.verified} wheels)" if row.verified else ", from the reference)"))
        extra = ()
        if d.swa_layers:
            if row.verified:
                extra += tuple(f"{row.engine} {row.verified} source: {x}" for x in row.source_about("sliding", "causal",
                                                                                                      "NotImplementedError"))
        return [swa_finding(self, o, refs, origin, extra, lead=drafter_span(evidence))]
