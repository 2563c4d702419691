"""Load and validate the cause knowledge (causes.toml). Bad data fails loudly at start.

Everything about a cause is there: its prior, title, fix and next step, the evidence that decides it, the
rules that move it, and what the fix plan needs (the kind of remedy, the probe ablation that tests it, the
engine-support table behaviour that fixes it). Nothing in the code lists the causes."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import tomllib

from ..evidence import Kind
from ..evidence.engine_facts import EngineSupport
from ..probe.runner import ABLATIONS
from ..safeio import read_regular
from ..versions import VersionError, parse_range, parse_version

# Speculative methods, as the method belief (interpret/method.py) and the reference bands name them.
METHODS = ("eagle3", "mtp", "dflash", "ngram", "draft", "eagle", "p-eagle", "suffix", "medusa")


class KnowledgeError(ValueError):
    pass


# What a cause's own fix changes, when no engine release fixes it (the fix plan groups steps by it).
REMEDIES = ("engine", "launch", "drafter", "target", "workload", "change")


@dataclass(frozen=True)
class TableFix:
    """The engine-support table behaviour that fixes a cause: a release whose `field` is one of `fixed` (or one of
    `fixed_if_uniform` when every sliding layer of the drafter is sliding) fixes it."""

    field: str
    fixed: tuple[str, ...]
    fixed_if_uniform: tuple[str, ...] = ()

    def fixes(self, row: dict, swa: str | None) -> bool:
        value = row.get(self.field) or ""
        return value in self.fixed or (swa in ("uniform", "all") and value in self.fixed_if_uniform)


@dataclass(frozen=True)
class CauseSpec:
    id: str
    title: str
    prior: float
    fix: str
    next_step: str
    decided_by: tuple[str, ...]
    silence_note: str | None = None
    # How τ would look with this cause fixed: "baseline" (the pair's reference τ), "effect:NAME"
    # (τ × baselines.toml [effect] NAME, capped by the baseline) or "unknown".
    expected_tau: str = "unknown"
    # The methods the cause can exist for (empty: every method). A cause's prior is scaled by how likely the
    # deployment runs one of them (interpret/method.py): no sliding windows to ignore in an EAGLE-3 head.
    methods: tuple[str, ...] = ()
    # A cause users commonly blame (a weak drafter, prefix caching, eager mode …): listed whenever any evidence
    # speaks to it, for or against, so the report answers the usual suspect instead of staying silent.
    suspect: bool = False
    remedy: str = "change"  # one of REMEDIES
    ablation: str | None = None  # the probe ablation (`probe --ablate NAME`) that tests it
    table_fix: TableFix | None = None
    # For a cause that exists only in some engine releases (a release's bug, not a drafter's or a deployment's):
    # the share of deployments of its methods that run an affected release. With the release unknown (no version,
    # no engine source read) the prior is scaled by it, so a release bug has no support of its own until the
    # release is named; once it is, the known-issues check says affected or clear.
    release_prior: float | None = None
    # The fix and next step for releases where the general ones are wrong advice ("toggle VLLM_USE_V2_MODEL_RUNNER"
    # on vLLM 0.34, which removed Model Runner V1): (engine, pip-style range, fix, next_step or None).
    release_fixes: tuple[tuple[str, str, str, str | None], ...] = ()

    def fix_for(self, engine: str | None, version: str | None) -> tuple[str, str] | None:
        """(fix, next step) for this engine release when a release-specific one applies."""
        if not engine or not version or not self.release_fixes:
            return None
        try:
            v = parse_version(version)
        except VersionError:
            return None
        for eng, versions, fix, step in self.release_fixes:
            if eng == engine and parse_range(versions).contains(v):
                return fix, step or self.next_step
        return None


@dataclass(frozen=True)
class Rule:
    observation: str
    cause: str
    weight: float
    text: str
    # An observation that says the cause's own fix would not help (the weights reach more elsewhere, the clean-room
    # probe reproduces the served τ): when it is cited against the cause, the plan does not advise that fix.
    contradicts_fix: bool = False
    # The fix for the cause when this observation is what points at it (a forced-acceptance setting, a key the
    # release refuses): more precise than the cause's general fix.
    fix: str | None = None


@dataclass(frozen=True)
class Separator:
    """The one step that tells two causes apart when the evidence leaves them close."""

    causes: frozenset[str]
    step: str


@dataclass(frozen=True)
class Knowledge:
    schema: int
    causes: dict[str, CauseSpec]
    rules: tuple[Rule, ...]
    separators: tuple[Separator, ...] = ()
    # Observation families read from the acceptance numbers (curve shape, τ level, trend): the
    # evidence that coverage discounts when nothing corroborates it. Facts (configs, engine source,
    # probes, launch) always count in full.
    circumstantial: frozenset[str] = frozenset()

    def is_circumstantial(self, observation: str) -> bool:
        return observation.split(":", 1)[0] in self.circumstantial

    def rules_for(self, observation: str) -> list[Rule]:
        return [r for r in self.rules if r.observation == observation]

    def separator(self, a: str, b: str) -> str | None:
        for s in self.separators:
            if s.causes == frozenset((a, b)):
                return s.step
        return None

    @property
    def observations(self) -> set[str]:
        return {r.observation for r in self.rules}


def _req(d: dict, key: str, typ, where: str):
    if key not in d:
        raise KnowledgeError(f"{where}: missing '{key}'")
    val = d[key]
    if typ is float and isinstance(val, int) and not isinstance(val, bool):
        val = float(val)
    if not isinstance(val, typ):
        raise KnowledgeError(f"{where}: '{key}' must be {typ.__name__}")
    return val


_CAUSE_KEYS = {
    "id",
    "title",
    "prior",
    "fix",
    "next_step",
    "decided_by",
    "silence_note",
    "expected_tau",
    "methods",
    "suspect",
    "remedy",
    "ablation",
    "table_fix",
    "release_prior",
    "release_fix",
}
_RULE_KEYS = {"observation", "cause", "weight", "text", "contradicts_fix", "fix"}
_OBS_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*:[a-z0-9][a-z0-9-]*$")
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_EXPECTED = re.compile(r"^(baseline|unknown|effect:[a-z0-9_]+)$")
# A single rule may move a cause by at most this much (e^6 ≈ 400×): beyond that one observation
# would decide alone, which is the job of a test, not a weight.
MAX_WEIGHT = 6.0


def _check_keys(d: dict, allowed: set[str], where: str) -> None:
    unknown = set(d) - allowed
    if unknown:
        raise KnowledgeError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (typo?)")


def _tables(doc: dict, key: str, where: str) -> list[dict]:
    """`[[key]]` tables: a list of tables, nothing else (`rule = 5` or `cause = "x"` is an error, not a crash)."""
    items = doc.get(key, [])
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise KnowledgeError(f"{where}: '{key}' must be a list of [[{key}]] tables")
    return items


def _optional_str(d: dict, key: str, where: str) -> str | None:
    v = d.get(key)
    if v is not None and not isinstance(v, str):
        raise KnowledgeError(f"{where}: '{key}' must be str")
    return v


def _parse_cause(c: dict, where: str, kinds: set[str]) -> CauseSpec:
    _check_keys(c, _CAUSE_KEYS, where)
    cid = _req(c, "id", str, where)
    if not _ID.match(cid):
        raise KnowledgeError(f"{where}: id '{cid}' must be lower-case words joined by '-'")
    decided = c.get("decided_by", [])
    if not isinstance(decided, list) or not all(isinstance(x, str) for x in decided):
        raise KnowledgeError(f"{where}: decided_by must be a list of evidence kinds")
    bad = [x for x in decided if x not in kinds]
    if bad:
        raise KnowledgeError(f"{where}: decided_by names unknown evidence kind(s) {', '.join(bad)}")
    prior = _req(c, "prior", float, where)
    if not -8.0 <= prior <= 2.0:
        raise KnowledgeError(f"{where}: prior {prior} is outside -8..2 (log-odds)")
    expected = c.get("expected_tau", "unknown")
    if not isinstance(expected, str) or not _EXPECTED.match(expected):
        raise KnowledgeError(f"{where}: expected_tau must be 'baseline', 'unknown' or 'effect:NAME'")
    methods = c.get("methods", [])
    if not isinstance(methods, list) or not all(isinstance(x, str) and x in METHODS for x in methods):
        raise KnowledgeError(f"{where}: methods must be a list of {', '.join(METHODS)}")
    suspect = c.get("suspect", False)
    if not isinstance(suspect, bool):
        raise KnowledgeError(f"{where}: suspect must be true or false")
    release_prior = c.get("release_prior")
    if release_prior is not None and (
        isinstance(release_prior, bool) or not isinstance(release_prior, (int, float)) or not 0.0 < release_prior <= 1.0
    ):
        raise KnowledgeError(f"{where}: release_prior must be a share in (0, 1]")
    return CauseSpec(
        release_fixes=_release_fixes(c.get("release_fix", []), where),
        id=cid,
        title=_req(c, "title", str, where),
        prior=prior,
        fix=_req(c, "fix", str, where),
        next_step=_req(c, "next_step", str, where),
        decided_by=tuple(decided),
        silence_note=_optional_str(c, "silence_note", where),
        expected_tau=expected,
        methods=tuple(methods),
        suspect=suspect,
        release_prior=None if release_prior is None else float(release_prior),
        **_plan_facts(c, where),
    )


def _release_fixes(items, where: str) -> tuple[tuple[str, str, str, str | None], ...]:
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise KnowledgeError(f"{where}: release_fix must be a list of [[cause.release_fix]] tables")
    out = []
    for x in items:
        _check_keys(x, {"engine", "versions", "fix", "next_step"}, f"{where} release_fix")
        try:
            parse_range(_req(x, "versions", str, where))
        except VersionError as exc:
            raise KnowledgeError(f"{where} release_fix: {exc}") from None
        out.append(
            (
                _req(x, "engine", str, where),
                x["versions"],
                _req(x, "fix", str, where),
                _optional_str(x, "next_step", where),
            )
        )
    return tuple(out)


def _parse_rule(r: dict, where: str) -> Rule:
    _check_keys(r, _RULE_KEYS, where)
    contradicts = r.get("contradicts_fix", False)
    if not isinstance(contradicts, bool):
        raise KnowledgeError(f"{where}: contradicts_fix must be true or false")
    rule = Rule(
        observation=_req(r, "observation", str, where),
        cause=_req(r, "cause", str, where),
        weight=_req(r, "weight", float, where),
        text=_req(r, "text", str, where),
        contradicts_fix=contradicts,
        fix=_optional_str(r, "fix", where),
    )
    if not _OBS_NAME.match(rule.observation):
        raise KnowledgeError(f"{where}: observation must look like 'family:value'")
    if not math.isfinite(rule.weight) or rule.weight == 0 or abs(rule.weight) > MAX_WEIGHT:
        raise KnowledgeError(f"{where}: weight must be non-zero and within ±{MAX_WEIGHT}")
    if rule.contradicts_fix and rule.weight > 0:
        raise KnowledgeError(f"{where}: contradicts_fix is for evidence against a cause (a negative weight)")
    return rule


def parse_knowledge(
    data: dict, extra_sources: list[dict] | None = None, declared: frozenset[str] | None = None
) -> Knowledge:
    """Validate the cause knowledge. With `declared` (the observation names the loaded checks declare), a
    rule whose observation no check declares is refused: it could never fire (a typo, or a check missing)."""
    schema = data.get("schema")
    if schema != 1:
        raise KnowledgeError(f"unsupported causes schema {schema!r} (expected 1)")
    kinds = {k.value for k in Kind}
    causes: dict[str, CauseSpec] = {}
    rules: list[Rule] = []
    separators: list[Separator] = []
    for doc_no, doc in enumerate([data, *(extra_sources or [])]):
        src = f"extra knowledge file #{doc_no}" if doc_no else "the packaged knowledge"
        if doc_no and doc.get("schema", 1) != 1:
            raise KnowledgeError(f"extra knowledge file #{doc_no}: unsupported schema {doc.get('schema')!r}")
        if doc_no:
            _check_keys(doc, {"schema", "cause", "rule", "separator", "circumstantial"}, src)
            circ = doc.get("circumstantial", [])
            if not isinstance(circ, list) or not all(isinstance(x, str) for x in circ):
                raise KnowledgeError(f"{src}: 'circumstantial' must be a list of observation families")
        for i, c in enumerate(_tables(doc, "cause", src)):
            where = f"cause #{i + 1}" + (f" of extra file #{doc_no}" if doc_no else "")
            spec = _parse_cause(c, where, kinds)
            if spec.id in causes:
                raise KnowledgeError(f"{where}: duplicate cause id '{spec.id}'")
            causes[spec.id] = spec
        for i, r in enumerate(_tables(doc, "rule", src)):
            where = f"rule #{i + 1} ({str(r.get('observation'))[:60]!r} -> {str(r.get('cause'))[:60]!r})"
            rule = _parse_rule(r, where)
            if any(x.observation == rule.observation and x.cause == rule.cause for x in rules):
                raise KnowledgeError(f"{where}: a rule for this observation and cause already exists")
            rules.append(rule)
        for i, s in enumerate(_tables(doc, "separator", src)):
            where = f"separator #{i + 1}"
            _check_keys(s, {"causes", "step"}, where)
            pair = s.get("causes")
            if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
                raise KnowledgeError(f"{where}: causes must be a list of two cause ids")
            separators.append(Separator(frozenset(pair), _req(s, "step", str, where)))
    for r in rules:
        if r.cause not in causes:
            raise KnowledgeError(f"rule for observation '{r.observation}' names unknown cause '{r.cause}'")
        if declared is not None:
            _require_declared(r, declared)
    for s in separators:
        for cid in s.causes:
            if cid not in causes:
                raise KnowledgeError(f"separator names unknown cause '{cid}'")
    for cid, spec in causes.items():
        if not any(r.cause == cid and (r.weight > 0 or spec.suspect) for r in rules):
            raise KnowledgeError(f"cause '{cid}' has no rule that can point at it: it could never be ranked")
    circ = data.get("circumstantial", [])
    if not isinstance(circ, list) or not all(isinstance(x, str) and _ID.match(x) for x in circ):
        raise KnowledgeError("'circumstantial' must be a list of observation families (e.g. \"signature\")")
    return Knowledge(
        schema=schema, causes=causes, rules=tuple(rules), separators=tuple(separators), circumstantial=frozenset(circ)
    )


def _plan_facts(c: dict, where: str) -> dict:
    """remedy, ablation and table_fix of a [[cause]]: what the fix plan does with it."""
    remedy = c.get("remedy", "change")
    if remedy not in REMEDIES:
        raise KnowledgeError(f"{where}: remedy must be one of {', '.join(REMEDIES)}")
    ablation = c.get("ablation")
    if ablation is not None and ablation not in ABLATIONS:
        raise KnowledgeError(f"{where}: ablation must be one of {', '.join(ABLATIONS)} (probe --ablate)")
    return {"remedy": remedy, "ablation": ablation, "table_fix": _table_fix(c.get("table_fix"), where)}


_TABLE_COLUMNS = frozenset(f.name for f in dataclasses.fields(EngineSupport))


def _table_fix(d: object, where: str) -> TableFix | None:
    if d is None:
        return None
    if not isinstance(d, dict):
        raise KnowledgeError(f"{where}: table_fix must be a table {{ field = ..., fixed = [...] }}")
    _check_keys(d, {"field", "fixed", "fixed_if_uniform"}, f"{where} table_fix")
    column = _req(d, "field", str, f"{where} table_fix")
    if column not in _TABLE_COLUMNS:
        raise KnowledgeError(f"{where}: table_fix field '{column}' is not an engine_support.toml column")
    lists = {}
    for key in ("fixed", "fixed_if_uniform"):
        v = d.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise KnowledgeError(f"{where}: table_fix {key} must be a list of strings")
        lists[key] = tuple(v)
    if not lists["fixed"]:
        raise KnowledgeError(f"{where}: table_fix needs the values that fix it (fixed = [...])")
    return TableFix(column, lists["fixed"], lists["fixed_if_uniform"])


def load_toml(path: Path | str) -> dict:
    """A TOML file (a regular file of at most 16 MiB: a FIFO hung the run); text that is not UTF-8 is a
    TOMLDecodeError (it was an internal error)."""

    raw = read_regular(path, 16 << 20)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise tomllib.TOMLDecodeError(f"not UTF-8 text (byte {exc.start})") from None
    return tomllib.loads(text)


def _require_declared(r: Rule, declared: frozenset[str]) -> None:
    if r.observation not in declared:
        raise KnowledgeError(
            f"rule for observation '{r.observation}' (cause '{r.cause}'): no check declares "
            "that observation, so the rule could never fire (a typo?)"
        )


def default_knowledge(extra: tuple[str, ...] = (), declared: frozenset[str] | None = None) -> Knowledge:
    """The packaged causes, plus any extra TOML files (Settings.knowledge_files: ``--knowledge FILE`` and
    DFLASH_DOCTOR_KNOWLEDGE), validated against the observations the checks declare when given. Parsed once
    per set of files whatever `declared` is (a caller may parse them early, before the checks are loaded)."""
    k = _parsed_knowledge(tuple(extra))
    if declared is not None:
        for r in k.rules:
            _require_declared(r, declared)
    return k


def cause_ids() -> tuple[str, ...]:
    """The ids of the packaged causes, in causes.toml's order (what a known issue or a check may name)."""
    return tuple(_parsed_knowledge(()).causes)


@cache
def _parsed_knowledge(extra: tuple[str, ...]) -> Knowledge:
    text = resources.files("dflash_doctor.knowledge").joinpath("causes.toml").read_bytes()
    data = tomllib.loads(text.decode("utf-8"))
    docs = []
    for p in extra:
        try:
            docs.append(load_toml(p))
        except OSError as exc:
            raise KnowledgeError(f"cannot read knowledge file {p}: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise KnowledgeError(f"knowledge file {p} is not valid TOML: {exc}") from None
    return parse_knowledge(data, docs)
