"""The acceptance picture of a deployment (AcceptanceSummary, aggregated from log intervals or Prometheus
counters) and the engine's startup facts read from a log (StartupFacts). The log and metrics parsers
produce them (parse.frame, parse.startup)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .serialise import to_jsonable

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

    def to_dict(self) -> dict[str, Any]:
        return {k: to_jsonable(getattr(self, k)) for k in self.__dataclass_fields__}


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
    per_engine: tuple[dict, ...] = ()  # one row per engine tag: engine, drafts, tau, intervals
    series: tuple[dict, ...] = ()  # per-interval τ over time (thinned to at most ~200 points)
    throughput: dict | None = None  # mean accepted / drafted tokens/s where printed
    # How the figure stands: "counts" (drafts-weighted from printed or exactly derived counts), "estimated"
    # (drafts-weighted, some weights estimated), "per-request" (an average over requests, each weighted
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

    def to_dict(self) -> dict[str, Any]:
        def r(x, n=4):
            return None if x is None or x != x else round(x, n)

        return {
            "mean_acceptance_length": r(self.mean_acceptance_length),
            "per_position": [round(x, 4) for x in self.per_position],
            "drafts": round(self.drafts, 1),
            "drafted": self.drafted,
            "accepted": self.accepted,
            "k": self.k,
            "draft_acceptance_rate": r(self.draft_acceptance_rate),
            "intervals": self.intervals,
            "formats": list(self.formats),
            "engines": list(self.engines),
            "tau_first_third": r(self.tau_first_third),
            "tau_last_third": r(self.tau_last_third),
            "sufficient_sample": self.sufficient,
            "min_drafts": self.min_drafts,
            "notes": list(self.notes),
            "per_engine": [dict(e) for e in self.per_engine],
            "series": [dict(s) for s in self.series],
            "throughput": self.throughput,
            "standing": self.standing,
            "per_request": self.per_request,
            "k_candidates": list(self.k_candidates),
            "format_details": [dict(f) for f in self.format_details],
            "alternatives": [dict(a) for a in self.alternatives],
        }
