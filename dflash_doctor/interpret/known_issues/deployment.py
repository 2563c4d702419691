"""The deployment a known issue is matched against, read from the evidence: engine, release, method,
runner and every fact the entries are conditioned on (used by the known-issues check and the fix plan)."""

from __future__ import annotations

import json
from typing import Any

from ...evidence import EvidenceSet
from ...evidence.acceptance import AcceptanceSummary, StartupFacts
from ...evidence.model_facts import DrafterFacts, TargetFacts
from ...evidence.payloads import EngineId, Environment, LaunchConfig, Workload
from ...models.launch_view import launch_field, launch_k, launch_method, launch_parallel_drafting
from .conditions import Deployment, normalise_engine, normalise_method
from .load import default_known_issues

_ROTATION_WORDS = ("quarot", "spinquant", "rotation", "rotate", "hadamard", "rotary_quant")
_MTP_WORDS = ("mtp", "nextn", "draft")


def _launch_values(evidence: EvidenceSet) -> tuple[dict[str, Any], dict[str, str], str, str | None]:
    """(args, env, text, ref) of the most recent launch evidence; empty when none."""
    ev = evidence.item(LaunchConfig)
    if ev is None:
        return {}, {}, "", None
    v = evidence.get(LaunchConfig)
    assert v is not None  # the item above carries it
    args, env, words, spec = v.args or {}, v.env or {}, v.argv, v.speculative or {}
    text = " ".join(str(w) for w in words) + " " + (v.spec_text or "") + " " + json.dumps(spec, default=str)
    if not words and args:
        text += " " + " ".join(f"--{k} {val}" for k, val in args.items())
    return dict(args), dict(env), text.lower(), ev.ref


def _int_arg(args: dict, *names: str) -> int | None:
    for n in names:
        v = args.get(n)
        if v is None:
            continue
        try:
            return int(v)
        except (TypeError, ValueError):
            continue
    return None


def _truthy(v: Any) -> bool:
    return v is True or str(v).strip().lower() in ("1", "true", "yes", "on", "")


def deployment_from_evidence(evidence: EvidenceSet) -> Deployment:  # noqa: C901 -- one branch per fact the known issues are conditioned on
    """Everything the evidence says about the facts the known issues are conditioned on."""
    facts: dict[str, Any] = {}
    sources: dict[str, str] = {}

    def put(name: str, value: Any, ref: str | None) -> None:
        if value is None or name in facts:
            return
        facts[name] = value
        if ref:
            sources[name] = ref

    eng_ev, eng = evidence.item(EngineId), evidence.get(EngineId)
    st = evidence.get(StartupFacts)
    engine = eng.name if eng else None
    version = eng.version if eng else None
    if engine is None and st is not None:
        engine, version = st.engine, st.version
    if eng_ev is not None:
        sources["engine"] = sources["version"] = eng_ev.ref

    dev, d = evidence.item(DrafterFacts), evidence.get(DrafterFacts)
    method, _, mev = launch_method(evidence)
    if method is None and d is not None and d.method not in (None, "unknown"):
        method, mev = normalise_method(d.method), dev  # (the readers' `peagle` is the issues' `p-eagle`)
    if method == "eagle3" and launch_parallel_drafting(evidence):
        method = "p-eagle"  # vLLM runs P-EAGLE drafters as eagle3 with parallel drafting
    if method in (None, "eagle3", "unknown") and d is not None and any("peagle" in a.lower() for a in d.architectures):
        method, mev = "p-eagle", dev
    if mev is not None:
        sources["method"] = mev.ref

    # runner: the launch's own environment, then the host process environment
    args, env, text, lref = _launch_values(evidence)
    rules = default_known_issues().engines.get(normalise_engine(engine) or "")
    runner = runner_source = None
    if rules is not None and rules.runner_env:
        host_env = evidence.get(Environment)
        for where, vars_, ref in (
            ("launch", env, lref),
            ("host environment", dict(host_env.variables) if host_env else {}, evidence.ref(Environment)),
        ):
            val = vars_.get(rules.runner_env)
            if val is not None and str(val).strip():
                runner = "v2" if _truthy(val) and str(val).strip() != "" else "v1"
                runner_source = f"{rules.runner_env}={val} ({where})"
                if ref:
                    sources["runner"] = ref
                break

    if lref is not None:
        put("launch_text", text, lref)
        kv = args.get("kv_transfer_config")
        mode = args.get("disaggregation_mode")
        put("pd_disaggregation", bool(kv) or (isinstance(mode, str) and mode.lower() in ("prefill", "decode")), lref)
        put("dp_attention", bool(args.get("enable_dp_attention")), lref)
        dp = _int_arg(args, "data_parallel_size", "dp_size", "dp")
        put("data_parallel", (dp or 1) > 1, lref)
        cp = max(
            _int_arg(args, "prefill_context_parallel_size", "decode_context_parallel_size", "pcp_size", "dcp_size")
            or 1,
            1,
        )
        put("context_parallel", cp > 1, lref)
        put("cuda_graphs", not (args.get("enforce_eager") or args.get("disable_cuda_graph")), lref)
        launch = evidence.get(LaunchConfig)
        rsm = ((launch.speculative if launch is not None else None) or {}).get("rejection_sample_method")
        if isinstance(rsm, str):
            put("rejection_sample_method", rsm.lower(), lref)

    w = evidence.get(Workload)
    if w is not None and w.temperature is not None:
        put("temperature_positive", w.temperature > 0, evidence.ref(Workload))

    k, kev = launch_k(evidence)
    acc = evidence.item(AcceptanceSummary)
    if k is None and acc is not None and acc.value.k is not None:
        k, kev = acc.value.k, acc
    put("k", k, kev.ref if kev else None)

    tev, t = evidence.item(TargetFacts), evidence.get(TargetFacts)
    if d is not None:
        assert dev is not None  # d is dev's value
        put("drafter_speculators_format", bool(d.speculators_format), dev.ref)
        kinds = [x.attention for x in d.layers]
        if kinds:
            sliding = sum(1 for x in kinds if x == "sliding")
            put("drafter_swa", "none" if sliding == 0 else ("uniform" if sliding == len(kinds) else "mixed"), dev.ref)
        wf = d.weights
        tensors = wf.tensors if wf is not None else None
        complete = bool(wf.complete) if wf is not None else False
        if tensors and complete:
            names = list(tensors)
            put("drafter_ships_lm_head", any(n.endswith("lm_head.weight") for n in names), dev.ref)
            put("drafter_ships_embed_tokens", any(n.endswith("embed_tokens.weight") for n in names), dev.ref)
            if method == "mtp" and any("weight_scale" in n or n.endswith(".scale") for n in names):
                put("mtp_quantized", True, dev.ref)
        vocab, draft_vocab = d.vocab_size, d.draft_vocab_size
        if isinstance(vocab, int) and isinstance(draft_vocab, int):
            put("draft_vocab_reduced", draft_vocab < vocab, dev.ref)
        elif isinstance(vocab, int):
            put("draft_vocab_reduced", False, dev.ref)
        tvocab = t.vocab_size if t is not None else None
        if isinstance(vocab, int) and isinstance(tvocab, int) and not facts.get("draft_vocab_reduced"):
            put("vocab_padded", vocab != tvocab, dev.ref)
    if t is not None:
        assert tev is not None  # t is tev's value
        archs = t.architectures
        put("target_multimodal", any(a.endswith("ForConditionalGeneration") for a in archs), tev.ref)
        family = " ".join([*(a.lower() for a in archs), (t.model_type or "").lower(), (t.source or "").lower()])
        put("target_family", family, tev.ref)
        quant = t.quantization
        if quant is None:
            put("target_rotated_quant", False, tev.ref)
            if method == "mtp":
                put("mtp_quantized", False, tev.ref)
        elif isinstance(quant, dict):
            qtext = json.dumps(quant, default=str).lower()
            put("target_rotated_quant", any(wd in qtext for wd in _ROTATION_WORDS), tev.ref)
            if method == "mtp":
                excluded = [
                    x
                    for key in ("ignore", "exclude_modules", "modules_to_not_convert", "ignored_layers")
                    for x in (quant.get(key) or [])
                    if isinstance(x, str)
                ]
                put("mtp_quantized", not any(wd in x.lower() for x in excluded for wd in _MTP_WORDS), tev.ref)
    if "target_family" not in facts:
        model = launch_field(evidence, "model")[0]
        if isinstance(model, str) and model:
            put("target_family", model.lower(), lref)

    return Deployment(
        engine=normalise_engine(engine),
        version=version,
        method=method,
        runner=runner,
        runner_source=runner_source,
        facts=facts,
        sources=sources,
    )
