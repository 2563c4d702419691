"""Load and validate the known-issues database (one TOML file per engine in this folder).

Every entry is checked at load: a typo, an unknown fact, a fixed-in release inside its own affected
range or a missing source fails loudly with the file and entry named, like causes.toml does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from ...knowledge.causes import KnowledgeError, cause_ids
from ...versions import Range, Version, VersionError, parse_range, parse_version
from .conditions import FACTS, METHODS

if TYPE_CHECKING:
    from ...schema import KnownIssueShape


@dataclass(frozen=True)
class RunnerDefault:
    versions: Range
    runner: str  # "v1" | "v2"


@dataclass(frozen=True)
class EngineRules:
    engine: str
    runner_env: str | None  # environment variable that selects the model runner / spec worker
    runner_default: tuple[RunnerDefault, ...]  # releases whose runner is fixed when the variable is unset

    def default_runner(self, version: Version | None) -> str | None:
        if version is None:
            return None
        for d in self.runner_default:
            if d.versions.contains(version):
                return d.runner
        return None


@dataclass(frozen=True)
class KnownIssue:
    id: str
    title: str
    engine: str
    affected: Range
    fixed_in: Version
    runner: str | None
    methods: tuple[str, ...]  # empty = every speculative method
    conditions: Mapping[str, Any]  # all must hold
    conditions_any: Mapping[str, Any]  # at least one must hold (empty = no such requirement)
    symptoms: tuple[str, ...]
    cause: str
    links: tuple[str, ...]
    summary: str
    verified: str  # how the fixed-in release was read from the release itself
    covered_by: str | None = None
    fix: str = ""
    notes: str = ""

    @property
    def link(self) -> str:
        return self.links[0]

    def reference(self) -> str:
        """'vLLM PR #40727' style name of the fix, from its first link."""
        m = re.match(r"https://github\.com/([^/]+)/([^/]+)/(pull|issues|commit)/([0-9a-f]+)", self.link)
        if not m:
            return self.link
        repo = {
            "vllm-project/vllm": "vLLM",
            "sgl-project/sglang": "SGLang",
            "vllm-project/vllm-ascend": "vllm-ascend",
            "NVIDIA/TensorRT-LLM": "TensorRT-LLM",
        }.get(f"{m[1]}/{m[2]}", f"{m[1]}/{m[2]}")
        kind = {"pull": "PR #", "issues": "issue #", "commit": "commit "}[m[3]]
        return f"{repo} {kind}{m[4]}"

    def remedy(self) -> str:
        return self.fix or f"Upgrade {self.engine} to {self.fixed_in} or later."

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "engine": self.engine,
            "affected": str(self.affected),
            "fixed_in": str(self.fixed_in),
            "runner": self.runner,
            "methods": list(self.methods),
            "conditions": dict(self.conditions),
            "conditions_any": dict(self.conditions_any),
            "symptoms": list(self.symptoms),
            "cause": self.cause,
            "links": list(self.links),
            "summary": self.summary,
            "verified": self.verified,
            "covered_by": self.covered_by,
            "fix": self.remedy(),
            "notes": self.notes,
        }


@dataclass(frozen=True)
class KnownIssues:
    issues: tuple[KnownIssue, ...]
    engines: Mapping[str, EngineRules]

    def for_engine(self, engine: str | None) -> tuple[KnownIssue, ...]:
        return tuple(i for i in self.issues if engine is None or i.engine == engine)

    def get(self, issue_id: str) -> KnownIssue | None:
        return next((i for i in self.issues if i.id == issue_id), None)

    def __len__(self) -> int:
        return len(self.issues)


def _condition_value(name: str, value: Any, where: str) -> Any:
    """A condition's value as its fact's type says (conditions.FACTS): what a shape cannot, as the fact decides."""
    spec = FACTS.get(name)
    if spec is None:
        raise KnowledgeError(f"{where}: unknown fact '{name}' in conditions (known: {', '.join(sorted(FACTS))})")
    if spec.type == "bool":
        if not isinstance(value, bool):
            raise KnowledgeError(f"{where}.{name}: must be true or false")
        return value
    if spec.type == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise KnowledgeError(f"{where}.{name}: must be a non-negative integer (the smallest value affected)")
        return value
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(x, str) and x for x in values):
        raise KnowledgeError(f"{where}.{name}: must be a string or a list of strings")
    values = [x.lower() for x in values]
    if spec.type == "str" and spec.values:
        bad = [x for x in values if x not in spec.values]
        if bad:
            raise KnowledgeError(f"{where}.{name}: takes {', '.join(spec.values)}, not {', '.join(bad)}")
    return tuple(values)


def _conditions(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    return {name: _condition_value(name, value, where) for name, value in raw.items()}


def parse_issue(d: KnownIssueShape, engine: str, where: str) -> KnownIssue:
    """One [[issue]], shaped: what only the releases, the facts and the causes can say."""
    if d.engine not in (None, engine):
        raise KnowledgeError(f"{where}.engine: {d.engine!r} differs from the file's engine {engine!r}")
    try:
        affected = parse_range(d.affected.strip())
        fixed_in = parse_version(d.fixed_in.strip())
    except VersionError as exc:
        raise KnowledgeError(f"{where} ({d.id}): {exc}") from None
    up = affected.upper
    if up is None:
        raise KnowledgeError(f"{where}.affected: {affected} has no upper bound; a fixed issue ends somewhere")
    if affected.contains(fixed_in):
        raise KnowledgeError(f"{where}.fixed_in: {fixed_in} lies inside its own affected range {affected}")
    if up[1].key > fixed_in.key:
        raise KnowledgeError(f"{where}.affected: {affected} reaches past fixed_in {fixed_in}")
    bad = [m for m in d.methods if m not in METHODS]
    if bad:
        raise KnowledgeError(f"{where}.methods: unknown method(s) {', '.join(bad)} (known: {', '.join(METHODS)})")
    if d.cause not in cause_ids():
        raise KnowledgeError(f"{where}.cause: '{d.cause}' is not a cause id ({', '.join(cause_ids())})")
    if len(d.conditions_any) == 1:
        raise KnowledgeError(f"{where}.conditions_any: a single fact is a plain condition: move it to conditions")
    return KnownIssue(
        id=d.id,
        title=d.title.strip(),
        engine=engine,
        affected=affected,
        fixed_in=fixed_in,
        runner=d.runner,
        methods=d.methods,
        conditions=_conditions(d.conditions, f"{where}.conditions"),
        conditions_any=_conditions(d.conditions_any, f"{where}.conditions_any"),
        symptoms=d.symptoms,
        cause=d.cause.strip(),
        links=d.links,
        summary=d.summary.strip(),
        verified=d.verified.strip(),
        covered_by=d.covered_by,
        fix=d.fix.strip(),
        notes=d.notes.strip(),
    )


def parse_engine_file(data: Mapping, name: str) -> tuple[EngineRules, list[KnownIssue]]:
    from ...schema import KnownIssuesFile, convert  # msgspec: not at start-up (tests/core/test_startup.py)

    doc = convert(data, KnownIssuesFile, name, KnowledgeError)
    defaults = []
    for i, rd in enumerate(doc.runner_default):
        try:
            defaults.append(RunnerDefault(parse_range(rd.versions), rd.runner))
        except VersionError as exc:
            raise KnowledgeError(f"{name}: runner_default[{i}].versions: {exc}") from None
    rules = EngineRules(engine=doc.engine, runner_env=doc.runner_env or None, runner_default=tuple(defaults))
    issues = [parse_issue(d, doc.engine, f"{name}: issue[{i}]") for i, d in enumerate(doc.issue)]
    return rules, issues


def parse_known_issues(files: Mapping[str, Mapping]) -> KnownIssues:
    engines: dict[str, EngineRules] = {}
    issues: list[KnownIssue] = []
    seen: set[str] = set()
    for name, data in files.items():
        rules, found = parse_engine_file(data, name)
        if rules.engine in engines:
            raise KnowledgeError(f"known issues {name}: a second file for engine {rules.engine!r}")
        engines[rules.engine] = rules
        for issue in found:
            if issue.id in seen:
                raise KnowledgeError(f"known issues {name}: duplicate id {issue.id!r}")
            seen.add(issue.id)
            issues.append(issue)
    return KnownIssues(issues=tuple(issues), engines=engines)


@lru_cache(maxsize=1)
def default_known_issues() -> KnownIssues:
    """The packaged database: every *.toml in this folder."""
    from ...schema import parse_toml

    folder = resources.files("dflash_doctor.interpret.known_issues")
    files = {}
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            files[entry.name] = parse_toml(entry.read_bytes(), entry.name, KnowledgeError)
    return parse_known_issues(files)
