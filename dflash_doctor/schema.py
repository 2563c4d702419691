"""Every TOML and JSON input is read through here: a typed shape (a msgspec Struct) per document, and one
line per problem, named by where it is (`causes.toml: cause[0].prior: expected a number, got str`).

Why msgspec: measured against pydantic v2 on causes.toml (benchmarks/bench_schema_libs.py): it adds
less to start-up, builds its types and validates faster, and installs smaller; docs/performance.md has
the figures. Shapes are declared on the types (field types, `Meta` bounds and patterns, `Literal`
choices, `forbid_unknown_fields` against typos); what only the whole document can say (a rule naming a
cause that exists, ids used once) stays with the loader that knows it and raises `SchemaError` too.

`--version` and `--help` never import this module (tests/core/test_startup.py).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from .safeio import read_regular

T = TypeVar("T")

# Bounds and words shared by several documents
Verdict = Literal["problem", "healthy", "insufficient-data"]
Status = Literal["ok", "warn", "fail", "could-not-check", "not-applicable"]
Share = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]
Id = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9-]*$")]


class SchemaError(ValueError):
    """A document that does not have its shape: one line, the document's name and the place in it."""


class Shape(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Base of every document shape: an unknown key is an error (a typo), values are immutable."""


_WHAT = {
    "float": "a number",
    "int": "an integer",
    "str": "a string",
    "bool": "true or false",
    "array": "a list",
    "object": "a table",
    "null": "nothing",
}
_EXPECTED = re.compile(r"^Expected `([^`]+)`(.*?)(?:, got `([^`]+)`)?$")
_UNKNOWN = re.compile(r"^Object contains unknown field `([^`]+)`$")
_MISSING = re.compile(r"^Object missing required field `([^`]+)`$")
_AT = re.compile(r"^(.*) - at `\$(.*)`$")


def _plain(message: str) -> str:
    """msgspec's wording as a person's: 'Expected `float`, got `str`' -> 'expected a number, got str'."""
    if m := _UNKNOWN.match(message):
        return f"unknown key '{m.group(1)}' (a typo?)"
    if m := _MISSING.match(message):
        return f"missing '{m.group(1)}'"
    m = _EXPECTED.match(message)
    if not m:
        return message[:1].lower() + message[1:].replace("`", "'")
    want, rest, got = m.groups()
    words = " or ".join(_WHAT.get(w.strip(), w.strip()) for w in want.split("|"))
    return f"expected {words}{rest.replace('`', chr(39))}" + (f", got {got}" if got else "")


def error_line(source: str, exc: msgspec.ValidationError | msgspec.DecodeError) -> str:
    """`source: path.in.document: what is wrong`, from a msgspec error."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    m = _AT.match(text)
    if not m:
        return f"{source}: {_plain(text)}"
    message, where = m.groups()
    where = where.lstrip(".") or "(top)"
    return f"{source}: {where}: {_plain(message)}"


def convert(data: Any, shape: type[T], source: str, error: type[Exception] = SchemaError) -> T:
    """Validate already-parsed data (a TOML or JSON document) against `shape`; `error` (SchemaError or a
    subclass the caller's callers catch) names the place."""
    try:
        return msgspec.convert(data, shape, str_keys=True)
    except msgspec.ValidationError as exc:
        raise error(error_line(source, exc)) from None


def read_toml(path: Path | str, max_bytes: int = 16 << 20) -> dict[str, Any]:
    """A TOML file, parsed: a regular file of at most `max_bytes` (a FIFO hung a run), UTF-8, valid TOML.
    OSError is left to the caller (it knows what the file was for); bad text is SchemaError."""
    raw = read_regular(path, max_bytes)
    return parse_toml(raw, str(path))


def parse_toml(raw: bytes, source: str, error: type[Exception] = SchemaError) -> dict[str, Any]:
    """TOML text: UTF-8 and valid, or `error` naming `source`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{source}: not UTF-8 text (byte {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{source}: not valid TOML: {exc}") from None


def load_toml(path: Path | str, shape: type[T], max_bytes: int = 16 << 20) -> T:
    """A TOML file read and validated against `shape`."""
    return convert(read_toml(path, max_bytes), shape, Path(path).name)


def json_schema(shape: Any) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a shape: published for documents other programs read (report@1)."""
    return msgspec.json.schema(shape)


# causes.toml and --knowledge files (knowledge/causes.py checks what only the whole knowledge can say)
Method = Literal["eagle3", "mtp", "dflash", "ngram", "draft", "eagle", "p-eagle", "suffix", "medusa"]
Remedy = Literal["engine", "launch", "drafter", "target", "workload", "change"]
Observation = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9-]*:[a-z0-9][a-z0-9-]*$")]
Weight = Annotated[float, msgspec.Meta(ge=-6.0, le=6.0)]  # causes.MAX_WEIGHT


class TableFixShape(Shape, frozen=True):
    field: str
    fixed: Annotated[tuple[str, ...], msgspec.Meta(min_length=1)]
    fixed_if_uniform: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()


class ReleaseFixShape(Shape, frozen=True):
    engine: str
    versions: str
    fix: str
    next_step: str | None = None


class CauseShape(Shape, frozen=True):
    id: Id
    title: str
    prior: Annotated[float, msgspec.Meta(ge=-8.0, le=2.0)]  # log-odds
    fix: str
    next_step: str
    decided_by: tuple[str, ...] = ()
    silence_note: str | None = None
    expected_tau: Annotated[str, msgspec.Meta(pattern=r"^(baseline|unknown|effect:[a-z0-9_]+)$")] = "unknown"
    methods: tuple[Method, ...] = ()
    suspect: bool = False
    remedy: Remedy = "change"
    ablation: str | None = None
    table_fix: TableFixShape | None = None
    release_prior: Annotated[float, msgspec.Meta(gt=0.0, le=1.0)] | None = None
    release_fix: tuple[ReleaseFixShape, ...] = ()


class RuleShape(Shape, frozen=True):
    observation: Observation
    cause: str
    weight: Weight
    text: str
    contradicts_fix: bool = False
    fix: str | None = None


class SeparatorShape(Shape, frozen=True):
    causes: Annotated[tuple[str, ...], msgspec.Meta(min_length=2, max_length=2)]
    step: str


class KnowledgeShape(Shape, frozen=True):
    """causes.toml, and each --knowledge file (whose `schema` may be left out)."""

    schema: Literal[1] = 1
    cause: tuple[CauseShape, ...] = ()
    rule: tuple[RuleShape, ...] = ()
    separator: tuple[SeparatorShape, ...] = ()
    circumstantial: tuple[Id, ...] = ()


# interpret/known_issues/*.toml (one per engine; the loader checks releases, facts and cause ids)
Text = Annotated[str, msgspec.Meta(min_length=1, pattern=r"\S")]
Runner = Literal["v1", "v2"]
Symptom = Literal[
    "all-zero",
    "cliff-after-first",
    "first-only",
    "steep",
    "uniform-low",
    "small-uniform-drop",
    "geometric",
    "worse-with-context",
    "worse-over-time",
    "temperature-collapse",
    "varies-by-request",
]
Url = Annotated[str, msgspec.Meta(pattern=r"^https://\S+$")]


class KnownIssueShape(Shape, frozen=True, kw_only=True):
    id: Id
    title: Text
    engine: str | None = None
    affected: Text
    fixed_in: Text
    runner: Runner | None = None
    methods: tuple[str, ...] = ()
    conditions: dict[str, Any] = {}
    conditions_any: dict[str, Any] = {}
    symptoms: tuple[Symptom, ...] = ()
    cause: Text
    links: Annotated[tuple[Url, ...], msgspec.Meta(min_length=1)]  # the fix first
    summary: Text
    verified: Text
    covered_by: Literal["engine-support"] | None = None
    fix: str = ""
    notes: str = ""


class RunnerDefaultShape(Shape, frozen=True):
    versions: str
    runner: Runner


class KnownIssuesFile(Shape, frozen=True):
    schema: Literal[1]
    engine: Literal["vllm", "sglang", "vllm-ascend", "tensorrt-llm"]
    runner_env: str | None = None
    runner_default: tuple[RunnerDefaultShape, ...] = ()
    issue: tuple[KnownIssueShape, ...] = ()
    source_note: str = ""


# models/engine_support.toml: what each engine release does with drafters (the loader checks the bounds)
class EngineRow(Shape, frozen=True, kw_only=True):
    engine: str
    min: str
    max: str
    dflash: bool
    dflash2: bool = False
    layer_map: Literal["", "raw", "plus-one"] = ""
    drafter_swa: Literal["", "ignored", "uniform-only", "v2-runner", "honoured", "unknown"] = ""
    causal: Literal["", "config", "per-layer"] = ""
    runner_unset: Literal["", "v1", "engine"] = ""
    runner_default: Literal["", "v1-unless-default-model", "v2"] = ""
    eagle3_aux: str = "as-is"
    verified: str = ""
    source: str = ""
    notes: str = ""
    v2_dflash: bool | None = None
    v2_error: str = ""
    mixed_error: str = ""
    mixed_forces_v2: bool = False
    dflash2_forces_v2: bool = False
    v1_rejects_mixed: bool = False
    v1_error: str = ""


class EngineSupportTable(Shape, frozen=True):
    row: tuple[EngineRow, ...] = ()


# models/architectures.toml: which release registers which drafter architecture
class ArchRow(Shape, frozen=True, kw_only=True):
    engine: str
    method: str
    model_type: str = ""
    name: str
    first: str = ""  # empty: no release read registers it
    absent_before: str = ""
    last: str = ""
    specific: bool = False  # named by one engine only: another engine without the row does not register it


class ArchitecturesTable(Shape, frozen=True):
    releases: dict[str, tuple[str, ...]] = {}  # engine -> the releases read, oldest first
    arch: tuple[ArchRow, ...] = ()


# models/aux_taps.toml: which target layers producers train on and engine releases tap
class ProducerRow(Shape, frozen=True, kw_only=True):
    name: str
    placement: str
    convention: Literal["output", "entering"]
    default: str = ""
    cite: str


class TapRow(Shape, frozen=True, kw_only=True):
    engine: str
    runner: Literal["V1", "V2", "worker"]
    min: str
    max: str
    reads: tuple[tuple[str, int], ...]  # (config key, shift to output terms)
    default: str = ""
    dflash_default: str = ""
    first_id_one_targets: tuple[str, ...] = ()
    verified: str = ""
    cite: str = ""


class AuxTapsTable(Shape, frozen=True):
    producer: tuple[ProducerRow, ...] = ()
    engine: tuple[TapRow, ...] = ()


# interpret/baselines.toml and DFLASH_DOCTOR_BASELINES files: what a drafter × target pair should reach
class CostModelShape(Shape, frozen=True, kw_only=True):
    verify_per_draft_position: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
    one_pass_draft: Annotated[float, msgspec.Meta(ge=0.0, le=5.0)]
    chained_draft_per_position: Annotated[float, msgspec.Meta(ge=0.0, le=5.0)]
    one_pass_methods: tuple[str, ...] = ()
    chained_methods: tuple[str, ...] = ()


class DrafterBaselineShape(Shape, frozen=True, kw_only=True):
    id: Text
    aliases: tuple[str, ...] = ()
    method: Text
    target: str | None = None
    k: Annotated[int, msgspec.Meta(ge=1, le=64)]
    trust: Literal["published", "community", "yours"]  # "yours": a reference the user gave (--reference)
    source: Text
    tau: Annotated[dict[str, Annotated[float, msgspec.Meta(ge=1.0)]], msgspec.Meta(min_length=1)]  # dataset -> τ
    curve: tuple[Share, ...] | None = None


class BaselinesFile(Shape, frozen=True):
    schema: Literal[1] = 1
    version: str = ""
    cost_model: CostModelShape | None = None  # required in the packaged file
    effect: dict[str, Annotated[float, msgspec.Meta(ge=1.0, le=10.0)]] = {}
    drafter: tuple[DrafterBaselineShape, ...] = ()


# interpret/reference.toml: published τ figures per method, their sources, and the band rules
class RulesShape(Shape, frozen=True, kw_only=True):
    margin: Annotated[float, msgspec.Meta(ge=0.5, le=1.0)]
    dead_excess: Annotated[float, msgspec.Meta(ge=0.0, le=0.5)]
    dead_position_1: Annotated[float, msgspec.Meta(ge=0.0, le=0.5)]
    min_figures: Annotated[int, msgspec.Meta(ge=1)] = 3


class MethodShape(Shape, frozen=True, kw_only=True):
    id: str
    learned: bool
    prior: Share
    note: str = ""


class SourceShape(Shape, frozen=True, kw_only=True):
    id: str
    title: str
    url: Url
    kind: Literal[
        "paper", "model-card", "ci-baseline", "ci-threshold", "pr-measurement", "release-notes", "benchmark-data"
    ]


class FigureShape(Shape, frozen=True, kw_only=True):
    method: str
    k: Annotated[int, msgspec.Meta(ge=1, le=64)]
    tau: Annotated[dict[str, Annotated[float, msgspec.Meta(ge=1.0)]], msgspec.Meta(min_length=1)]  # dataset -> τ
    per_position: tuple[Share, ...] = ()
    per_position_1: Share | None = None
    pair: Text  # which target and drafter
    source: str
    role: Literal["measured", "threshold"] = "measured"
    use: bool = True
    why: str = ""
    temperature: Annotated[float, msgspec.Meta(ge=0.0, le=2.0)] | None = None
    thinking: bool | None = None
    specific: bool = False


class ReferenceFile(Shape, frozen=True, kw_only=True):
    schema: Literal[1]
    version: str = ""
    rules: RulesShape
    method: tuple[MethodShape, ...] = ()
    source: tuple[SourceShape, ...] = ()
    figure: tuple[FigureShape, ...] = ()


# interpret/releases.toml: what an engine release refuses, ignores or stopped guarding at launch
class ReleaseEntry(Shape, frozen=True, kw_only=True):
    id: Text
    engine: str
    versions: str
    kind: Literal["refused", "ignored", "silent"]
    where: Literal["spec-key", "env", "method", "drafter", "target"]
    key: str = ""
    value: bool | str | None = None
    unless_value: str | None = None
    unless_method: tuple[str, ...] = ()
    only_method: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    error: str
    fix: str
    source: str


class ReleasesFile(Shape, frozen=True):
    schema: Literal[1]
    entry: tuple[ReleaseEntry, ...] = ()


# Saved results other commands read back: gate --baseline (a report or a gate result), gate --probe and
# --probe-result (a probe's or a report's acceptance block). Open tables: only what is read back is typed.
Tau = Annotated[float, msgspec.Meta(ge=1.0, le=1000.0)]  # τ ≤ k + 1, and no drafter drafts a thousand a step
Count = Annotated[int, msgspec.Meta(ge=0, le=10**15)]


class TauBlock(msgspec.Struct, frozen=True, kw_only=True):
    mean_acceptance_length: Tau | None = None


class SavedTau(msgspec.Struct, frozen=True, kw_only=True):
    """gate --baseline: a saved report@1 (its acceptance) or gate@1 (its measured block)."""

    schema: Literal["dflash-doctor/report@1", "dflash-doctor/gate@1"]
    generated_at: str = ""
    acceptance: TauBlock | None = None
    measured: TauBlock | None = None


class SavedAcceptance(msgspec.Struct, frozen=True, kw_only=True):
    mean_acceptance_length: Tau
    drafts: Annotated[float, msgspec.Meta(ge=0.0, le=1e15)]
    per_position: tuple[Share, ...] = ()
    drafted: Count | None = None
    accepted: Count | None = None
    k: int | None = None
    draft_acceptance_rate: Annotated[float, msgspec.Meta(ge=-1e15, le=1e15)] | None = None
    intervals: Count | None = None
    formats: tuple[str, ...] = ()
    min_drafts: Count | None = None


class SavedAcceptanceDoc(msgspec.Struct, frozen=True, kw_only=True):
    """gate --probe: any saved document with an acceptance block (probe@1, report@1)."""

    acceptance: SavedAcceptance | None = None


class SavedProbeDoc(msgspec.Struct, frozen=True, kw_only=True):
    """--probe-result: a probe@1 document (read back as the dict it is; the evidence keeps its own keys)."""

    schema: Literal["dflash-doctor/probe@1"]
    acceptance: dict[str, Any]
    pair: dict[str, Any] | None = None


# A host bundle's manifest.json (hosts/bundle.py; calls.jsonl keeps its own line-by-line reader)
class BundleOptions(msgspec.Struct, frozen=True, kw_only=True):
    log: str | None = None
    pid: Annotated[int, msgspec.Meta(ge=1)] | None = None


class BundleManifest(msgspec.Struct, frozen=True, kw_only=True):
    format: Literal["dflash-doctor/bundle@1"]
    host: str = "unknown"
    calls: Count | None = None
    collected_at: str = ""
    tool_version: str = ""
    note: str = ""
    options: BundleOptions = BundleOptions()


# diagnose --reference FILE: an NVIDIA Model-Optimizer speculation_profile.json (interpret/user_reference.py)
class SpeculationProfile(msgspec.Struct, frozen=True, kw_only=True):
    marginal_accept_rates: tuple[Share, ...]
    num_speculative_tokens: Annotated[int, msgspec.Meta(ge=1, le=64)]
    measured: bool | None = None
    mean_accept_length: float | None = None
    accept_length_by_k: dict[str, Any] = {}
    accept_length_model: str | None = None
    verification_method: str | None = None
    measurement_conditions: dict[str, Any] | None = None
    draft_checkpoint: Any = None
    method: Any = None


# fixtures/scenarios/NAME/scenario.toml: a ranking scenario (tests/rank/scenarios.py, benchmarks/eval_cases.py)
class ScenarioArgs(Shape, frozen=True, kw_only=True):
    log: tuple[str, ...] = ()
    drafter: str | None = None
    target: str | None = None
    engine: str | None = None
    launch: str | None = None
    dataset: str | None = None
    temperature: Annotated[float, msgspec.Meta(ge=0.0, le=2.0)] | None = None
    thinking: bool | None = None


class ScenarioExpect(Shape, frozen=True, kw_only=True):
    verdict: Verdict | None = None
    top: str | None = None
    top_evidence: tuple[str, ...] = ()
    above: tuple[tuple[str, str], ...] = ()  # (cause ranked above, cause below)
    absent: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    plan_mentions: tuple[str, ...] = ()


class ScenarioFile(Shape, frozen=True, kw_only=True):
    description: str = ""
    args: ScenarioArgs = ScenarioArgs()
    expect: ScenarioExpect = ScenarioExpect()


# report@1: the JSON document `--format json` writes (evidence.Report.to_dict). These shapes are its published
# contract (docs/report@1.schema.json, `make schema`); tests/render/test_report_schema.py holds the goldens and a
# fresh report to them. A key a reader may rely on is typed here; a payload's own fields (evidence values, advice,
# details) are open tables: each evidence kind has its own.
Json = dict[str, Any]


class Open(msgspec.Struct, frozen=True, kw_only=True):
    """A table with the keys below typed and others allowed (a payload may carry more)."""


class Contribution(Shape, frozen=True):
    observation: str
    weight: float
    text: str
    refs: tuple[str, ...] = ()


class ReportCause(Shape, frozen=True):
    id: str
    title: str
    confidence: Share | None
    evidence_for: tuple[Contribution, ...]
    evidence_against: tuple[Contribution, ...]
    fix: str
    next_step: str
    missing_evidence: tuple[str, ...] = ()
    expected_tau_if_fixed: float | None = None
    speedup_if_fixed: float | None = None
    notes: tuple[str, ...] = ()


class ReportObservation(Shape, frozen=True):
    name: str
    refs: tuple[str, ...] = ()
    detail: str = ""
    strength: float = 1.0


class ReportFinding(Shape, frozen=True):
    check: str
    status: Status
    message: str
    refs: tuple[str, ...] = ()
    remedy: str | None = None
    details: tuple[str, ...] = ()
    observations: tuple[ReportObservation, ...] = ()
    waiting_for: tuple[str, ...] = ()


class ReportSource(Open, frozen=True, kw_only=True):
    kind: str
    location: str | None = None
    host: str | None = None


class ReportEvidence(Shape, frozen=True):
    ref: str
    kind: str
    source: ReportSource
    value: Any
    summary: str = ""
    collected_at: str = ""


class ReportMissing(Shape, frozen=True):
    kind: str
    reason: str
    source: Any = None


class ReportAcceptance(Open, frozen=True, kw_only=True):
    mean_acceptance_length: float | None = None
    draft_acceptance_rate: float | None = None
    k: int | None = None
    drafts: float | None = None
    per_position: tuple[float | None, ...] = ()


class Report(Shape, frozen=True):
    """report@1, as `--format json` writes it."""

    schema: Literal["dflash-doctor/report@1"]
    tool_version: str
    generated_at: str
    target: str
    verdict: Verdict
    acceptance: ReportAcceptance | None
    causes: tuple[ReportCause, ...]
    findings: tuple[ReportFinding, ...]
    evidence: tuple[ReportEvidence, ...]
    missing_evidence: tuple[ReportMissing, ...]
    advice: Json | None
    notes: tuple[str, ...]
    plan: Json | None
    verdict_detail: Json | None


def report_json_schema() -> dict[str, Any]:
    """docs/report@1.schema.json: report@1's JSON Schema, generated from the shapes above."""
    doc = json_schema(Report)
    doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "dflash-doctor/report@1", **doc}
    return doc


if __name__ == "__main__":  # `make schema`
    import json
    import sys

    sys.stdout.write(json.dumps(report_json_schema(), indent=2, sort_keys=True) + "\n")
