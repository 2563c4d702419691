"""Sliding-window drafter layers, and whether the named engine release honours them.

The seed case: a drafter with 4 sliding layers (window 2048) served by an engine that silently runs
them as full, non-causal attention. Neither fact appears in any log; both come from the drafter's
config and the engine-support table.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status
from dflash_doctor.models.facts import layer_span


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
    title = "Engine honours the drafter's sliding windows"
    needs = (Kind.DRAFTER, Kind.ENGINE_SUPPORT)
    wants = (Kind.ENVIRONMENT, Kind.ACCEPTANCE, Kind.ENGINE_SOURCE)

    def run(self, evidence: EvidenceSet):
        dev, sev = evidence.get(Kind.DRAFTER), evidence.get(Kind.ENGINE_SUPPORT)
        d, row = dev.value, sev.value
        refs = (dev.ref, sev.ref)
        src = evidence.get(Kind.ENGINE_SOURCE)
        src_swa = str(src.value.get("swa") or "") if src is not None and isinstance(src.value, dict) else ""
        if src_swa in ("ignored", "honoured") or src_swa.startswith("refused-mixed"):
            # The installed source on the host outranks the release table (patched or source installs differ).
            return [self.finding(Status.OK, f"the installed engine source was read (drafter SWA: {src.value['swa']}); "
                                 "engine-source-swa decides, not the release table", refs=refs + (src.ref,))]
        from dflash_doctor.models.architectures import support_from_evidence
        arch = support_from_evidence(evidence)
        if arch is not None and arch.loadable is False:
            return [self.finding(Status.OK, f"does not apply: {arch.sentence}", refs=refs)]
        if not d.is_dflash:
            return [self.finding(Status.OK, f"the drafter is {d.method}, not DFlash: the DFlash sliding-window "
                                 "support of the engine does not apply", refs=refs)]
        if not d.layers:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the drafter's layers are unknown", refs=refs)]
        outcome, sentence = row.swa_outcome(d.swa_mix, _v2_runner(evidence))
        if d.swa_mix == "none":
            return [self.finding(Status.OK, sentence, refs=refs)]
        span = f"layers {layer_span(d.swa_layers)} are sliding (window {d.sliding_window})"
        if outcome is None:
            return [self.finding(Status.COULD_NOT_CHECK, f"could not check: {span}; {sentence}", refs=refs)]
        obs = (Observation(f"engine-swa:{outcome}", sentence, refs),)
        if outcome == "ignored":
            return [self.finding(
                Status.FAIL, f"{span}, but {row.engine} {row.version} runs them as full attention "
                             "(non-causal, no window): acceptance drops, increasingly past the window",
                refs=refs, observations=obs, details=tuple(f"{row.engine} {row.verified} source: {x}" for x in row.source_about("sliding", "causal")) if row.verified else (),
                remedy="Upgrade to an engine that honours drafter layer_types (vLLM >= 0.26, which runs a mixed "
                       "sliding/full drafter on the V2 model runner — do not set VLLM_USE_V2_MODEL_RUNNER=0), "
                       "or use a drafter without sliding layers.")]
        if outcome == "refused":
            return [self.finding(Status.FAIL, f"{span}; {sentence}", refs=refs, observations=obs,
                                 remedy="On vLLM >= 0.26 unset VLLM_USE_V2_MODEL_RUNNER (or set it to 1); on 0.25 upgrade to >= 0.26.")]
        return [self.finding(Status.OK, f"{span}; {sentence}", refs=refs, observations=obs)]


def _v2_runner(evidence: EvidenceSet) -> bool | None:
    env = evidence.value(Kind.ENVIRONMENT)
    val = None
    if isinstance(env, dict):
        val = env.get("VLLM_USE_V2_MODEL_RUNNER")
    elif env is not None:
        vars_ = getattr(env, "variables", None) or getattr(env, "env", None)
        if isinstance(vars_, dict):
            val = vars_.get("VLLM_USE_V2_MODEL_RUNNER")
    if val is None:
        return None
    return str(val).strip().lower() in ("1", "true", "yes")
