"""The `known-issues` service: what affects a deployment described by flags (like pip-audit for packages).

No evidence, no host: the engine release, method, runner and any facts the user states. The CLI
parses flags, calls `audit()` once and renders the result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...versions import VersionError, parse_version
from .conditions import METHODS, RUNNERS, Deployment, normalise_engine, normalise_method, parse_fact_value
from .load import KnownIssue, KnownIssues, default_known_issues
from .match import Match, MatchQuality, match_deployment

SCHEMA = "dflash-doctor/known-issues@1"
_ENGINE = re.compile(r"^\s*(?P<name>[A-Za-z][\w-]*)\s*(?:==\s*(?P<version>[\w.+-]+))?\s*$")


class AuditUsageError(ValueError):
    """A flag the audit cannot use (the CLI turns it into a usage error, exit 2)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class Audit:
    deployment: Deployment | None  # None: list the whole database
    matches: tuple[Match, ...]
    issues: tuple[KnownIssue, ...]  # the entries considered (all, or the engine's)
    database_size: int
    engines: tuple[str, ...] = ()
    stated: dict[str, Any] = field(default_factory=dict)

    @property
    def affected(self) -> tuple[Match, ...]:
        """Matches on a known release (certain or likely): what makes the command exit 1."""
        return tuple(m for m in self.matches if m.quality != MatchQuality.POSSIBLE)

    def to_dict(self) -> dict[str, Any]:
        dep = self.deployment
        return {
            "schema": SCHEMA,
            "deployment": None
            if dep is None
            else {
                "engine": dep.engine,
                "version": dep.version,
                "method": dep.method,
                "runner": dep.runner,
                "facts": dict(dep.facts),
            },
            "database": {"entries": self.database_size, "engines": list(self.engines), "considered": len(self.issues)},
            "affected": len(self.affected),
            "matches": [m.to_dict() for m in self.matches],
            "issues": [i.to_dict() for i in self.issues] if dep is None else [],
        }


def parse_engine(spec: str) -> tuple[str, str | None]:
    m = _ENGINE.match(spec or "")
    if not m:
        raise AuditUsageError(
            f"--engine {spec!r} is not NAME or NAME==VERSION", hint="for example --engine vllm==0.20.1"
        )
    name = normalise_engine(m["name"])
    assert name is not None  # the pattern's name group is never empty
    version = m["version"]
    if version is not None:
        try:
            parse_version(version)
        except VersionError:
            raise AuditUsageError(
                f"--engine {spec!r}: {version!r} is not a release version", hint="for example --engine vllm==0.20.1"
            ) from None
    return name, version


def audit(
    engine: str | None = None,
    method: str | None = None,
    runner: str | None = None,
    facts: list[str] | tuple[str, ...] = (),
    db: KnownIssues | None = None,
) -> Audit:
    db = db or default_known_issues()
    engines = tuple(sorted(db.engines))
    if engine is None:
        if method or runner or facts:
            raise AuditUsageError(
                "--method, --runner and --fact describe a deployment: give --engine NAME[==VERSION] too"
            )
        return Audit(deployment=None, matches=(), issues=db.issues, database_size=len(db), engines=engines)
    name, version = parse_engine(engine)
    if name not in db.engines:
        raise AuditUsageError(f"no known-issues data for engine {name!r}", hint=f"known engines: {', '.join(engines)}")
    m = None
    if method:
        m = normalise_method(method)
        if m not in METHODS:
            raise AuditUsageError(
                f"--method {method!r} is not a speculative method", hint=f"one of {', '.join(METHODS)}"
            )
    if runner is not None and runner.lower() not in RUNNERS:
        raise AuditUsageError(f"--runner {runner!r} is not one of {', '.join(RUNNERS)}")
    stated: dict[str, Any] = {}
    for item in facts:
        key, sep, value = item.partition("=")
        if not sep:
            raise AuditUsageError(f"--fact {item!r} is not KEY=VALUE", hint="for example --fact pd_disaggregation=true")
        try:
            stated[key.strip()] = parse_fact_value(key.strip(), value)
        except ValueError as exc:
            raise AuditUsageError(f"--fact {item!r}: {exc}") from None
    dep = Deployment(
        engine=name,
        version=version,
        method=m,
        runner=runner.lower() if runner else None,
        runner_source="--runner" if runner else None,
        facts=stated,
        sources={k: "--fact" for k in stated},
    )
    matches = tuple(match_deployment(db, dep))
    return Audit(
        deployment=dep,
        matches=matches,
        issues=db.for_engine(name),
        database_size=len(db),
        engines=engines,
        stated=stated,
    )
