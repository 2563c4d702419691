"""Does the INSTALLED engine's source map DFlash target_layer_ids with +1? (answered from the engine's
files on the host, collected by `check host`, never from log silence; a patched or source install can
differ from its version number, so this outranks the release table's engine-layer-map)"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status


class EngineLayerMap(Check):
    id = "engine-source-layer-map"
    area = "engine"
    title = "Installed engine source maps DFlash target_layer_ids with +1"
    needs = (Kind.ENGINE_SOURCE,)
    wants = (Kind.DRAFTER,)
    observations = ("engine-layer-map:plus-one", "engine-layer-map:raw")

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.ENGINE_SOURCE)
        p = evidence.engine_source()
        lines = p.layer_map_lines
        dev, d = evidence.get(Kind.DRAFTER), evidence.drafter()
        if d is not None and d.method not in ("dflash", "dflash2", "unknown"):
            return [self.finding(Status.NOT_APPLICABLE, f"the drafter is {d.method}: the DFlash target_layer_ids mapping does not "
                                 "apply", refs=(ev.ref, dev.ref))]
        if not p.dflash_present:
            return [self.finding(Status.COULD_NOT_CHECK, f"could not check: {p.engine} {p.version} "
                                 "has no DFlash code", refs=(ev.ref,))]
        if p.layer_map == "plus-one":
            return [self.finding(Status.OK, f"{p.engine} {p.version} reads hidden states at target_layer_ids + 1",
                                 refs=(ev.ref,), details=lines,
                                 observations=(Observation("engine-layer-map:plus-one", "the installed source adds 1", (ev.ref,)),))]
        if p.layer_map == "raw":
            return [self.finding(
                Status.FAIL, f"{p.engine} {p.version} passes target_layer_ids raw: every tap is one layer early",
                refs=(ev.ref,), details=lines, remedy="upgrade vLLM to a release with PR #40727 (0.22 or later)",
                observations=(Observation("engine-layer-map:raw", "the installed source reads the ids without +1", (ev.ref,)),))]
        return [self.finding(Status.COULD_NOT_CHECK, "could not check: no code reading target_layer_ids was found in "
                             "the installed source", refs=(ev.ref,))]
