"""Does the INSTALLED engine's source honour the drafter's sliding-window layers? (from the engine's files
on the host; outranks the release table's engine-drafter-swa)"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status


class EngineSlidingWindow(Check):
    id = "engine-source-swa"
    area = "engine"
    title = "Installed engine source honours the drafter's sliding-window layers"
    needs = (Kind.ENGINE_SOURCE,)
    wants = (Kind.DRAFTER, Kind.PROCESS, Kind.ENVIRONMENT)
    observations = ("engine-swa:ignored", "engine-swa:honoured", "engine-swa:refused")

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.ENGINE_SOURCE)
        p = evidence.engine_source()
        dev, d = evidence.get(Kind.DRAFTER), evidence.drafter()
        has_swa = bool(d.swa_layers) if d is not None and d.layers else None
        refs = (ev.ref,) + ((dev.ref,) if dev else ())
        swa = p.swa
        lines = p.swa_lines
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
                                 f"{p.engine} {p.version} runs every drafter layer as full attention{unknown}",
                                 refs=refs, details=lines, observations=obs,
                                 remedy="use an engine release that honours drafter sliding windows (vLLM ≥ 0.26, which runs "
                                        "mixed sliding/full drafters on the V2 model runner; SGLang ≥ 0.5.23)")]
        if swa and swa.startswith("refused-mixed"):
            env = evidence.environment()
            v2 = bool(env and env.v2_runner) or str(p.v2_runner_env or "").strip().lower() in ("1", "true", "yes")
            running = evidence.has(Kind.PROCESS)
            if v2 or (running and has_swa):
                why = ("VLLM_USE_V2_MODEL_RUNNER=1" if v2 else
                       "the server is running with this drafter, which this code allows for mixed layers only on "
                       "the V2 runner")
                return [self.finding(Status.OK, f"{p.engine} {p.version} honours the sliding windows on the "
                                     f"V2 runner ({why})", refs=refs, details=lines,
                                     observations=(Observation("engine-swa:honoured", why, refs),) if has_swa else ())]
            return [self.finding(Status.WARN, f"{p.engine} {p.version} refuses mixed sliding/full drafters "
                                 "unless VLLM_USE_V2_MODEL_RUNNER=1" + unknown, refs=refs, details=lines,
                                 observations=(Observation("engine-swa:refused", "mixed layer types refused", refs),)
                                 if has_swa else ())]
        if swa == "honoured":
            return [self.finding(Status.OK, f"{p.engine} {p.version} reads the drafter's layer_types/sliding_window",
                                 refs=refs, details=lines,
                                 observations=(Observation("engine-swa:honoured", "the drafter code reads layer_types", refs),)
                                 if has_swa else ())]
        return [self.finding(Status.COULD_NOT_CHECK, f"could not check: sliding-window handling unclear ({swa})", refs=refs)]
