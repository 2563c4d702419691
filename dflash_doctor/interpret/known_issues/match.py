"""Match a deployment against the known issues.

Quality of a match (what the ranking may weigh):
  certain   the engine release is in the affected range and every other condition (method, runner,
            each fact) is known to hold
  likely    the release is affected, nothing known rules the entry out, and exactly one condition is
            unknown (e.g. whether the drafter has sliding-window layers)
  possible  the release is unknown (a log without a version line), or two or more conditions are
            unknown (each unknown condition roughly halves the odds that all of them hold)
An entry is ruled out (no match) as soon as one known fact contradicts it: a release outside the range,
another method or runner, a condition known to be false.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from ...versions import VersionError, parse_version
from .conditions import FACTS, Deployment, normalise_engine
from .load import KnownIssue, KnownIssues

# A match on a known release with more unknown conditions than this counts only as possible.
MAX_UNKNOWN_FOR_LIKELY = 1


class MatchQuality(str, enum.Enum):
    CERTAIN = "certain"
    LIKELY = "likely"
    POSSIBLE = "possible"

    @property
    def rank(self) -> int:
        return {"certain": 0, "likely": 1, "possible": 2}[self.value]

    def phrase(self) -> str:
        return {
            "certain": "affected",
            "likely": "affected if the unknown condition holds",
            "possible": "possibly affected (release or several conditions unknown)",
        }[self.value]


@dataclass(frozen=True)
class Match:
    issue: KnownIssue
    quality: MatchQuality
    met: tuple[str, ...]  # conditions known to hold, in words
    unknown: tuple[str, ...]  # conditions not known, in words
    refs: tuple[str, ...] = ()  # evidence refs of the facts that were used

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.issue.id,
            "quality": self.quality.value,
            "met": list(self.met),
            "unknown": list(self.unknown),
            "refs": list(self.refs),
            "issue": self.issue.to_dict(),
        }


@dataclass(frozen=True)
class RuledOut:
    issue: KnownIssue
    reason: str


def _describe(name: str, want: Any) -> str:
    spec = FACTS[name]
    if spec.type == "bool":
        return spec.words(want)
    if spec.type == "int":
        return f"{spec.words()} >= {want}"
    return f"{spec.words()} {' or '.join(want)}"


def _test(name: str, want: Any, have: Any) -> bool:
    spec = FACTS[name]
    if spec.type == "bool":
        return bool(have) is want
    if spec.type == "int":
        return isinstance(have, int) and have >= want
    if spec.type == "str":
        return str(have).lower() in want
    return any(w in str(have).lower() for w in want)


def evaluate(issue: KnownIssue, dep: Deployment, runner_default: str | None = None) -> Match | RuledOut:  # noqa: C901 -- the known-issue condition evaluator: one branch per condition kind
    engine = normalise_engine(dep.engine)
    if engine != issue.engine:
        return RuledOut(issue, f"engine is {engine or 'unknown'}, not {issue.engine}")
    met: list[str] = []
    unknown: list[str] = []
    refs = {dep.sources[k] for k in ("engine", "version") if k in dep.sources}
    version_known = False
    if dep.version:
        try:
            v = parse_version(dep.version)
        except VersionError:
            v = None
        if v is not None:
            version_known = True
            if not issue.affected.contains(v):
                if v.key >= issue.fixed_in.key:
                    return RuledOut(issue, f"{engine} {dep.version} has the fix (fixed in {issue.fixed_in})")
                return RuledOut(issue, f"{engine} {dep.version} is outside the affected range {issue.affected}")
            met.append(f"{engine} {dep.version} is in {issue.affected}")
    if issue.methods:
        if dep.method is None:
            unknown.append(f"method is one of {', '.join(issue.methods)}")
        elif dep.method not in issue.methods:
            return RuledOut(issue, f"method {dep.method} is not {', '.join(issue.methods)}")
        else:
            met.append(f"method {dep.method}")
            if "method" in dep.sources:
                refs.add(dep.sources["method"])
    if issue.runner:
        runner = dep.runner or runner_default
        if runner is None:
            unknown.append(f"{issue.runner} model runner")
        elif runner != issue.runner:
            return RuledOut(issue, f"runs the {runner} runner, not {issue.runner}")
        else:
            how = dep.runner_source if dep.runner else "the release's default"
            met.append(f"{runner} runner ({how})")
            if "runner" in dep.sources:
                refs.add(dep.sources["runner"])
    for name, want in issue.conditions.items():
        if name not in dep.facts or dep.facts[name] is None:
            unknown.append(_describe(name, want))
        elif not _test(name, want, dep.facts[name]):
            return RuledOut(issue, f"not {_describe(name, want)}")
        else:
            met.append(_describe(name, want))
            if name in dep.sources:
                refs.add(dep.sources[name])
    if issue.conditions_any:
        known = {n: w for n, w in issue.conditions_any.items() if dep.facts.get(n) is not None}
        hits = [n for n, w in known.items() if _test(n, w, dep.facts[n])]
        words = " or ".join(_describe(n, w) for n, w in issue.conditions_any.items())
        if hits:
            met.append(" or ".join(_describe(n, issue.conditions_any[n]) for n in hits))
            refs.update(dep.sources[n] for n in hits if n in dep.sources)
        elif len(known) == len(issue.conditions_any):
            return RuledOut(issue, f"not ({words})")
        else:
            unknown.append(words)
    if not version_known:
        quality = MatchQuality.POSSIBLE
        unknown.insert(0, f"{engine} release in {issue.affected}")
    elif len(unknown) > MAX_UNKNOWN_FOR_LIKELY:
        quality = MatchQuality.POSSIBLE
    elif unknown:
        quality = MatchQuality.LIKELY
    else:
        quality = MatchQuality.CERTAIN
    return Match(
        issue=issue, quality=quality, met=tuple(met), unknown=tuple(unknown), refs=tuple(sorted(r for r in refs if r))
    )


def _default_runner(db: KnownIssues, engine: str | None, dep: Deployment):
    """The runner the deployment's release picks when the launch does not say (None: unknown)."""
    rules = db.engines.get(engine or "")
    if rules is None or dep.runner is not None or not dep.version:
        return None
    try:
        return rules.default_runner(parse_version(dep.version))
    except VersionError:
        return None


def match_deployment(db: KnownIssues, dep: Deployment) -> list[Match]:
    """Every entry that may affect the deployment, most certain first, then by id."""
    engine = normalise_engine(dep.engine)
    default = _default_runner(db, engine, dep)
    out = [m for m in (evaluate(i, dep, default) for i in db.for_engine(engine)) if isinstance(m, Match)]
    return sorted(out, key=lambda m: (m.quality.rank, m.issue.id))


def explain(db: KnownIssues, dep: Deployment) -> list[Match | RuledOut]:
    """Every entry of the deployment's engine with its verdict (for --all listings and tests)."""
    engine = normalise_engine(dep.engine)
    default = _default_runner(db, engine, dep)
    return [evaluate(i, dep, default) for i in db.for_engine(engine)]
