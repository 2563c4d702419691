"""Score causes from the observations checks made, using the knowledge data.

confidence(cause) = sigmoid(prior + Σ weight of every rule whose observation was made).
Every contribution is kept and shown (for: weight > 0, against: weight < 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..evidence import Cause, Contribution, EvidenceSet, Finding, Kind, Observation, Status, Verdict
from .knowledge import Knowledge

# Two causes whose confidences differ by less than this cannot be told apart by the evidence at hand.
CLOSE = 0.12


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


def rank(findings: list[Finding], evidence: EvidenceSet, knowledge: Knowledge) -> Ranking:
    observations = observations_of(findings)
    names = {o.name for o in observations}
    causes: list[Cause] = []
    for spec in knowledge.causes.values():
        pro: list[Contribution] = []
        con: list[Contribution] = []
        for obs in observations:
            for rule in knowledge.rules_for(obs.name):
                if rule.cause != spec.id:
                    continue
                c = Contribution(obs.name, rule.weight, f"{rule.text} — {obs.detail}" if obs.detail else rule.text,
                                 obs.refs)
                (pro if rule.weight > 0 else con).append(c)
        if not pro:
            continue  # nothing points at it: not a candidate
        logit = spec.prior + sum(c.weight for c in pro) + sum(c.weight for c in con)
        missing = []
        for kind_name in spec.decided_by:
            try:
                kind = Kind(kind_name)
            except ValueError:
                continue
            if not evidence.has(kind):
                missing.append(f"{kind_name}: {evidence.why_missing(kind)}")
        notes = []
        if spec.silence_note and not evidence.has(Kind.DRAFTER):
            notes.append(spec.silence_note)
        causes.append(Cause(
            id=spec.id, title=spec.title, confidence=sigmoid(logit),
            evidence_for=tuple(sorted(pro, key=lambda c: -c.weight)),
            evidence_against=tuple(sorted(con, key=lambda c: c.weight)),
            fix=spec.fix, next_step=spec.next_step, missing_evidence=tuple(missing), notes=tuple(notes),
        ))
    causes.sort(key=lambda c: (-c.confidence, c.id))

    notes: list[str] = []
    if len(causes) >= 2 and causes[0].confidence - causes[1].confidence < CLOSE:
        a, b = causes[0], causes[1]
        undecided = a if len(a.missing_evidence) >= len(b.missing_evidence) else b
        notes.append(f"The evidence does not separate '{a.id}' ({a.confidence:.2f}) from '{b.id}' "
                     f"({b.confidence:.2f}). To separate them: {undecided.next_step}.")

    acceptance = evidence.value(Kind.ACCEPTANCE)
    failing = [f for f in findings if f.status == Status.FAIL]
    strong = [c for c in causes if c.confidence >= 0.5]
    if acceptance is not None and not acceptance.sufficient and not failing:
        verdict = Verdict.INSUFFICIENT_DATA
    elif acceptance is None and not failing and not strong:
        verdict = Verdict.INSUFFICIENT_DATA
    elif ({"signature:healthy", "tau:at-baseline"} & names) and not failing and not strong:
        verdict = Verdict.HEALTHY
    elif not failing and not strong and acceptance is not None and not causes:
        verdict = Verdict.HEALTHY
    else:
        verdict = Verdict.PROBLEM
    if verdict != Verdict.PROBLEM:
        causes_out: tuple[Cause, ...] = tuple(c for c in causes if c.confidence >= 0.5)
    else:
        causes_out = tuple(causes)
    return Ranking(causes=causes_out, verdict=verdict, notes=tuple(notes))
