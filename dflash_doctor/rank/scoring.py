"""Score causes from the observations checks made, using the knowledge data (causes.toml).

    logit(cause) = prior + Σ fact weights + coverage × Σ curve weights
    confidence   = sigmoid(logit)
    coverage     = 0.6 + 0.4 × (share of the cause's `decided_by` evidence kinds that were collected)

"curve weights" are the rules whose observation family is listed as `circumstantial` in causes.toml
(curve shape, τ against the baseline, trend); facts (configs, engine source, launch, workload,
probes) count in full.

Weights are natural-log likelihood ratios (documented in causes.toml). Every contribution is kept
and shown: for (weight > 0) and against (weight < 0). Coverage shrinks the evidence of a cause whose
deciding evidence is missing, so a diagnosis from a log alone ranks with lower confidence, and the
report says which evidence is missing.

For each cause: τ if fixed (causes.toml `expected_tau`, baselines.toml) and the speed-up
τ_fixed / τ_now at the same k — the draft+verify step costs the same before and after the fix, so
tokens per unit time scale with tokens per step.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from ..evidence import (
    PAYLOAD_TYPES,
    Cause,
    Contribution,
    EvidenceSet,
    Finding,
    Kind,
    Observation,
    Status,
    Verdict,
    kind_of,
)
from ..evidence.acceptance import AcceptanceSummary
from ..evidence.engine_facts import EngineAnalysis
from ..evidence.model_facts import DrafterFacts, TargetFacts
from ..evidence.payloads import EngineId, LaunchConfig, ProbeResult
from ..interpret.baselines import Baselines, PairContext, in_force, pair_context
from ..interpret.method import MethodBelief, infer_method
from ..interpret.readings import level_reading
from ..knowledge.causes import Knowledge

# Two causes whose confidences differ by less than this cannot be told apart by the evidence at hand.
CLOSE = 0.12
# A cause at least this likely is decided: a close second does not make the verdict undecided.
SETTLED = 0.9
# Evidence weight kept when none of a cause's deciding evidence was collected (see module doc).
MIN_COVERAGE = 0.6
# Evidence kinds whose absence the report names when a diagnosis rests on a log alone.
CORROBORATING = (DrafterFacts, TargetFacts, EngineId, LaunchConfig, ProbeResult)

SPEEDUP_FORMULA = (
    "speed-up if fixed = τ_fixed / τ_now at the same k: the draft+verify step costs the same "
    "before and after the fix, so tokens/s scale with tokens/step"
)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass(frozen=True)
class Ranking:
    causes: tuple[Cause, ...]
    verdict: Verdict
    notes: tuple[str, ...]
    # How sure the verdict is and what would change it: the level reading's P(in the band) and its basis, the one
    # missing input that separates the top two causes, and "undecided" when nothing given separates them.
    detail: dict = field(default_factory=dict)


# The inputs a user can add, by evidence kind: (what it is, how to give it), cheapest first (files before a host
# before a GPU).
INPUTS = {
    "drafter": ("the drafter config", "--drafter DIR|REPO_ID"),
    "target": ("the target config", "--target DIR|REPO_ID"),
    "engine-support": ("the engine release", "--engine NAME==VERSION"),
    "engine": ("the engine release", "--engine NAME==VERSION"),
    "launch": ("the launch command", "--launch @serve-command.txt"),
    "workload": ("the workload", "--dataset NAME --temperature T --thinking/--no-thinking"),
    "engine-source": ("the installed engine source", "dflash-doctor check host ssh://USER@HOST"),
    "probe": ("a clean-room probe on a GPU", "dflash-doctor probe --target TARGET --drafter DRAFTER"),
}
_INPUT_COST = {k: i for i, k in enumerate(INPUTS)}


def separating_input(a: Cause, b: Cause, knowledge: Knowledge) -> dict | None:
    """The one missing input that would separate two causes: the cheapest input that decides either of them (one
    that speaks to both first among equals), with the knowledge's separating step where it has one."""
    spec_a, spec_b = knowledge.causes.get(a.id), knowledge.causes.get(b.id)
    missing_a = {m.split(":", 1)[0].strip() for m in a.missing_evidence}
    missing_b = {m.split(":", 1)[0].strip() for m in b.missing_evidence}
    both = set(spec_a.decided_by if spec_a else ()) & set(spec_b.decided_by if spec_b else ())
    candidates = [k for k in (missing_a | missing_b) if k in INPUTS]
    step = knowledge.separator(a.id, b.id)
    if not candidates:
        return {"input": None, "how": None, "step": step} if step else None
    kind = min(candidates, key=lambda k: (_INPUT_COST[k], k not in both, k))
    what, how = INPUTS[kind]
    return {"kind": kind, "input": what, "how": how, "step": step}


def observations_of(findings: list[Finding]) -> list[Observation]:
    seen: dict[str, Observation] = {}
    for f in findings:
        for o in f.observations:
            seen.setdefault(o.name, o)
    return list(seen.values())


def coverage_of(decided_by: tuple[str, ...], evidence: EvidenceSet) -> tuple[float, list[type]]:
    """How much of the evidence that decides a cause is there, and the payload types that are missing."""
    kinds = []
    for name in decided_by:
        try:
            kinds.append(PAYLOAD_TYPES[Kind(name)])
        except ValueError:
            continue
    if not kinds:
        return 1.0, []
    missing = [k for k in kinds if not evidence.has(k)]
    return MIN_COVERAGE + (1.0 - MIN_COVERAGE) * (1 - len(missing) / len(kinds)), missing


def _release_known(evidence: EvidenceSet) -> bool:
    """Whether the engine release is named (a version from a flag, the log or the host) or its source was read."""
    eng = evidence.get(EngineId)
    return bool(eng is not None and eng.version) or evidence.has(EngineAnalysis)


def expected_tau(rule: str, tau_now: float | None, ctx: PairContext, baselines: Baselines) -> float | None:
    if tau_now is None:
        return None
    ref = None
    if ctx.baseline is not None:
        ref = ctx.baseline.tau_at_k(ctx.dataset, ctx.k)
    if rule == "baseline":
        return ref if ref is not None and ref > tau_now else None
    if rule.startswith("effect:"):
        factor = baselines.effect.get(rule.split(":", 1)[1])
        if factor is None:
            return None
        fixed = tau_now * factor
        if ref is not None and ref <= tau_now and ctx.baseline is not None and not ctx.dataset:
            # τ is above the easiest-credited workload's figure: cap at the most the pair was published to reach
            ref = max(ctx.baseline.tau_at_k(name, ctx.k) for name in ctx.baseline.tau)
            if ref <= tau_now:
                return None  # above every published figure: what a fix would add is not known
        return min(fixed, ref) if ref is not None and ref > tau_now else fixed
    return None


def _other_faults_remain(
    causes: list[Cause], knowledge: Knowledge, baselines: Baselines, tau_now: float | None
) -> list[Cause]:
    """Fixing one cause leaves the others: a "baseline" estimate is divided by the effect factor of
    every other likely (≥ 0.5) cause with a known effect size (e.g. the seed's layer offset, ×1.19)."""

    likely = {c.id: c for c in causes if c.confidence >= 0.5}
    out = []
    for c in causes:
        spec = knowledge.causes[c.id]
        if spec.expected_tau == "baseline" and c.expected_tau_if_fixed is not None and tau_now:
            factor, names = 1.0, []
            for oid in likely:
                rule = knowledge.causes[oid].expected_tau
                if oid != c.id and rule.startswith("effect:") and rule[7:] in baselines.effect:
                    factor *= baselines.effect[rule[7:]]
                    names.append(oid)
            if names:
                fixed = max(tau_now, c.expected_tau_if_fixed / factor)
                c = dataclasses.replace(
                    c,
                    expected_tau_if_fixed=fixed,
                    speedup_if_fixed=fixed / tau_now,
                    notes=c.notes + (f"τ if fixed allows for {', '.join(names)} remaining (÷{factor:.2f})",),
                )
        out.append(c)
    return out


@dataclass(frozen=True)
class _Setting:
    """What every cause is scored against: the evidence's observations and the deployment's facts."""

    observations: list[Observation]
    evidence: EvidenceSet
    knowledge: Knowledge
    baselines: Baselines
    ctx: PairContext
    belief: MethodBelief
    tau_now: float | None
    release_known: bool


def _contributions(spec, st: _Setting) -> tuple[list[Contribution], list[Contribution], str]:
    """(for, against, fix) of one cause: every rule of an observation made, weighted by how sure it is; the fix of
    the strongest rule that carries its own (the evidence that points at the cause says what to fix)."""
    pro: list[Contribution] = []
    con: list[Contribution] = []
    fix, fix_weight = spec.fix, 0.0
    for obs in st.observations:
        for rule in st.knowledge.rules_for(obs.name):
            if rule.cause != spec.id:
                continue
            weight = rule.weight * max(0.0, min(1.0, obs.strength))
            if weight == 0:
                continue
            if rule.fix and weight > fix_weight:
                # `{detail}` in a rule's fix: the observation says exactly what to change (a key the release refuses)
                fix, fix_weight = rule.fix.replace("{detail}", obs.detail or ""), weight
            sure = f" ({obs.strength:.0%} sure from the counts)" if obs.strength < 0.995 else ""
            c = Contribution(
                obs.name, weight, (f"{rule.text} — {obs.detail}" if obs.detail else rule.text) + sure, obs.refs
            )
            (pro if weight > 0 else con).append(c)
    return pro, con, fix


def _score_cause(spec, st: _Setting) -> Cause | None:
    applies = st.belief.p(spec.methods) if spec.methods else 1.0
    if applies < 0.01:
        return None  # a cause that cannot exist for this method (no windows to ignore in an EAGLE-3 head)
    pro, con, fix = _contributions(spec, st)
    if not pro and not (spec.suspect and con):
        return None  # nothing points at it (a usual suspect is still answered when evidence speaks against it)
    evidence, knowledge = st.evidence, st.knowledge
    coverage, missing_kinds = coverage_of(spec.decided_by, evidence)
    both = pro + con
    curve = sum(c.weight for c in both if knowledge.is_circumstantial(c.observation))
    facts = sum(c.weight for c in both if not knowledge.is_circumstantial(c.observation))
    logit = spec.prior + math.log(applies) + facts + coverage * curve
    notes = []
    if coverage < 1.0:
        notes.append(
            f"curve evidence weighted ×{coverage:.2f}: {len(missing_kinds)} of {len(spec.decided_by)} "
            f"kinds of deciding evidence are missing"
        )
    if applies < 0.99:
        notes.append(
            f"applies to {', '.join(spec.methods)} only: {applies:.0%} likely for this deployment's "
            f"method ({st.belief.describe()})"
        )
    if spec.silence_note and not evidence.has(DrafterFacts):
        notes.append(spec.silence_note)
    # (a possible known-issue match is the release-unknown case itself: not support of the cause's own)
    own_fact = any(
        not knowledge.is_circumstantial(c.observation) and not c.observation.startswith("known-issue-possible:")
        for c in pro
    )
    if spec.release_prior is not None and not st.release_known and not own_fact:
        logit += math.log(spec.release_prior)
        notes.append(
            f"a bug of some engine releases only: with the release unknown its prior is ×{spec.release_prior:g} "
            "(the share of deployments on an affected release); name it with --engine NAME==VERSION"
        )
    fixed = expected_tau(spec.expected_tau, st.tau_now, st.ctx, st.baselines)
    if fixed is not None:
        ctx = st.ctx
        base = f"{ctx.baseline.id} reference τ at k={ctx.k or ctx.baseline.k}" if ctx.baseline else "no pair baseline"
        notes.append(f"τ if fixed from {spec.expected_tau} ({base})")
    return Cause(
        id=spec.id,
        title=spec.title,
        confidence=sigmoid(logit),
        evidence_for=tuple(sorted(pro, key=lambda c: -c.weight)),
        evidence_against=tuple(sorted(con, key=lambda c: c.weight)),
        fix=fix,
        next_step=spec.next_step,
        missing_evidence=tuple(f"{kind_of(k).value}: {evidence.why_missing(k)}" for k in missing_kinds),
        expected_tau_if_fixed=fixed,
        speedup_if_fixed=fixed / st.tau_now if fixed is not None and st.tau_now else None,
        notes=tuple(notes),
    )


def _undecided(causes: list[Cause], knowledge: Knowledge, detail: dict) -> str | None:
    """Fill the separating input of the top two causes into `detail`; the "could not decide" note when they are
    close and neither is settled."""
    if len(causes) < 2:
        return None
    a, b = causes[0], causes[1]
    sep = separating_input(a, b, knowledge)
    if sep is not None:
        detail["separating_input"] = {"between": [a.id, b.id], **sep}
    if a.confidence - b.confidence >= CLOSE or a.confidence >= SETTLED:
        return None
    step = (sep or {}).get("step")
    if step is None:
        undecided = a if len(a.missing_evidence) >= len(b.missing_evidence) else b
        step = undecided.next_step
    given = f"{sep['input']} (`{sep['how']}`)" if sep and sep.get("input") else None
    detail["undecided"] = {
        "between": [a.id, b.id],
        "confidences": [round(a.confidence, 3), round(b.confidence, 3)],
        "input": sep.get("input") if sep else None,
        "how": sep.get("how") if sep else None,
        "step": step,
    }
    return (
        f"Could not decide between '{a.id}' ({a.confidence:.2f}) and '{b.id}' ({b.confidence:.2f}): "
        + (f"{given} would separate them" if given else "nothing given separates them")
        + f"; to settle it: {step}."
    )


def _insufficient_note(reading) -> str:
    if reading is not None and reading.verdict == "undecided" and reading.dataset_decides:
        return (
            f"Verdict insufficient-data: the counts settle τ ({reading.describe()}), but whether that is healthy "
            f"depends on the workload, which the evidence does not name ({reading.workloads()}). Name it with "
            "--dataset."
        )
    if reading is not None and reading.verdict == "undecided" and reading.method_decides:
        fits = ", ".join(f"{m} {'yes' if ph >= 0.5 else 'no'}" for m, pm, ph in reading.by_method if pm >= 0.1)
        return (
            f"Verdict insufficient-data: the counts settle τ ({reading.describe()}), but whether that is "
            f"healthy depends on the method, which the evidence does not name (in the band for: {fits}). "
            "Name it with --launch or --drafter."
        )
    if reading is not None and reading.verdict == "undecided":
        more = (
            f" About {reading.drafts_to_settle:,} drafts at this τ would settle it"
            if reading.drafts_to_settle
            else " A pair baseline (--drafter) or a probe would settle it"
        )
        return (
            f"Verdict insufficient-data: the counts are consistent with both a healthy and an impaired "
            f"drafter ({reading.describe()}; P(in the band) {reading.p_healthy:.0%}).{more}."
        )
    return (
        "Verdict insufficient-data: no check failed and no cause is likely, but there is no healthy "
        f"band to judge τ against ({reading.describe() if reading else 'no acceptance'}); name the "
        "drafter (--drafter) or the method (--launch), or run `dflash-doctor probe`."
    )


def _verdict(findings: list[Finding], causes: list[Cause], acceptance, reading) -> Verdict:
    failing = any(f.status == Status.FAIL for f in findings)
    strong = any(c.confidence >= 0.5 for c in causes)
    level = reading.verdict if reading is not None else None
    if acceptance is None:
        return Verdict.PROBLEM if (failing or strong) else Verdict.INSUFFICIENT_DATA
    if level == "problem":
        return Verdict.PROBLEM
    if level == "healthy":
        return Verdict.PROBLEM if (failing or strong) else Verdict.HEALTHY
    return Verdict.PROBLEM if (failing or strong) else Verdict.INSUFFICIENT_DATA


def _general_notes(evidence: EvidenceSet, causes: list[Cause], names: set[str], reading, belief) -> list[str]:
    notes: list[str] = []
    acceptance = evidence.get(AcceptanceSummary)
    if any(c.expected_tau_if_fixed is not None for c in causes):
        notes.append(f"Expected τ if fixed: {SPEEDUP_FORMULA}.")
    absent = [k for k in CORROBORATING if not evidence.has(k)]
    if acceptance is not None and len(absent) >= 3:
        notes.append(
            "Ranked mostly from the acceptance figures, with lower confidence: missing "
            + "; ".join(f"{kind_of(k).value} ({evidence.why_missing(k)})" for k in absent)
            + "."
        )
    if acceptance is not None and not evidence.has(DrafterFacts) and "signature:cliff-after-first" in names:
        notes.append(
            "Silence is not evidence: the log says nothing about sliding windows, layer taps or RoPE "
            "because engines do not log them. Give --drafter and --engine to decide those causes."
        )
    if reading is not None:
        notes.append(f"Method: {belief.describe()}" + (f" — {belief.conflict}" if belief.conflict else "") + ".")
    return notes


def rank(
    findings: list[Finding], evidence: EvidenceSet, knowledge: Knowledge, baselines: Baselines | None = None
) -> Ranking:
    baselines = baselines or in_force(evidence)
    observations = observations_of(findings)
    acceptance = evidence.get(AcceptanceSummary)
    tau_now = acceptance.mean_acceptance_length if acceptance is not None else None
    belief = infer_method(evidence)
    reading = level_reading(evidence)
    st = _Setting(
        observations,
        evidence,
        knowledge,
        baselines,
        pair_context(evidence, baselines),
        belief,
        tau_now,
        _release_known(evidence),
    )
    causes = [c for c in (_score_cause(spec, st) for spec in knowledge.causes.values()) if c is not None]
    causes.sort(key=lambda c: (-c.confidence, c.id))
    causes = _other_faults_remain(causes, knowledge, baselines, tau_now)

    detail: dict = {}
    undecided_note = _undecided(causes, knowledge, detail)
    notes = _general_notes(evidence, causes, {o.name for o in observations}, reading, belief)
    verdict = _verdict(findings, causes, acceptance, reading)
    if verdict == Verdict.INSUFFICIENT_DATA and acceptance is not None:
        notes.append(_insufficient_note(reading))
    if reading is not None:
        detail["level"] = {
            "reading": reading.verdict,
            "p_healthy": None if reading.p_healthy is None else round(reading.p_healthy, 3),
            "basis": reading.basis,
            "what": reading.describe(),
            "decides": "workload" if reading.dataset_decides else "method" if reading.method_decides else None,
            "workloads": reading.workloads() if reading.by_dataset else None,
        }
        if verdict == Verdict.HEALTHY and reading.p_healthy is not None:
            detail["sure"] = round(reading.p_healthy, 3)
    loose = [o.detail for o in observations if o.name in ("verifier:lossy", "verifier:block")]
    if loose and acceptance is not None:
        detail["caveat"] = (
            f"drafts verified by {'; '.join(loose)}: τ is above what the standard lossless verifier gives, and the "
            "bands are lossless, token-by-token figures"
        )
    if verdict == Verdict.PROBLEM or (verdict == Verdict.INSUFFICIENT_DATA and acceptance is not None):
        causes_out: tuple[Cause, ...] = tuple(causes)
    else:
        causes_out = tuple(c for c in causes if c.confidence >= 0.5)
    if verdict != Verdict.PROBLEM:
        detail.pop("undecided", None)
    elif undecided_note:
        notes.insert(0, undecided_note)
    return Ranking(causes=causes_out, verdict=verdict, notes=tuple(notes), detail=detail)
