"""Records produced by the log and metrics parsers, and the aggregated acceptance picture."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Below this many drafts, per-position zeros are noise (reference: root-causes.md).
MIN_DRAFTS = 200


@dataclass(frozen=True)
class SpecInterval:
    """One stats interval of spec-decode counters (per interval, never cumulative)."""

    fmt: str  # e.g. "vllm-v1-0.10.2"
    source: str
    line_no: int
    timestamp: str | None
    engine: str | None  # engine index / DP rank tag when the line carries one
    drafts: float  # number of drafts (request, step pairs) in the interval
    drafted: int  # draft tokens proposed
    accepted: int  # accepted draft tokens (bonus excluded)
    k: int | None  # speculative tokens per draft
    per_position: tuple[float, ...] = ()  # unconditional rates as printed
    printed_mean: float | None = None  # mean acceptance length as printed (normalised to include bonus)
    accepted_throughput: float | None = None
    drafted_throughput: float | None = None

    @property
    def per_position_counts(self) -> tuple[float, ...]:
        return tuple(r * self.drafts for r in self.per_position)


@dataclass(frozen=True)
class StartupFacts:
    engine: str | None = None  # "vllm" | "sglang"
    version: str | None = None
    model: str | None = None
    method: str | None = None
    drafter: str | None = None
    num_speculative_tokens: int | None = None
    architecture: str | None = None
    args: dict[str, Any] = field(default_factory=dict)  # redacted
    lines: tuple[str, ...] = ()  # the (redacted) lines these facts came from


@dataclass(frozen=True)
class Malformed:
    source: str
    line_no: int
    reason: str
    text: str  # redacted, truncated


@dataclass(frozen=True)
class AcceptanceSummary:
    """The acceptance picture of a deployment, aggregated correctly (counts summed, drafts-weighted)."""

    mean_acceptance_length: float
    per_position: tuple[float, ...]
    drafts: float
    drafted: int
    accepted: int
    k: int | None
    draft_acceptance_rate: float | None  # accepted / drafted
    intervals: int
    formats: tuple[str, ...]
    engines: tuple[str, ...] = ()
    tau_first_third: float | None = None
    tau_last_third: float | None = None
    min_drafts: int = MIN_DRAFTS
    notes: tuple[str, ...] = ()

    @property
    def sufficient(self) -> bool:
        return self.drafts >= self.min_drafts

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean_acceptance_length": round(self.mean_acceptance_length, 4),
            "per_position": [round(r, 4) for r in self.per_position],
            "drafts": round(self.drafts, 1),
            "drafted": self.drafted,
            "accepted": self.accepted,
            "k": self.k,
            "draft_acceptance_rate": None if self.draft_acceptance_rate is None else round(self.draft_acceptance_rate, 4),
            "intervals": self.intervals,
            "formats": list(self.formats),
            "engines": list(self.engines),
            "tau_first_third": None if self.tau_first_third is None else round(self.tau_first_third, 4),
            "tau_last_third": None if self.tau_last_third is None else round(self.tau_last_third, 4),
            "sufficient_sample": self.sufficient,
            "min_drafts": self.min_drafts,
            "notes": list(self.notes),
        }
