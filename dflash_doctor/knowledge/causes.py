"""Load and validate the cause knowledge (causes.toml). Bad data fails loudly at start.

Everything about a cause is there: its prior, title, fix and next step, the evidence that decides it, the
rules that move it, and what the fix plan needs (the kind of remedy, the probe ablation that tests it, the
engine-support table behaviour that fixes it). Nothing in the code lists the causes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ..evidence import Kind
from ..evidence.engine_facts import EngineSupport
from ..probe.runner import ABLATIONS
from ..versions import VersionError, parse_range, parse_version

if TYPE_CHECKING:
    from ..schema import CauseShape, EngineRow, RuleShape


class KnowledgeError(ValueError):
    """Cause knowledge (or a document read with it: baselines, reference, known issues) that is wrong."""


@dataclass(frozen=True)
class TableFix:
    """The engine-support table behaviour that fixes a cause: a release whose `field` is one of `fixed` (or one of
    `fixed_if_uniform` when every sliding layer of the drafter is sliding) fixes it."""

    field: str
    fixed: tuple[str, ...]
    fixed_if_uniform: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()  # the method families whose behaviour the field describes (empty: every method)

    def fixes(self, row: EngineRow, swa: str | None) -> bool:
        value = getattr(row, self.field, None) or ""
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


# A single rule may move a cause by at most this much (e^6 ≈ 400×): beyond that one observation
# would decide alone, which is the job of a test, not a weight.
MAX_WEIGHT = 6.0

# Speculative methods, as the method belief (interpret/method.py) and the reference bands name them; what a cause's
# own fix changes (the fix plan groups steps by it). schema.py's Method and Remedy spell the same (a test holds them).
METHODS = ("eagle3", "mtp", "dflash", "ngram", "draft", "eagle", "p-eagle", "suffix", "medusa")
REMEDIES = ("engine", "launch", "drafter", "target", "workload", "change")


_TABLE_COLUMNS = frozenset(f.name for f in dataclasses.fields(EngineSupport))


def _cause(c: CauseShape, where: str, kinds: set[str]) -> CauseSpec:
    """What the shape cannot say about one cause: the names it uses exist."""
    bad = [x for x in c.decided_by if x not in kinds]
    if bad:
        raise KnowledgeError(f"{where}.decided_by: unknown evidence kind(s) {', '.join(bad)}")
    if c.ablation is not None and c.ablation not in ABLATIONS:
        raise KnowledgeError(f"{where}.ablation: must be one of {', '.join(ABLATIONS)} (probe --ablate)")
    table_fix = None
    if c.table_fix is not None:
        if c.table_fix.field not in _TABLE_COLUMNS:
            raise KnowledgeError(f"{where}.table_fix.field: '{c.table_fix.field}' is not an engine_support.toml column")
        table_fix = TableFix(c.table_fix.field, c.table_fix.fixed, c.table_fix.fixed_if_uniform, c.table_fix.methods)
    for i, x in enumerate(c.release_fix):
        try:
            parse_range(x.versions)
        except VersionError as exc:
            raise KnowledgeError(f"{where}.release_fix[{i}].versions: {exc}") from None
    return CauseSpec(
        id=c.id,
        title=c.title,
        prior=float(c.prior),
        fix=c.fix,
        next_step=c.next_step,
        decided_by=c.decided_by,
        silence_note=c.silence_note,
        expected_tau=c.expected_tau,
        methods=c.methods,
        suspect=c.suspect,
        remedy=c.remedy,
        ablation=c.ablation,
        table_fix=table_fix,
        release_prior=None if c.release_prior is None else float(c.release_prior),
        release_fixes=tuple((x.engine, x.versions, x.fix, x.next_step) for x in c.release_fix),
    )


def _rule(r: RuleShape, where: str) -> Rule:
    if r.weight == 0:
        raise KnowledgeError(f"{where}.weight: must be non-zero (a rule that moves nothing)")
    if r.contradicts_fix and r.weight > 0:
        raise KnowledgeError(f"{where}.contradicts_fix: is for evidence against a cause (a negative weight)")
    return Rule(r.observation, r.cause, float(r.weight), r.text, r.contradicts_fix, r.fix)


def parse_knowledge(
    data: dict,
    extra_sources: list[dict] | None = None,
    declared: frozenset[str] | None = None,
    names: tuple[str, ...] = (),
) -> Knowledge:
    """Validate the cause knowledge: the packaged document `data` and the extra ones (named by `names`, in
    order, in error messages). With `declared` (the observation names the loaded checks declare), a rule
    whose observation no check declares is refused: it could never fire (a typo, or a check missing)."""
    from ..schema import KnowledgeShape, convert  # msgspec: not at start-up (tests/core/test_startup.py)

    if data.get("schema") != 1:
        raise KnowledgeError(f"causes.toml: schema: unsupported {data.get('schema')!r} (expected 1)")
    kinds = {k.value for k in Kind}
    causes: dict[str, CauseSpec] = {}
    rules: list[Rule] = []
    separators: list[Separator] = []
    extras = list(extra_sources or [])
    sources = [
        "causes.toml",
        *(names[i] if i < len(names) else f"extra knowledge file #{i + 1}" for i in range(len(extras))),
    ]
    docs = [
        convert(doc, KnowledgeShape, src, KnowledgeError) for doc, src in zip([data, *extras], sources, strict=True)
    ]
    for doc, src in zip(docs, sources, strict=True):
        for i, c in enumerate(doc.cause):
            spec = _cause(c, f"{src}: cause[{i}]", kinds)
            if spec.id in causes:
                raise KnowledgeError(f"{src}: cause[{i}].id: duplicate cause id '{spec.id}'")
            causes[spec.id] = spec
        for i, shaped in enumerate(doc.rule):
            rule = _rule(shaped, f"{src}: rule[{i}]")
            if any(x.observation == rule.observation and x.cause == rule.cause for x in rules):
                raise KnowledgeError(f"{src}: rule[{i}]: a rule for {rule.observation} -> {rule.cause} already exists")
            rules.append(rule)
        separators += [Separator(frozenset(s.causes), s.step) for s in doc.separator]
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
    return Knowledge(
        schema=1,
        causes=causes,
        rules=tuple(rules),
        separators=tuple(separators),
        circumstantial=frozenset(docs[0].circumstantial),
    )


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
    from ..schema import SchemaError, parse_toml, read_toml

    text = resources.files("dflash_doctor.knowledge").joinpath("causes.toml").read_bytes()
    data = parse_toml(text, "causes.toml")
    docs = []
    for p in extra:
        try:
            docs.append(read_toml(p))
        except OSError as exc:
            raise KnowledgeError(f"cannot read knowledge file {p}: {exc.strerror or exc}") from None
        except SchemaError as exc:
            raise KnowledgeError(f"knowledge file {exc}") from None
    return parse_knowledge(data, docs, names=tuple(Path(p).name for p in extra))
