"""What the INSTALLED engine's source does with this DFlash drafter: can it serve it, does it honour its
sliding windows, does it add +1 to target_layer_ids — for the runner this launch actually uses.

Answered by dflash_doctor.engines from the engine's files read on the host (`check host`), parsed with
`ast` here (nothing from the engine is run). The support-table checks (engine-layer-map,
engine-drafter-swa) say what a release does; these say what the code on that host does (a patched or
source install can differ from its version number), and they outrank the table when they decided.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Status

from ._engine_view import (LAUNCH_OBSERVATIONS, MAP_OBSERVATIONS, SWA_OBSERVATIONS, drafter_span, map_finding, not_dflash,
                           source_analysis, source_outcome, swa_finding, table_note)


def drafter_has_swa(drafter) -> bool | None:
    """True/False from the drafter config (raw dict or DrafterFacts), None when unknown."""
    if drafter is None:
        return None
    layers = getattr(drafter, "swa_layers", None)
    if layers is not None and getattr(drafter, "layers", None):
        return bool(layers)
    get = (lambda k: drafter.get(k)) if isinstance(drafter, dict) else (lambda k: getattr(drafter, k, None))
    flag = get("has_swa")
    if isinstance(flag, bool):
        return flag
    config = get("config")
    if not isinstance(config, dict):
        return None
    types = config.get("layer_types") or []
    if any("sliding" in str(t) for t in types):
        return True
    dcfg = config.get("dflash_config") if isinstance(config.get("dflash_config"), dict) else {}
    if dcfg.get("use_swa"):
        return True
    if types:
        return False
    return bool(config.get("use_sliding_window") and config.get("sliding_window"))


def _who(a) -> str:
    return f"{a.engine} {a.version.value or '(version unknown)'}"


def _origin(a) -> str:
    return f"the installed source ({a.source}; version from {a.version.source or 'nowhere'})"


class EngineLayerMap(Check):
    id = "engine-source-layer-map"
    area = "engine"
    title = "Installed engine source maps DFlash target_layer_ids with +1"
    needs = (Kind.ENGINE_SOURCE,)
    wants = (Kind.DRAFTER, Kind.TARGET, Kind.ENVIRONMENT, Kind.LAUNCH, Kind.ENGINE_SUPPORT)
    observations = MAP_OBSERVATIONS

    def run(self, evidence: EvidenceSet):
        a, ev = source_analysis(evidence)
        if a is None:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the engine source evidence holds no analysis",
                                 refs=(ev.ref,))]
        refs = (ev.ref,) + tuple(e.ref for e in (evidence.get(Kind.DRAFTER),) if e is not None)
        method = not_dflash(evidence)
        if method:
            return [self.finding(Status.OK, f"the drafter is {method}: the DFlash target_layer_ids mapping does not "
                                 "apply", refs=refs)]
        d = evidence.value(Kind.DRAFTER)
        if getattr(d, "layer_ids_source", None) == "eagle_aux_hidden_state_layer_ids":
            msg = (f"speculators-format ids (eagle_aux_hidden_state_layer_ids) are already shifted and {_who(a)} "
                   "uses them as-is: the taps are right")
            from dflash_doctor.evidence import Observation
            return [self.finding(Status.OK, msg, refs=refs,
                                 observations=(Observation("engine-layer-map:plus-one", msg, refs),))]
        o, _ = source_outcome(evidence)
        row = evidence.value(Kind.ENGINE_SUPPORT)
        return [map_finding(self, o, refs, _origin(a), _who(a), table_note(a, row, ("layer_map",)))]


class EngineSlidingWindow(Check):
    id = "engine-source-swa"
    area = "engine"
    title = "Installed engine can serve this drafter and honours its sliding windows"
    needs = (Kind.ENGINE_SOURCE,)
    wants = (Kind.DRAFTER, Kind.TARGET, Kind.ENVIRONMENT, Kind.LAUNCH, Kind.ENGINE_SUPPORT, Kind.ACCEPTANCE)
    observations = SWA_OBSERVATIONS + LAUNCH_OBSERVATIONS

    def run(self, evidence: EvidenceSet):
        a, ev = source_analysis(evidence)
        if a is None:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the engine source evidence holds no analysis",
                                 refs=(ev.ref,))]
        dev = evidence.get(Kind.DRAFTER)
        refs = (ev.ref,) + ((dev.ref,) if dev else ())
        method = not_dflash(evidence)
        if method:
            return [self.finding(Status.OK, f"the drafter is {method}, not DFlash: the DFlash checks do not apply",
                                 refs=refs)]
        o, _ = source_outcome(evidence)
        row = evidence.value(Kind.ENGINE_SUPPORT)
        extra = table_note(a, row, ("dflash", "drafter_swa", "v2_dflash", "runner_unset", "mixed_forces_v2",
                                    "v1_rejects_mixed"))
        if o.value in ("refused", "absent") and evidence.has(Kind.ACCEPTANCE):
            extra += ("yet acceptance numbers were collected for this server: what runs is not what was read (another "
                      "drafter revision, environment or install) — re-check the process",)
        return [swa_finding(self, o, refs, _origin(a), extra, lead=drafter_span(evidence))]
