"""Is this deployment hit by a known, fixed engine bug? (rank/known_issues: engine, release, runner,
method, drafter and topology facts against every entry of the database).

Observations, one per implied cause at the strongest match quality (weights in causes.toml):
  known-issue:CAUSE            certain: the release is affected and every condition is known to hold
  known-issue-likely:CAUSE     the release is affected, one condition is unknown
  known-issue-possible:CAUSE   the release, or several conditions, unknown; nothing known rules it out
  known-issue-cited:CAUSE      an entry the engine-support table already decides (no weight here)
A certain or likely match whose entry says the bug leaves (almost) no draft accepted is downgraded one
level when the measured acceptance shows real acceptance: the symptom does not fit.
"""

from __future__ import annotations

import json
from typing import Any

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status
from dflash_doctor.models.launch_view import launch_field, launch_k, launch_method
from dflash_doctor.rank.knowledge import CAUSE_IDS
from dflash_doctor.rank.known_issues import (Deployment, Match, MatchQuality, default_known_issues,
                                             match_deployment, normalise_engine)

OBSERVATION = {MatchQuality.CERTAIN: "known-issue", MatchQuality.LIKELY: "known-issue-likely",
               MatchQuality.POSSIBLE: "known-issue-possible"}
CITED = "known-issue-cited"
# Symptoms that say the drafter is as good as dead; a τ − 1 of at least this much contradicts them.
DEAD_SYMPTOMS = {"all-zero", "cliff-after-first"}
ALIVE_EXCESS = 0.5
_DOWN = {MatchQuality.CERTAIN: MatchQuality.LIKELY, MatchQuality.LIKELY: MatchQuality.POSSIBLE,
         MatchQuality.POSSIBLE: MatchQuality.POSSIBLE}
_ROTATION_WORDS = ("quarot", "spinquant", "rotation", "rotate", "hadamard", "rotary_quant")
_MTP_WORDS = ("mtp", "nextn", "draft")


def _launch_values(evidence: EvidenceSet) -> tuple[dict[str, Any], dict[str, str], str, str | None]:
    """(args, env, text, ref) of the most recent launch evidence; empty when none."""
    ev = evidence.get(Kind.LAUNCH)
    if ev is None:
        return {}, {}, "", None
    v = evidence.launch()
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


def deployment_from_evidence(evidence: EvidenceSet) -> Deployment:
    """Everything the evidence says about the facts the known issues are conditioned on."""
    facts: dict[str, Any] = {}
    sources: dict[str, str] = {}

    def put(name: str, value: Any, ref: str | None) -> None:
        if value is None or name in facts:
            return
        facts[name] = value
        if ref:
            sources[name] = ref

    eng_ev, eng = evidence.get(Kind.ENGINE), evidence.engine()
    st = evidence.startup()
    engine = eng.name if eng else None
    version = eng.version if eng else None
    if engine is None and st is not None:
        engine, version = st.engine, st.version
    if eng_ev is not None:
        sources["engine"] = sources["version"] = eng_ev.ref

    dev, d = evidence.get(Kind.DRAFTER), evidence.drafter()
    method, _, mev = launch_method(evidence)
    if method is None and d is not None and d.method not in (None, "unknown"):
        method, mev = d.method, dev
    launch = evidence.launch()
    spec = launch.speculative if launch is not None else None
    if method == "eagle3" and isinstance(spec, dict) and spec.get("parallel_drafting") is True:
        method = "p-eagle"  # vLLM runs P-EAGLE drafters as eagle3 with parallel drafting
    if method in (None, "eagle3", "unknown") and d is not None and any(
            "peagle" in a.lower() for a in d.architectures):
        method, mev = "p-eagle", dev
    if mev is not None:
        sources["method"] = mev.ref

    # runner: the launch's own environment, then the host process environment
    args, env, text, lref = _launch_values(evidence)
    rules = default_known_issues().engines.get(normalise_engine(engine) or "")
    runner = runner_source = None
    if rules is not None and rules.runner_env:
        host_env = evidence.environment()
        for where, vars_, ref in (("launch", env, lref),
                                  ("host environment", dict(host_env.variables) if host_env else {},
                                   evidence.ref(Kind.ENVIRONMENT))):
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
        cp = max(_int_arg(args, "prefill_context_parallel_size", "decode_context_parallel_size", "pcp_size",
                          "dcp_size") or 1, 1)
        put("context_parallel", cp > 1, lref)
        put("cuda_graphs", not (args.get("enforce_eager") or args.get("disable_cuda_graph")), lref)
        rsm = (launch.speculative or {}).get("rejection_sample_method")
        if isinstance(rsm, str):
            put("rejection_sample_method", rsm.lower(), lref)

    w = evidence.workload()
    if w is not None and w.temperature is not None:
        put("temperature_positive", w.temperature > 0, evidence.ref(Kind.WORKLOAD))

    k, kev = launch_k(evidence)
    acc = evidence.get(Kind.ACCEPTANCE)
    if k is None and acc is not None and acc.value.k is not None:
        k, kev = acc.value.k, acc
    put("k", k, kev.ref if kev else None)

    tev, t = evidence.get(Kind.TARGET), evidence.target()
    if d is not None:
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
                excluded = [x for key in ("ignore", "exclude_modules", "modules_to_not_convert", "ignored_layers")
                            for x in (quant.get(key) or []) if isinstance(x, str)]
                put("mtp_quantized", not any(wd in x.lower() for x in excluded for wd in _MTP_WORDS), tev.ref)
    if "target_family" not in facts:
        model = launch_field(evidence, "model")[0]
        if isinstance(model, str) and model:
            put("target_family", model.lower(), lref)

    return Deployment(engine=normalise_engine(engine), version=version, method=method, runner=runner,
                      runner_source=runner_source, facts=facts, sources=sources)


def _symptom_conflict(m: Match, evidence: EvidenceSet) -> str | None:
    acc = evidence.acceptance()
    tau = acc.mean_acceptance_length if acc is not None else None
    if not m.issue.symptoms or not set(m.issue.symptoms) <= DEAD_SYMPTOMS or not isinstance(tau, (int, float)):
        return None
    if tau - 1.0 >= ALIVE_EXCESS:
        return (f"the bug leaves almost no draft accepted, but τ is {tau:.2f}: the symptom does not fit, "
                "so the match counts one level weaker")
    return None


class KnownIssues(Check):
    id = "known-issues"
    area = "engine"
    title = "Known engine bugs for this release, runner, method and topology"
    needs = (Kind.ENGINE,)
    wants = (Kind.LAUNCH, Kind.STARTUP, Kind.DRAFTER, Kind.TARGET, Kind.WORKLOAD, Kind.ENVIRONMENT,
             Kind.ACCEPTANCE, Kind.ENGINE_SUPPORT)
    observations = tuple(f"{family}:{cause}" for family in (*OBSERVATION.values(), CITED) for cause in CAUSE_IDS)

    def run(self, evidence: EvidenceSet):
        db = default_known_issues()
        dep = deployment_from_evidence(evidence)
        eref = evidence.get(Kind.ENGINE).ref
        if dep.engine not in db.engines:
            return [self.finding(Status.COULD_NOT_CHECK, f"could not check: no known-issues data for engine "
                                 f"{dep.engine or 'unknown'} (known: {', '.join(sorted(db.engines))})", refs=(eref,))]
        matches = match_deployment(db, dep)
        checked = len(db.for_engine(dep.engine))
        if not matches:
            why = "" if dep.version else " (release unknown)"
            return [self.finding(Status.OK, f"none of the {checked} known {dep.engine} issues matches "
                                 f"{dep.describe()}{why}", refs=(eref,))]
        table = evidence.has(Kind.ENGINE_SUPPORT)
        findings = []
        best: dict[str, tuple[MatchQuality, list[str], set[str]]] = {}
        cited: dict[str, tuple[list[str], set[str]]] = {}
        for m in matches:
            quality = m.quality
            note = _symptom_conflict(m, evidence) if quality != MatchQuality.POSSIBLE else None
            if note:
                quality = _DOWN[quality]
            name = f"{m.issue.reference()}, fixed in {m.issue.fixed_in}"
            refs = set(m.refs) | {eref}
            msg = f"{quality.phrase()}: {m.issue.title} — matches {name}"
            details = [f"{m.issue.link}", f"conditions met: {'; '.join(m.met) or 'none'}"]
            if m.unknown:
                details.append(f"unknown: {'; '.join(m.unknown)}")
            if note:
                details.append(note)
            details.append(f"fixed-in read from the release: {m.issue.verified}")
            status = Status.FAIL if quality == MatchQuality.CERTAIN else Status.WARN
            covered = m.issue.covered_by == "engine-support" and table and quality != MatchQuality.POSSIBLE
            text = f"{m.issue.title} ({name}; {quality.value} match)"
            if covered:
                c = cited.setdefault(m.issue.cause, ([], set()))
                c[0].append(text)
                c[1].update(refs)
                details.append("the engine-support check weighs this bug; named here, not counted twice")
            else:
                prev = best.get(m.issue.cause)
                if prev is None or quality.rank < prev[0].rank:
                    best[m.issue.cause] = (quality, [text], refs)
                elif quality == prev[0]:
                    prev[1].append(text)
                    prev[2].update(refs)
            findings.append(self.finding(status, msg, refs=tuple(sorted(refs)), remedy=m.issue.remedy(),
                                         details=tuple(details)))
        obs = [Observation(f"{OBSERVATION[q]}:{cause}", "; ".join(texts), tuple(sorted(refs)))
               for cause, (q, texts, refs) in sorted(best.items())]
        obs += [Observation(f"{CITED}:{cause}", "; ".join(texts), tuple(sorted(refs)))
                for cause, (texts, refs) in sorted(cited.items())]
        # the observations ride on the first finding: one set per check run
        first = findings[0]
        findings[0] = type(first)(first.check_id, first.status, first.message, first.refs, first.remedy,
                                  first.details, tuple(obs))
        return findings
