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
from typing import Any

import tomllib

from ...knowledge.causes import KnowledgeError, cause_ids
from ...versions import Range, Version, VersionError, parse_range, parse_version
from .conditions import ENGINES, FACTS, METHODS, RUNNERS

# Symptoms an entry may list, in the vocabulary of interpret/signature.py (curve shapes) and of the
# trend/workload readings: what the fix's own description says the bug looks like.
SYMPTOMS = (
    "all-zero",
    "cliff-after-first",
    "steep",
    "uniform-low",
    "small-uniform-drop",
    "geometric",
    "worse-with-context",
    "worse-over-time",
    "temperature-collapse",
    "varies-by-request",
)

# covered_by: an evidence kind whose dedicated check already weighs this issue from the same facts
# (e.g. the engine-support table decides the DFlash +1 and drafter-SWA rows): the known-issues check
# then names the entry without weighing it a second time.
COVERED_BY = ("engine-support",)

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_URL = re.compile(r"^https://[^\s]+$")
_ISSUE_KEYS = {
    "id",
    "title",
    "engine",
    "affected",
    "fixed_in",
    "runner",
    "methods",
    "conditions",
    "conditions_any",
    "symptoms",
    "cause",
    "links",
    "summary",
    "verified",
    "covered_by",
    "fix",
    "notes",
}
_FILE_KEYS = {"schema", "engine", "runner_env", "runner_default", "issue", "source_note"}


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


def _str(d: Mapping, key: str, where: str, required: bool = True) -> str:
    v = d.get(key)
    if v is None and not required:
        return ""
    if not isinstance(v, str) or (required and not v.strip()):
        raise KnowledgeError(f"{where}: '{key}' must be a non-empty string")
    return v.strip()


def _condition_value(name: str, value: Any, where: str) -> Any:
    spec = FACTS.get(name)
    if spec is None:
        raise KnowledgeError(f"{where}: unknown fact '{name}' in conditions (known: {', '.join(sorted(FACTS))})")
    if spec.type == "bool":
        if not isinstance(value, bool):
            raise KnowledgeError(f"{where}: condition '{name}' must be true or false")
        return value
    if spec.type == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise KnowledgeError(
                f"{where}: condition '{name}' must be a non-negative integer (the smallest value affected)"
            )
        return value
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(x, str) and x for x in values):
        raise KnowledgeError(f"{where}: condition '{name}' must be a string or a list of strings")
    values = [x.lower() for x in values]
    if spec.type == "str" and spec.values:
        bad = [x for x in values if x not in spec.values]
        if bad:
            raise KnowledgeError(f"{where}: condition '{name}' takes {', '.join(spec.values)}, not {', '.join(bad)}")
    return tuple(values)


def _conditions(d: Mapping, key: str, where: str) -> dict[str, Any]:
    raw = d.get(key, {})
    if not isinstance(raw, dict):
        raise KnowledgeError(f"{where}: '{key}' must be a table of fact = value")
    return {name: _condition_value(name, value, f"{where} {key}") for name, value in raw.items()}


def parse_issue(d: Mapping, engine: str, where: str) -> KnownIssue:
    if not isinstance(d, dict):
        raise KnowledgeError(f"{where}: an [[issue]] must be a table")
    unknown = set(d) - _ISSUE_KEYS
    if unknown:
        raise KnowledgeError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (typo?)")
    iid = _str(d, "id", where)
    where = f"{where} ({iid})"
    if not _ID.match(iid):
        raise KnowledgeError(f"{where}: id must be lower-case words joined by '-'")
    if d.get("engine", engine) != engine:
        raise KnowledgeError(f"{where}: engine {d.get('engine')!r} differs from the file's engine {engine!r}")
    try:
        affected = parse_range(_str(d, "affected", where))
        fixed_in = parse_version(_str(d, "fixed_in", where))
    except VersionError as exc:
        raise KnowledgeError(f"{where}: {exc}") from None
    up = affected.upper
    if up is None:
        raise KnowledgeError(f"{where}: affected range {affected} has no upper bound; a fixed issue ends somewhere")
    if affected.contains(fixed_in):
        raise KnowledgeError(f"{where}: fixed_in {fixed_in} lies inside its own affected range {affected}")
    if up[1].key > fixed_in.key:
        raise KnowledgeError(f"{where}: affected range {affected} reaches past fixed_in {fixed_in}")
    runner = d.get("runner") or None
    if runner is not None and runner not in RUNNERS:
        raise KnowledgeError(f"{where}: runner must be one of {', '.join(RUNNERS)} (or absent for any)")
    methods = d.get("methods", [])
    if not isinstance(methods, list) or not all(isinstance(m, str) for m in methods):
        raise KnowledgeError(f"{where}: methods must be a list of method names")
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise KnowledgeError(f"{where}: unknown method(s) {', '.join(bad)} (known: {', '.join(METHODS)})")
    symptoms = d.get("symptoms", [])
    if not isinstance(symptoms, list) or any(s not in SYMPTOMS for s in symptoms):
        raise KnowledgeError(f"{where}: symptoms must be a list drawn from {', '.join(SYMPTOMS)}")
    cause = _str(d, "cause", where)
    if cause not in cause_ids():
        raise KnowledgeError(f"{where}: cause '{cause}' is not a cause id ({', '.join(cause_ids())})")
    links = d.get("links")
    if not isinstance(links, list) or not links or not all(isinstance(u, str) and _URL.match(u) for u in links):
        raise KnowledgeError(f"{where}: links must be a non-empty list of https URLs (the fix first)")
    covered = d.get("covered_by") or None
    if covered is not None and covered not in COVERED_BY:
        raise KnowledgeError(f"{where}: covered_by must be one of {', '.join(COVERED_BY)}")
    conditions = _conditions(d, "conditions", where)
    conditions_any = _conditions(d, "conditions_any", where)
    if len(conditions_any) == 1:
        raise KnowledgeError(f"{where}: conditions_any with a single fact is a plain condition: move it to conditions")
    return KnownIssue(
        id=iid,
        title=_str(d, "title", where),
        engine=engine,
        affected=affected,
        fixed_in=fixed_in,
        runner=runner,
        methods=tuple(methods),
        conditions=conditions,
        conditions_any=conditions_any,
        symptoms=tuple(symptoms),
        cause=cause,
        links=tuple(links),
        summary=_str(d, "summary", where),
        verified=_str(d, "verified", where),
        covered_by=covered,
        fix=_str(d, "fix", where, required=False),
        notes=_str(d, "notes", where, required=False),
    )


def parse_engine_file(data: Mapping, name: str) -> tuple[EngineRules, list[KnownIssue]]:
    where = f"known issues {name}"
    if data.get("schema") != 1:
        raise KnowledgeError(f"{where}: unsupported schema {data.get('schema')!r} (expected 1)")
    unknown = set(data) - _FILE_KEYS
    if unknown:
        raise KnowledgeError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (typo?)")
    engine = _str(data, "engine", where)
    if engine not in ENGINES:
        raise KnowledgeError(f"{where}: engine {engine!r} is not one of {', '.join(ENGINES)}")
    defaults = []
    for i, rd in enumerate(data.get("runner_default", [])):
        w = f"{where} runner_default #{i + 1}"
        if not isinstance(rd, dict) or set(rd) != {"versions", "runner"} or rd["runner"] not in RUNNERS:
            raise KnowledgeError(f'{w}: needs versions = "RANGE" and runner = "v1"|"v2"')
        try:
            defaults.append(RunnerDefault(parse_range(rd["versions"]), rd["runner"]))
        except VersionError as exc:
            raise KnowledgeError(f"{w}: {exc}") from None
    rules = EngineRules(engine=engine, runner_env=data.get("runner_env") or None, runner_default=tuple(defaults))
    issues = [parse_issue(d, engine, f"{where} issue #{i + 1}") for i, d in enumerate(data.get("issue", []))]
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
    folder = resources.files("dflash_doctor.interpret.known_issues")
    files = {}
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            try:
                files[entry.name] = tomllib.loads(entry.read_bytes().decode("utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise KnowledgeError(f"known issues {entry.name} is not valid TOML: {exc}") from None
    return parse_known_issues(files)
