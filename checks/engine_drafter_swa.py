"""Does the named engine release honour the drafter's sliding-window layers? (the release table's answer;
engine-source-swa answers from the installed source when a host was read)"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status
from dflash_doctor.models.facts import layer_span


class EngineDrafterSwa(Check):
    id = "engine-drafter-swa"
    area = "engine"
    title = "Engine honours the drafter's sliding windows"
    needs = (Kind.DRAFTER, Kind.ENGINE_SUPPORT)
    wants = (Kind.ENVIRONMENT, Kind.ACCEPTANCE, Kind.ENGINE_SOURCE)
    observations = ("engine-swa:ignored", "engine-swa:honoured", "engine-swa:refused")

    def run(self, evidence: EvidenceSet):
        dev, sev = evidence.get(Kind.DRAFTER), evidence.get(Kind.ENGINE_SUPPORT)
        d, row = evidence.drafter(), evidence.engine_support()
        refs = (dev.ref, sev.ref)
        src = evidence.engine_source()
        if src is not None and src.swa != "no-dflash":
            # The installed source on the host outranks the release table (patched or source installs differ).
            return [self.finding(Status.NOT_APPLICABLE, f"the installed engine source was read (drafter SWA: {src.swa}); "
                                 "engine-source-swa decides, not the release table",
                                 refs=refs + (evidence.ref(Kind.ENGINE_SOURCE),))]
        from dflash_doctor.models.architectures import support_from_evidence
        arch = support_from_evidence(evidence)
        if arch is not None and arch.loadable is False:
            return [self.finding(Status.NOT_APPLICABLE, f"does not apply: {arch.sentence}", refs=refs)]
        if not d.is_dflash:
            return [self.finding(Status.NOT_APPLICABLE, f"the drafter is {d.method}, not DFlash: the DFlash sliding-window "
                                 "support of the engine does not apply", refs=refs)]
        if not d.layers:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the drafter's layers are unknown", refs=refs)]
        env = evidence.environment()
        outcome, sentence = row.swa_outcome(d.swa_mix, env.v2_runner if env else None)
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
