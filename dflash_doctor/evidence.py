"""The types every stage speaks: Evidence in, Findings from checks, Causes from ranking, one Report out.

Everything here is a frozen dataclass. Absence of evidence is a value (`Missing`), never a pass.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engines.analysis import EngineAnalysis
    from .models.engine_support import EngineSupport
    from .models.facts import DrafterFacts, TargetFacts
    from .parse.launch import LaunchConfig
    from .parse.records import AcceptanceSummary, StartupFacts
    from .payloads import (
        EngineId,
        Environment,
        GpuInventory,
        HostSummary,
        MetricsScrape,
        ProbeResult,
        Processes,
        ScanStats,
        Workload,
    )

REPORT_SCHEMA = "dflash-doctor/report@1"


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


class Kind(str, enum.Enum):
    """What a piece of evidence is about. Checks declare the kinds they need."""

    ACCEPTANCE = "acceptance"  # aggregated spec-decode acceptance (parse.AcceptanceSummary)
    LOG_SCAN = "log-scan"  # what a log scan saw: formats, line counts, malformed lines (parse.ScanStats)
    STARTUP = "startup"  # engine startup facts from a log (parse.StartupFacts)
    ENGINE = "engine"  # engine name + version (EngineId)
    ENGINE_SUPPORT = "engine-support"  # the support-table row for that engine version
    ENGINE_SOURCE = "engine-source"  # probes of the installed engine's source code
    LAUNCH = "launch"  # the serve command line / speculative config
    DRAFTER = "drafter"  # drafter config + weight facts (models.DrafterFacts)
    TARGET = "target"  # target config facts (models.TargetFacts)
    PROCESS = "process"  # serving processes found on a host
    ENVIRONMENT = "environment"  # relevant environment variables (redacted)
    GPU = "gpu"
    METRICS = "metrics"  # Prometheus scrape(s)
    PROBE = "probe"  # live draft/verify probe result
    HOST = "host"  # host identity (uname, hostname)
    WORKLOAD = "workload"  # what the requests looked like (temperature, thinking, language)


# The one payload type of each kind ("module:Class", imported when first checked). `EvidenceSet.add`
# refuses anything else, so every reader of a kind can rely on its type.
PAYLOAD_TYPES: dict[Kind, str] = {
    Kind.ACCEPTANCE: "dflash_doctor.parse.records:AcceptanceSummary",
    Kind.LOG_SCAN: "dflash_doctor.payloads:ScanStats",
    Kind.STARTUP: "dflash_doctor.parse.records:StartupFacts",
    Kind.ENGINE: "dflash_doctor.payloads:EngineId",
    Kind.ENGINE_SUPPORT: "dflash_doctor.models.engine_support:EngineSupport",
    Kind.ENGINE_SOURCE: "dflash_doctor.engines.analysis:EngineAnalysis",
    Kind.LAUNCH: "dflash_doctor.parse.launch:LaunchConfig",
    Kind.DRAFTER: "dflash_doctor.models.facts:DrafterFacts",
    Kind.TARGET: "dflash_doctor.models.facts:TargetFacts",
    Kind.PROCESS: "dflash_doctor.payloads:Processes",
    Kind.ENVIRONMENT: "dflash_doctor.payloads:Environment",
    Kind.GPU: "dflash_doctor.payloads:GpuInventory",
    Kind.METRICS: "dflash_doctor.payloads:MetricsScrape",
    Kind.PROBE: "dflash_doctor.payloads:ProbeResult",
    Kind.HOST: "dflash_doctor.payloads:HostSummary",
    Kind.WORKLOAD: "dflash_doctor.payloads:Workload",
}
_TYPES: dict[Kind, type] = {}


def payload_type(kind: Kind) -> type:
    t = _TYPES.get(kind)
    if t is None:
        module, _, name = PAYLOAD_TYPES[kind].partition(":")
        t = _TYPES[kind] = getattr(importlib.import_module(module), name)
    return t


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
    """One fact gathered about the deployment. `value` is a typed payload (a dataclass with to_dict())."""

    ref: str  # short id cited by findings and causes, e.g. "E1"
    kind: Kind
    summary: str
    source: Source
    value: Any = None
    collected_at: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "kind": self.kind.value,
            "summary": self.summary,
            "source": dataclasses.asdict(self.source),
            "collected_at": self.collected_at,
            "value": to_jsonable(self.value),
        }


@dataclass(frozen=True)
class Missing:
    """Evidence that was asked for or would help, but is not there — and why."""

    kind: Kind
    reason: str
    source: Source | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "reason": self.reason,
            "source": dataclasses.asdict(self.source) if self.source else None,
        }


class EvidenceSet:
    """The evidence gathered for one deployment. Collectors add to it; checks only read it.

    `baselines` is the reference data in force for this diagnosis (the packaged pair baselines plus the
    user's extra files, from Settings): knowledge the checks compare evidence with, not evidence."""

    def __init__(self, label: str = "local", baselines: Any = None) -> None:
        self.label = label
        self._baselines = baselines
        self._items: list[Evidence] = []
        self._missing: dict[Kind, Missing] = {}
        # Inputs the user named that could not be read or used: (input, reason). Each becomes a
        # could-not-check finding, so nothing the user supplied is ever silently ignored.
        self.collection_errors: list[tuple[str, str]] = []
        self.notes: list[str] = []
        # Set when the user pressed Ctrl-C during collection: the report holds what was gathered before.
        self.interrupted = False

    def add(self, kind: Kind, summary: str, source: Source, value: Any) -> Evidence:
        want = payload_type(kind)
        if not isinstance(value, want):
            raise TypeError(f"{kind.value} evidence must be a {want.__name__}, not {type(value).__name__}")
        ev = Evidence(ref=f"E{len(self._items) + 1}", kind=kind, summary=summary, source=source, value=value)
        self._items.append(ev)
        self._missing.pop(kind, None)
        return ev

    def missing(self, kind: Kind, reason: str, source: Source | None = None) -> None:
        """Record that `kind` could not be gathered. Later evidence of the kind supersedes this."""
        if not self.has(kind):
            self._missing[kind] = Missing(kind, reason, source)

    def named(self, kind: Kind) -> str | None:
        """What the user named for `kind` when it could not be read (an uncached `--drafter` repo id): a name
        the ranking can still match a baseline with, and the plan can put into commands."""
        m = self._missing.get(kind)
        return m.source.location if m is not None and m.source is not None and m.source.kind == "flag" else None

    def could_not_collect(self, what: str, reason: str, kind: Kind | None = None) -> None:
        self.collection_errors.append((what, reason))
        if kind is not None:
            self.missing(kind, reason)

    @property
    def baselines(self):
        """The baselines set for this diagnosis, or None (rank.baselines.in_force supplies the packaged ones)."""
        return self._baselines

    @baselines.setter
    def baselines(self, value) -> None:
        self._baselines = value

    def has(self, kind: Kind) -> bool:
        return any(e.kind == kind for e in self._items)

    def get(self, kind: Kind) -> Evidence | None:
        """The most recently added evidence of a kind."""
        for ev in reversed(self._items):
            if ev.kind == kind:
                return ev
        return None

    def value(self, kind: Kind) -> Any:
        ev = self.get(kind)
        return ev.value if ev else None

    def ref(self, kind: Kind) -> str | None:
        ev = self.get(kind)
        return ev.ref if ev else None

    # Typed reads, one per kind (the newest evidence of the kind, or None).
    def acceptance(self) -> AcceptanceSummary | None:
        return self.value(Kind.ACCEPTANCE)

    def log_scan(self) -> ScanStats | None:
        return self.value(Kind.LOG_SCAN)

    def startup(self) -> StartupFacts | None:
        return self.value(Kind.STARTUP)

    def engine(self) -> EngineId | None:
        return self.value(Kind.ENGINE)

    def engine_support(self) -> EngineSupport | None:
        return self.value(Kind.ENGINE_SUPPORT)

    def engine_source(self) -> EngineAnalysis | None:
        return self.value(Kind.ENGINE_SOURCE)

    def launch(self) -> LaunchConfig | None:
        return self.value(Kind.LAUNCH)

    def drafter(self) -> DrafterFacts | None:
        return self.value(Kind.DRAFTER)

    def target(self) -> TargetFacts | None:
        return self.value(Kind.TARGET)

    def processes(self) -> Processes | None:
        return self.value(Kind.PROCESS)

    def environment(self) -> Environment | None:
        return self.value(Kind.ENVIRONMENT)

    def gpu(self) -> GpuInventory | None:
        return self.value(Kind.GPU)

    def metrics(self) -> MetricsScrape | None:
        return self.value(Kind.METRICS)

    def probe(self) -> ProbeResult | None:
        return self.value(Kind.PROBE)

    def host(self) -> HostSummary | None:
        return self.value(Kind.HOST)

    def workload(self) -> Workload | None:
        return self.value(Kind.WORKLOAD)

    def all(self, kind: Kind | None = None) -> list[Evidence]:
        return [e for e in self._items if kind is None or e.kind == kind]

    def why_missing(self, kind: Kind) -> str:
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
    # far as its counts settle it (rank/readings.py); facts read from a config or a source are 1.
    strength: float = 1.0


@dataclass(frozen=True)
class Finding:
    check_id: str
    status: Status
    message: str
    refs: tuple[str, ...] = ()
    remedy: str | None = None
    details: tuple[str, ...] = ()
    observations: tuple[Observation, ...] = ()
    # For a check that did not run: the evidence kinds it waits for (the report folds these per input).
    waiting_for: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check_id,
            "status": self.status.value,
            "message": self.message,
            "refs": list(self.refs),
            "remedy": self.remedy,
            "details": list(self.details),
            "observations": [dataclasses.asdict(o) for o in self.observations],
            "waiting_for": list(self.waiting_for),
        }


@dataclass(frozen=True)
class Contribution:
    """One piece of evidence moving one cause: weight is a natural-log likelihood ratio."""

    observation: str
    weight: float
    text: str
    refs: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "observation": self.observation,
            "weight": round(self.weight, 3),
            "text": self.text,
            "refs": list(self.refs),
        }


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    confidence: float
    evidence_for: tuple[Contribution, ...]
    evidence_against: tuple[Contribution, ...]
    fix: str
    next_step: str
    missing_evidence: tuple[str, ...] = ()
    expected_tau_if_fixed: float | None = None
    speedup_if_fixed: float | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "confidence": round(self.confidence, 3),
            "evidence_for": [c.to_dict() for c in self.evidence_for],
            "evidence_against": [c.to_dict() for c in self.evidence_against],
            "fix": self.fix,
            "next_step": self.next_step,
            "missing_evidence": list(self.missing_evidence),
            "expected_tau_if_fixed": None
            if self.expected_tau_if_fixed is None
            else round(self.expected_tau_if_fixed, 2),
            "speedup_if_fixed": None if self.speedup_if_fixed is None else round(self.speedup_if_fixed, 2),
            "notes": list(self.notes),
        }


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

    @property
    def checks_passed(self) -> int:
        return sum(1 for f in self.findings if f.status == Status.OK)

    def to_dict(self) -> dict[str, Any]:
        acc = to_jsonable(self.acceptance) if self.acceptance is not None else None
        return {
            "schema": REPORT_SCHEMA,
            "tool_version": self.tool_version,
            "generated_at": self.generated_at,
            "target": self.target,
            "verdict": self.verdict.value,
            "acceptance": acc,
            "causes": [c.to_dict() for c in self.causes],
            "findings": [f.to_dict() for f in self.findings],
            "evidence": [e.to_dict() for e in self.evidence],
            "missing_evidence": [m.to_dict() for m in self.missing],
            "advice": to_jsonable(self.advice) if self.advice else None,
            "notes": list(self.notes),
            "plan": self.plan.to_dict() if self.plan is not None else None,
            "verdict_detail": to_jsonable(self.verdict_detail) if self.verdict_detail else None,
        }


def to_jsonable(value: Any) -> Any:
    """Turn payloads (dataclasses, enums, tuples, numpy scalars) into JSON-ready structures."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return value
    if isinstance(value, enum.Enum):
        return value.value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_jsonable(to_dict())  # again: a to_dict may hold inf/NaN or tuples (RopeFacts did)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        return to_jsonable(item())
    return str(value)


def refs_of(items: Iterable[Evidence | None]) -> tuple[str, ...]:
    return tuple(e.ref for e in items if e is not None)
