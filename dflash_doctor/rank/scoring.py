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
from dataclasses import dataclass

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
from ..evidence.model_facts import DrafterFacts, TargetFacts
from ..evidence.payloads import EngineId, LaunchConfig, ProbeResult
from ..interpret.baselines import Baselines, PairContext, in_force, pair_context
from ..interpret.method import infer_method
from ..interpret.readings import level_reading
from ..knowledge.causes import Knowledge

# Two causes whose confidences differ by less than this cannot be told apart by the evidence at hand.
CLOSE = 0.12
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


def rank(
    findings: list[Finding], evidence: EvidenceSet, knowledge: Knowledge, baselines: Baselines | None = None
) -> Ranking:
    baselines = baselines or in_force(evidence)
    observations = observations_of(findings)
    names = {o.name for o in observations}
    acceptance = evidence.get(AcceptanceSummary)
    tau_now = acceptance.mean_acceptance_length if acceptance is not None else None
    ctx = pair_context(evidence, baselines)
    belief = infer_method(evidence)
    reading = level_reading(evidence)
    causes: list[Cause] = []
    for spec in knowledge.causes.values():
        applies = belief.p(spec.methods) if spec.methods else 1.0
        if applies < 0.01:
            continue  # a cause that cannot exist for this method (no windows to ignore in an EAGLE-3 head)
        pro: list[Contribution] = []
        con: list[Contribution] = []
        for obs in observations:
            for rule in knowledge.rules_for(obs.name):
                if rule.cause != spec.id:
                    continue
                weight = rule.weight * max(0.0, min(1.0, obs.strength))
                if weight == 0:
                    continue
                sure = f" ({obs.strength:.0%} sure from the counts)" if obs.strength < 0.995 else ""
                c = Contribution(
                    obs.name, weight, (f"{rule.text} — {obs.detail}" if obs.detail else rule.text) + sure, obs.refs
                )
                (pro if weight > 0 else con).append(c)
        if not pro and not (spec.suspect and con):
            continue  # nothing points at it (a usual suspect is still answered when evidence speaks against it)
        coverage, missing_kinds = coverage_of(spec.decided_by, evidence)
        both = pro + con
        curve = sum(c.weight for c in both if knowledge.is_circumstantial(c.observation))
        facts = sum(c.weight for c in both if not knowledge.is_circumstantial(c.observation))
        logit = spec.prior + math.log(applies) + facts + coverage * curve
        missing = [f"{kind_of(k).value}: {evidence.why_missing(k)}" for k in missing_kinds]
        notes = []
        if coverage < 1.0:
            notes.append(
                f"curve evidence weighted ×{coverage:.2f}: {len(missing_kinds)} of {len(spec.decided_by)} "
                f"kinds of deciding evidence are missing"
            )
        if applies < 0.99:
            notes.append(
                f"applies to {', '.join(spec.methods)} only: {applies:.0%} likely for this deployment's "
                f"method ({belief.describe()})"
            )
        if spec.silence_note and not evidence.has(DrafterFacts):
            notes.append(spec.silence_note)
        fixed = expected_tau(spec.expected_tau, tau_now, ctx, baselines)
        speedup = fixed / tau_now if fixed is not None and tau_now else None
        if fixed is not None:
            base = (
                f"{ctx.baseline.id} reference τ at k={ctx.k or ctx.baseline.k}" if ctx.baseline else "no pair baseline"
            )
            notes.append(f"τ if fixed from {spec.expected_tau} ({base})")
        causes.append(
            Cause(
                id=spec.id,
                title=spec.title,
                confidence=sigmoid(logit),
                evidence_for=tuple(sorted(pro, key=lambda c: -c.weight)),
                evidence_against=tuple(sorted(con, key=lambda c: c.weight)),
                fix=spec.fix,
                next_step=spec.next_step,
                missing_evidence=tuple(missing),
                expected_tau_if_fixed=fixed,
                speedup_if_fixed=speedup,
                notes=tuple(notes),
            )
        )
    causes.sort(key=lambda c: (-c.confidence, c.id))
    causes = _other_faults_remain(causes, knowledge, baselines, tau_now)

    notes: list[str] = []
    if len(causes) >= 2 and causes[0].confidence - causes[1].confidence < CLOSE:
        a, b = causes[0], causes[1]
        step = knowledge.separator(a.id, b.id)
        if step is None:
            undecided = a if len(a.missing_evidence) >= len(b.missing_evidence) else b
            step = undecided.next_step
        notes.append(
            f"The evidence does not separate '{a.id}' ({a.confidence:.2f}) from '{b.id}' "
            f"({b.confidence:.2f}). To separate them: {step}."
        )

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

    failing = [f for f in findings if f.status == Status.FAIL]
    strong = [c for c in causes if c.confidence >= 0.5]
    level = reading.verdict if reading is not None else None
    if acceptance is None:
        verdict = Verdict.PROBLEM if (failing or strong) else Verdict.INSUFFICIENT_DATA
    elif level == "problem":
        verdict = Verdict.PROBLEM
    elif level == "healthy":
        verdict = Verdict.PROBLEM if (failing or strong) else Verdict.HEALTHY
    elif failing or strong:
        verdict = Verdict.PROBLEM
    else:
        verdict = Verdict.INSUFFICIENT_DATA
        if level == "undecided" and reading.method_decides:
            fits = ", ".join(f"{m} {'yes' if ph >= 0.5 else 'no'}" for m, pm, ph in reading.by_method if pm >= 0.1)
            notes.append(
                f"Verdict insufficient-data: the counts settle τ ({reading.describe()}), but whether that is "
                f"healthy depends on the method, which the evidence does not name (in the band for: {fits}). "
                "Name it with --launch or --drafter."
            )
        elif level == "undecided":
            more = (
                f" About {reading.drafts_to_settle:,} drafts at this τ would settle it"
                if reading.drafts_to_settle
                else " A pair baseline (--drafter) or a probe would settle it"
            )
            notes.append(
                f"Verdict insufficient-data: the counts are consistent with both a healthy and an impaired "
                f"drafter ({reading.describe()}; P(in the band) {reading.p_healthy:.0%}).{more}."
            )
        else:
            notes.append(
                "Verdict insufficient-data: no check failed and no cause is likely, but there is no healthy "
                f"band to judge τ against ({reading.describe() if reading else 'no acceptance'}); name the "
                "drafter (--drafter) or the method (--launch), or run `dflash-doctor probe`."
            )
    if verdict == Verdict.PROBLEM or (verdict == Verdict.INSUFFICIENT_DATA and acceptance is not None):
        causes_out: tuple[Cause, ...] = tuple(causes)
    else:
        causes_out = tuple(c for c in causes if c.confidence >= 0.5)
    return Ranking(causes=causes_out, verdict=verdict, notes=tuple(notes))
