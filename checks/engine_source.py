"""What the INSTALLED engine's source does with a DFlash drafter: layer-id mapping and sliding windows.

Answered from the engine's files on the host (collected by `check host`), never from log silence.
The support-table checks (engine-layer-map, engine-drafter-swa) say what a release does; these say
what the code on that host does (a patched or source install can differ from its version number).
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status

from .launch_config import _get


def drafter_has_swa(drafter) -> bool | None:
    """True/False from the drafter config (raw dict or DrafterFacts), None when unknown."""
    if drafter is None:
        return None
    layers = getattr(drafter, "swa_layers", None)
    if layers is not None and getattr(drafter, "layers", None):
        return bool(layers)
    flag = _get(drafter, "has_swa")
    if isinstance(flag, bool):
        return flag
    config = _get(drafter, "config")
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


class EngineLayerMap(Check):
    id = "engine-source-layer-map"
    area = "engine"
    title = "Installed engine source maps DFlash target_layer_ids with +1"
    needs = (Kind.ENGINE_SOURCE,)
    wants = (Kind.DRAFTER,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.ENGINE_SOURCE)
        p = ev.value
        lines = tuple(p.get("layer_map_lines", ()))
        dev = evidence.get(Kind.DRAFTER)
        method = getattr(dev.value, "method", None) if dev is not None else None
        if isinstance(method, str) and method not in ("dflash", "dflash2", "unknown"):
            return [self.finding(Status.OK, f"the drafter is {method}: the DFlash target_layer_ids mapping does not "
                                 "apply", refs=(ev.ref, dev.ref))]
        if not p.get("dflash_present"):
            return [self.finding(Status.COULD_NOT_CHECK, f"could not check: {p.get('engine')} {p.get('version')} "
                                 "has no DFlash code", refs=(ev.ref,))]
        if p.get("layer_map") == "plus-one":
            return [self.finding(Status.OK, f"{p['engine']} {p.get('version')} reads hidden states at target_layer_ids + 1",
                                 refs=(ev.ref,), details=lines,
                                 observations=(Observation("engine-layer-map:plus-one", "the installed source adds 1", (ev.ref,)),))]
        if p.get("layer_map") == "raw":
            return [self.finding(
                Status.FAIL, f"{p['engine']} {p.get('version')} passes target_layer_ids raw: every tap is one layer early",
                refs=(ev.ref,), details=lines, remedy="upgrade vLLM to a release with PR #40727 (0.22 or later)",
                observations=(Observation("engine-layer-map:raw", "the installed source reads the ids without +1", (ev.ref,)),))]
        return [self.finding(Status.COULD_NOT_CHECK, "could not check: no code reading target_layer_ids was found in "
                             "the installed source", refs=(ev.ref,))]


class EngineSlidingWindow(Check):
    id = "engine-source-swa"
    area = "engine"
    title = "Installed engine source honours the drafter's sliding-window layers"
    needs = (Kind.ENGINE_SOURCE,)
    wants = (Kind.DRAFTER, Kind.PROCESS)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.ENGINE_SOURCE)
        p = ev.value
        dev = evidence.get(Kind.DRAFTER)
        has_swa = drafter_has_swa(dev.value if dev else None)
        refs = (ev.ref,) + ((dev.ref,) if dev else ())
        swa = p.get("swa")
        lines = tuple(p.get("swa_lines", ()))
        if swa == "no-dflash":
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the installed engine has no DFlash code",
                                 refs=refs)]
        if has_swa is False:
            return [self.finding(Status.OK, f"the drafter has no sliding-window layers (engine: {swa})", refs=refs)]
        unknown = " (whether the drafter has sliding-window layers is unknown)" if has_swa is None else ""
        if swa == "ignored":
            obs = (Observation("engine-swa:ignored", "the installed drafter code never reads layer_types/sliding_window",
                               refs),) if has_swa else ()
            return [self.finding(Status.FAIL if has_swa else Status.WARN,
                                 f"{p['engine']} {p.get('version')} runs every drafter layer as full attention{unknown}",
                                 refs=refs, details=lines, observations=obs,
                                 remedy="use an engine release that honours drafter sliding windows (vLLM ≥ 0.26, which runs "
                                        "mixed sliding/full drafters on the V2 model runner; SGLang ≥ 0.5.23)")]
        if swa and swa.startswith("refused-mixed"):
            v2 = str(p.get("v2_runner_env") or "").strip().lower() in ("1", "true", "yes")
            running = evidence.has(Kind.PROCESS)
            if v2 or (running and has_swa):
                why = ("VLLM_USE_V2_MODEL_RUNNER=1" if v2 else
                       "the server is running with this drafter, which this code allows for mixed layers only on "
                       "the V2 runner")
                return [self.finding(Status.OK, f"{p['engine']} {p.get('version')} honours the sliding windows on the "
                                     f"V2 runner ({why})", refs=refs, details=lines,
                                     observations=(Observation("engine-swa:honoured", why, refs),) if has_swa else ())]
            return [self.finding(Status.WARN, f"{p['engine']} {p.get('version')} refuses mixed sliding/full drafters "
                                 "unless VLLM_USE_V2_MODEL_RUNNER=1" + unknown, refs=refs, details=lines,
                                 observations=(Observation("engine-swa:refused", "mixed layer types refused", refs),)
                                 if has_swa else ())]
        if swa == "honoured":
            return [self.finding(Status.OK, f"{p['engine']} {p.get('version')} reads the drafter's layer_types/sliding_window",
                                 refs=refs, details=lines,
                                 observations=(Observation("engine-swa:honoured", "the drafter code reads layer_types", refs),)
                                 if has_swa else ())]
        return [self.finding(Status.COULD_NOT_CHECK, f"could not check: sliding-window handling unclear ({swa})", refs=refs)]
