"""Records produced by the log and metrics parsers, and the aggregated acceptance picture.

`Row` is one interval as the scanners produce it (a NamedTuple: cheap to build by the hundred
thousand and to send between processes); `SpecInterval` is the same with its per-position rates
decoded, for callers. `FIELDS` names their fields, in order, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

# A token count above this in one interval is not a measurement (SECURITY.md: a forged or damaged line).
MAX_COUNT = 10**15


class Row(NamedTuple):
    """One interval as scanned. `per_position` may still be the bytes the engine printed (the fast
    paths keep them so; `pp_tuple` decodes them)."""

    fmt: str  # the format variant, e.g. "vllm-v1-0.10.2" (a registry format's id or one of its variants)
    source: str
    line_no: int | None
    timestamp: str | None
    engine: str | None
    drafts: float | None
    drafted: int | None
    accepted: float | None
    k: int | None
    per_position: Any
    printed_mean: float | None
    accepted_throughput: float | None
    drafted_throughput: float | None
    emitted: float | None
    offset: int | None
    estimated: bool
    per_request: bool = False  # the printed figure averages requests (each weighted equally): not drafts-weighted


FIELDS = Row._fields


def pp_tuple(pp) -> tuple[float, ...]:
    """Per-position rates as floats (the fast paths keep them as the printed bytes)."""
    if isinstance(pp, bytes):
        return tuple(float(x) for x in pp.split(b","))
    if isinstance(pp, str):
        return tuple(float(x) for x in pp.split(","))
    return tuple(pp)


@dataclass(frozen=True)
class SpecInterval:
    """One stats interval of spec-decode counters (per interval, never cumulative).

    `accepted` is what the engine printed. For vLLM V0 it also counts matches after a rejection, so
    the τ numerator is `emitted - drafts` there; `prefix_accepted` hides that difference.
    """

    fmt: str  # e.g. "vllm-v1-0.10.2"
    source: str
    line_no: int | None  # None when the stream was scanned by byte offset only
    timestamp: str | None
    engine: str | None  # process / DP rank / service tag the line carries
    drafts: float | None  # (request, step) pairs that carried drafts; None when not derivable
    drafted: int | None  # draft tokens proposed
    accepted: float | None  # accepted draft tokens as printed (bonus excluded)
    k: int | None  # speculative tokens per draft
    per_position: tuple[float, ...] = ()  # unconditional rates
    printed_mean: float | None = None  # mean acceptance length, normalised to include the bonus token
    accepted_throughput: float | None = None
    drafted_throughput: float | None = None
    emitted: float | None = None  # V0: tokens emitted (accepted prefix + bonus) in the interval
    offset: int | None = None  # byte offset of the line in its source
    estimated: bool = False  # drafts (and so the weight) is an estimate, not a count
    per_request: bool = False  # a per-request average (each request weighted equally), not drafts-weighted

    @classmethod
    def from_row(cls, row: Row) -> SpecInterval:
        return cls(*row[:9], pp_tuple(row[9]), *row[10:])

    @property
    def prefix_accepted(self) -> float | None:
        """Accepted tokens that extend the output (τ - 1 = prefix_accepted / drafts)."""
        if self.emitted is not None and self.drafts is not None:
            return self.emitted - self.drafts
        if self.accepted is not None:
            return float(self.accepted)
        if self.printed_mean is not None and self.drafts is not None:
            return (self.printed_mean - 1.0) * self.drafts
        return None

    @property
    def per_position_counts(self) -> tuple[float, ...]:
        return tuple(r * (self.drafts or 0.0) for r in self.per_position)


@dataclass(frozen=True)
class Malformed:
    """A metrics-like line that was not used. `rejected`: its numbers are impossible (beyond the count
    cap, more accepted than drafted, a jump by orders of magnitude): forged or damaged, which a gate
    must not pass; otherwise it was cut short or matched no known variant."""

    source: str
    line_no: int | None
    reason: str
    text: str  # redacted, truncated
    offset: int | None = None
    rejected: bool = False

    @property
    def where(self) -> str:
        if self.line_no is not None:
            return f"{self.source}:{self.line_no}"
        return f"{self.source}@byte {self.offset}"


@dataclass(frozen=True)
class Salvage:
    """A metrics line or block read although part of it was missing: what was missing, and what
    was derived in its place."""

    source: str
    line_no: int | None
    offset: int | None
    fmt: str
    missing: str  # e.g. "the per-position list and the average rate (line cut after Drafted)"
    derived: str = ""  # e.g. "k = 5 (the only k <= 32 that divides Drafted and gives the printed mean)"

    @property
    def where(self) -> str:
        if self.line_no is not None:
            return f"{self.source}:{self.line_no}"
        return f"{self.source}@byte {self.offset}"

    def to_dict(self) -> dict[str, Any]:
        return {"where": self.where, "format": self.fmt, "missing": self.missing, "derived": self.derived}
