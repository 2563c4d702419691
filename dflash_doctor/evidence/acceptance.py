"""The acceptance picture of a deployment (AcceptanceSummary, aggregated from log intervals or Prometheus
counters) and the engine's startup facts read from a log (StartupFacts). The log and metrics parsers
produce them (parse.frame, parse.startup)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .serialise import serial

# Below this many drafts, per-position zeros are noise (reference: root-causes.md).
MIN_DRAFTS = 200


@dataclass(frozen=True)
class StartupFacts:
    engine: str | None = None  # "vllm" | "sglang"
    version: str | None = None
    model: str | None = None
    method: str | None = None
    drafter: str | None = None
    num_speculative_tokens: int | None = None
    architecture: str | None = None
    architectures: tuple[str, ...] = ()  # every `Resolved architecture` seen (target, drafter)
    args: dict[str, Any] = field(default_factory=dict)  # redacted
    lines: tuple[str, ...] = ()  # the (redacted) lines these facts came from


@dataclass(frozen=True)
class AcceptanceSummary:
    """The acceptance picture of a deployment, aggregated correctly (counts summed, drafts-weighted)."""

    JSON_PROPERTIES: ClassVar = {"sufficient_sample": ("sufficient", "min_drafts")}

    mean_acceptance_length: float = field(metadata=serial(digits=4))
    per_position: tuple[float, ...] = field(metadata=serial(digits=4))
    drafts: float = field(metadata=serial(digits=1))
    drafted: int
    accepted: int
    k: int | None
    draft_acceptance_rate: float | None = field(metadata=serial(digits=4))  # accepted / drafted
    intervals: int
    formats: tuple[str, ...]
    engines: tuple[str, ...] = ()
    tau_first_third: float | None = field(default=None, metadata=serial(digits=4))
    tau_last_third: float | None = field(default=None, metadata=serial(digits=4))
    min_drafts: int = MIN_DRAFTS
    notes: tuple[str, ...] = ()
    per_engine: tuple[dict, ...] = ()  # one row per engine tag: engine, drafts, tau, intervals
    series: tuple[dict, ...] = ()  # per-interval τ over time (thinned to at most ~200 points)
    throughput: dict | None = None  # mean accepted / drafted tokens/s where printed
    # How the figure stands: "counts" (drafts-weighted from printed or exactly derived counts), "estimated"
    # (drafts-weighted, some weights estimated), "printed" (printed τ figures whose weight nobody printed: one unit
    # each), "upper-bound" (drafts taken as drafted / k where drafts can stop short: τ is at most the figure),
    # "per-request" (an average over requests, each weighted
    # equally: not comparable with a drafts-weighted mean, and weaker), "unrecognised-format" (read by the
    # generic key-value reader).
    standing: str = "counts"
    per_request: bool = False  # the mean is a per-request average (see standing)
    k_candidates: tuple[int, ...] = ()  # when k was derived from the arithmetic and more than one value fits
    format_details: tuple[dict, ...] = ()  # one row per format the numbers came from: id, label, meaning, …
    alternatives: tuple[dict, ...] = ()  # other printed acceptance figures, kept but not used for τ

    @property
    def sufficient(self) -> bool:
        return self.drafts >= self.min_drafts
