"""The types every stage speaks: Evidence in, Findings from checks, Causes from ranking, one Report out.

Everything here is a frozen dataclass. Absence of evidence is a value (`Missing`), never a pass.
Evidence is keyed by its payload type: a collector adds a `DrafterFacts`, a check asks
`evidence.get(DrafterFacts)`. The payload types live in this package's other modules (payloads.py,
acceptance.py, model_facts.py, engine_facts.py), below every producer and reader; a new kind of
evidence is a dataclass there, a `Kind` member (its name in reports) and a row of PAYLOAD_TYPES.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from .acceptance import AcceptanceSummary, StartupFacts
from .engine_facts import EngineAnalysis, EngineSupport
from .model_facts import DrafterFacts, TargetFacts
from .payloads import (
    EngineFailures,
    EngineId,
    Environment,
    GpuInventory,
    HostSummary,
    LaunchConfig,
    MetricsScrape,
    ProbeResult,
    Processes,
    ScanStats,
    Workload,
)
from .serialise import serial, to_jsonable

REPORT_SCHEMA = "dflash-doctor/report@1"


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


class Kind(str, enum.Enum):
    """The name of a payload type, as reports, check listings and causes.toml spell it."""

    ACCEPTANCE = "acceptance"  # aggregated spec-decode acceptance (AcceptanceSummary)
    LOG_SCAN = "log-scan"  # what a log scan saw: formats, line counts, malformed lines (ScanStats)
    STARTUP = "startup"  # engine startup facts from a log (StartupFacts)
    ENGINE = "engine"  # engine name + version (EngineId)
    ENGINE_SUPPORT = "engine-support"  # the support-table row for that engine version (EngineSupport)
    ENGINE_SOURCE = "engine-source"  # what the installed engine's source does (EngineAnalysis)
    LAUNCH = "launch"  # the serve command line / speculative config (LaunchConfig)
    DRAFTER = "drafter"  # drafter config + weight facts (DrafterFacts)
    TARGET = "target"  # target config facts (TargetFacts)
    PROCESS = "process"  # serving processes found on a host (Processes)
    ENVIRONMENT = "environment"  # relevant environment variables, redacted (Environment)
    GPU = "gpu"  # (GpuInventory)
    METRICS = "metrics"  # Prometheus scrape(s) (MetricsScrape)
    PROBE = "probe"  # live draft/verify probe result (ProbeResult)
    HOST = "host"  # host identity and what collecting cost (HostSummary)
    WORKLOAD = "workload"  # what the requests looked like: temperature, thinking, dataset (Workload)
    ENGINE_FAILURES = "engine-failures"  # the engine's failure lines from a log with no metrics (EngineFailures)


# Evidence is keyed by its payload type (`evidence.get(DrafterFacts)`); each type has one Kind, its name.
PAYLOAD_TYPES: dict[Kind, type] = {
    Kind.ACCEPTANCE: AcceptanceSummary,
    Kind.LOG_SCAN: ScanStats,
    Kind.STARTUP: StartupFacts,
    Kind.ENGINE: EngineId,
    Kind.ENGINE_SUPPORT: EngineSupport,
    Kind.ENGINE_SOURCE: EngineAnalysis,
    Kind.LAUNCH: LaunchConfig,
    Kind.DRAFTER: DrafterFacts,
    Kind.TARGET: TargetFacts,
    Kind.PROCESS: Processes,
    Kind.ENVIRONMENT: Environment,
    Kind.GPU: GpuInventory,
    Kind.METRICS: MetricsScrape,
    Kind.PROBE: ProbeResult,
    Kind.HOST: HostSummary,
    Kind.WORKLOAD: Workload,
    Kind.ENGINE_FAILURES: EngineFailures,
}
_KIND_OF: dict[type, Kind] = {t: k for k, t in PAYLOAD_TYPES.items()}

P = TypeVar("P")


def kind_of(payload_type: type) -> Kind:
    """The Kind (the name) of a payload type; a TypeError for a type that is not a payload."""
    kind = _KIND_OF.get(payload_type)
    if kind is None:
        raise TypeError(f"{getattr(payload_type, '__name__', payload_type)!s} is not an evidence payload type")
    return kind


@dataclass(frozen=True)
class Source:
    """Where a piece of evidence came from: a file, a host, a command, a URL or a CLI flag."""

    kind: str  # "file" | "host" | "command" | "url" | "flag" | "bundle" | "derived"
    location: str
    host: str | None = None

    def describe(self) -> str:
        where = f"{self.host}:" if self.host and self.host != "local" else ""
        return f"{self.kind} {where}{self.location}"


@dataclass(frozen=True)
class Evidence:
    """One fact gathered about the deployment. `value` is its payload, an instance of a PAYLOAD_TYPES class."""

    ref: str  # short id cited by findings and causes, e.g. "E1"
    kind: Kind
    summary: str
    source: Source
    collected_at: str = field(default_factory=now_iso)
    value: Any = None


@dataclass(frozen=True)
class Missing:
    """Evidence that was asked for or would help, but is not there — and why."""

    kind: Kind
    reason: str
    source: Source | None = None


class MissingEvidence(LookupError):
    """A check read a payload it did not declare in `needs` (a bug in the check, not in the input)."""


class EvidenceSet:
    """The evidence gathered for one deployment. Collectors add to it; checks only read it.

    `baselines` is the reference data in force for this diagnosis (the packaged pair baselines plus the
    user's extra files, from Settings): knowledge the checks compare evidence with, not evidence."""

    def __init__(self, label: str = "local", baselines: Any = None) -> None:
        self.label = label
        # The host collector's threads add at once: a ref is the count so far, so numbering and appending
        # are one step, or two items could share an E-number.
        self._lock = threading.Lock()
        self._baselines = baselines
        self._items: list[Evidence] = []
        self._missing: dict[Kind, Missing] = {}
        # kinds that do not exist for this deployment (an n-gram lookup has no drafter model): their checks do not apply
        self._inapplicable: dict[Kind, str] = {}
        # Inputs the user named that could not be read or used: (input, reason). Each becomes a
        # could-not-check finding, so nothing the user supplied is ever silently ignored.
        self.collection_errors: list[tuple[str, str]] = []
        self.notes: list[str] = []
        # Set when the user pressed Ctrl-C during collection: the report holds what was gathered before.
        self.interrupted = False
        # When the evidence was gathered, if not now: a replayed bundle's is its manifest's collected_at.
        self.as_of: str | None = None

    def add(self, summary: str, source: Source, value: Any) -> Evidence:
        """Record `value`, a payload (one of PAYLOAD_TYPES); its type says what kind of evidence it is."""
        kind = kind_of(type(value))
        with self._lock:
            ev = Evidence(
                ref=f"E{len(self._items) + 1}",
                kind=kind,
                summary=summary,
                source=source,
                collected_at=self.as_of or now_iso(),
                value=value,
            )
            self._items.append(ev)
            self._missing.pop(kind, None)
            self._inapplicable.pop(kind, None)
        return ev

    def missing(self, payload_type: type, reason: str, source: Source | None = None) -> None:
        """Record that evidence of `payload_type` could not be gathered. Later evidence of it supersedes this."""
        if not self.has(payload_type) and kind_of(payload_type) not in self._inapplicable:
            kind = kind_of(payload_type)
            self._missing[kind] = Missing(kind, reason, source)

    def inapplicable(self, payload_type: type, reason: str) -> None:
        """Record that no evidence of `payload_type` exists for this deployment (not that it could not be read): the
        checks that need it do not apply. Later evidence of it supersedes this."""
        if not self.has(payload_type):
            self._inapplicable[kind_of(payload_type)] = reason
            self._missing.pop(kind_of(payload_type), None)

    def why_inapplicable(self, payload_type: type) -> str | None:
        return self._inapplicable.get(kind_of(payload_type))

    def named(self, payload_type: type) -> str | None:
        """What the user named for `payload_type` when it could not be read (an uncached `--drafter` repo id): a
        name the ranking can still match a baseline with, and the plan can put into commands."""
        m = self._missing.get(kind_of(payload_type))
        return m.source.location if m is not None and m.source is not None and m.source.kind == "flag" else None

    def could_not_collect(self, what: str, reason: str, payload_type: type | None = None) -> None:
        self.collection_errors.append((what, reason))
        if payload_type is not None:
            self.missing(payload_type, reason)

    @property
    def baselines(self):
        """The baselines set for this diagnosis, or None (interpret.baselines.in_force supplies the packaged ones)."""
        return self._baselines

    @baselines.setter
    def baselines(self, value) -> None:
        self._baselines = value

    def has(self, payload_type: type) -> bool:
        kind = kind_of(payload_type)
        return any(e.kind == kind for e in self._items)

    def item(self, payload_type: type) -> Evidence | None:
        """The most recently added evidence of a payload type (its ref, summary and source with the value)."""
        kind = kind_of(payload_type)
        for ev in reversed(self._items):
            if ev.kind == kind:
                return ev
        return None

    def get(self, payload_type: type[P]) -> P | None:
        """The most recently added payload of a type, or None."""
        ev = self.item(payload_type)
        return ev.value if ev else None

    def require(self, payload_type: type[P]) -> P:
        """The payload a check declared in `needs` (the runner ran it only with one present). Absent, it is a
        check reading what it did not declare: MissingEvidence, reported as that check's crash."""
        ev = self.require_item(payload_type)
        return ev.value

    def require_item(self, payload_type: type) -> Evidence:
        """The evidence item of a payload type a check declared in `needs` (see `require`)."""
        ev = self.item(payload_type)
        if ev is None:
            raise MissingEvidence(f"no {kind_of(payload_type).value} evidence, which the check did not declare")
        return ev

    def ref(self, payload_type: type) -> str | None:
        ev = self.item(payload_type)
        return ev.ref if ev else None

    def all(self, payload_type: type | None = None) -> list[Evidence]:
        kind = None if payload_type is None else kind_of(payload_type)
        return [e for e in self._items if kind is None or e.kind == kind]

    def why_missing(self, payload_type: type) -> str:
        kind = kind_of(payload_type)
        m = self._missing.get(kind)
        return m.reason if m else f"no {kind.value} evidence was supplied"

    @property
    def missing_items(self) -> list[Missing]:
        return list(self._missing.values())

    def __iter__(self) -> Iterator[Evidence]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class Status(str, enum.Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    COULD_NOT_CHECK = "could-not-check"
    # Nothing to check here: the check does not apply to this deployment, or another check decides (the
    # installed source outranks the release table). Never shown as a pass.
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class Observation:
    """A named fact a check established, e.g. ``signature:cliff-after-first``.

    The ranking's data files map observation names to cause contributions; `detail` is the
    human-readable citation shown beside the contribution.
    """

    name: str
    detail: str
    refs: tuple[str, ...] = ()
    # How sure the evidence makes this observation (0–1): a reading of the acceptance numbers holds only as
    # far as its counts settle it (interpret/readings.py); facts read from a config or a source are 1.
    strength: float = 1.0


@dataclass(frozen=True)
class Finding:
    check_id: str = field(metadata=serial(name="check"))
    status: Status
    message: str
    refs: tuple[str, ...] = ()
    remedy: str | None = None
    details: tuple[str, ...] = ()
    observations: tuple[Observation, ...] = ()
    # For a check that did not run: the evidence kinds it waits for (the report folds these per input).
    waiting_for: tuple[str, ...] = ()


@dataclass(frozen=True)
class Contribution:
    """One piece of evidence moving one cause: weight is a natural-log likelihood ratio."""

    observation: str
    weight: float = field(metadata=serial(digits=3))
    text: str
    refs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    confidence: float = field(metadata=serial(digits=3))
    evidence_for: tuple[Contribution, ...]
    evidence_against: tuple[Contribution, ...]
    fix: str
    next_step: str
    missing_evidence: tuple[str, ...] = ()
    expected_tau_if_fixed: float | None = field(default=None, metadata=serial(digits=2))
    speedup_if_fixed: float | None = field(default=None, metadata=serial(digits=2))
    notes: tuple[str, ...] = ()


class Verdict(str, enum.Enum):
    PROBLEM = "problem"
    HEALTHY = "healthy"
    INSUFFICIENT_DATA = "insufficient-data"


@dataclass(frozen=True)
class Report:
    target: str  # what was diagnosed: "local", a host, a bundle, "files"
    verdict: Verdict
    acceptance: Any  # parse.AcceptanceSummary or None
    findings: tuple[Finding, ...]
    causes: tuple[Cause, ...]
    evidence: tuple[Evidence, ...]
    missing: tuple[Missing, ...]
    notes: tuple[str, ...] = ()
    advice: Mapping[str, Any] | None = None
    tool_version: str = ""
    generated_at: str = field(default_factory=now_iso)
    plan: Any = None  # rank.plan.FixPlan: the answer a person acts on
    verdict_detail: Mapping[str, Any] | None = None  # how sure the verdict is; what input would separate the top two

    @property
    def exit_code(self) -> int:
        """The verdict as an exit status (README "Exit codes"): problem 1, healthy 0, insufficient-data 3."""
        return {Verdict.PROBLEM: 1, Verdict.HEALTHY: 0}.get(self.verdict, 3)

    def to_dict(self) -> dict[str, Any]:
        """The report@1 document: its schema line first, the keys in the order readers know."""
        acc = to_jsonable(self.acceptance) if self.acceptance is not None else None
        return {
            "schema": REPORT_SCHEMA,
            "tool_version": self.tool_version,
            "generated_at": self.generated_at,
            "target": self.target,
            "verdict": self.verdict.value,
            "acceptance": acc,
            "causes": to_jsonable(self.causes),
            "findings": to_jsonable(self.findings),
            "evidence": to_jsonable(self.evidence),
            "missing_evidence": to_jsonable(self.missing),
            "advice": to_jsonable(self.advice) if self.advice else None,
            "notes": list(self.notes),
            "plan": to_jsonable(self.plan),
            "verdict_detail": to_jsonable(self.verdict_detail) if self.verdict_detail else None,
        }
