"""What is known about the serving engine: the release table's row for its version (EngineSupport, from
models.engine_support) and what its installed source does with drafters (EngineAnalysis, from
engines.analysis)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engines import vllm as vl
    from ..engines.answers import Answer, VersionReading


@dataclass(frozen=True)
class EngineSupport:
    engine: str
    version: str
    range: str  # the matched row's version range, e.g. "0.20.0–0.21.99"
    dflash: bool
    layer_map: str | None
    drafter_swa: str | None
    eagle3_aux: str
    verified: str | None
    source: str
    notes: str
    dflash2: bool = False
    causal: str | None = None
    v2_dflash: bool | None = None  # vLLM: the V2 runner accepts method dflash
    runner_unset: str | None = None  # vLLM: "v1" | "engine"
    runner_default: str | None = None  # vLLM: "v1-unless-default-model" | "v2"
    mixed_forces_v2: bool = False
    dflash2_forces_v2: bool = False
    v1_rejects_mixed: bool = False
    mixed_error: str | None = None
    v1_error: str | None = None
    v2_error: str | None = None

    def source_about(self, *words: str) -> tuple[str, ...]:
        """The parts of `source` that mention any of `words` (for citing the right line of the source)."""
        parts = [p.strip() for p in self.source.split(";") if p.strip()]
        return tuple(p for p in parts if any(w in p for w in words))


@dataclass(frozen=True)
class EngineAnalysis:
    engine: str
    version: VersionReading
    dflash: Answer  # value: drafter architectures the release loads for DFlash; () = no DFlash at all
    layer_map: dict[str, Answer]  # runner ("V1", "V2"; SGLang: "worker") -> "plus-one" | "raw" | "offset +N"
    runner_shift: dict[str, Answer]  # what each runner does to target_layer_ids (int, or "not-read")
    target_shift: Answer  # what the target's own setter adds (int)
    capture: Answer  # d: capture index k reads the output of layer k + d
    swa: dict[str, vl.SwaRules]  # drafter architecture -> its sliding-window handling
    runner: vl.RunnerRules | None  # vLLM only
    target_architectures: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # files the analysis wanted and did not have
    source: str = ""  # where the files came from
    notes: tuple[str, ...] = field(default=())
    # runner -> ((placement, shift), …): where the runner reads a drafter's aux layer ids (engines/auxreads.py)
    aux_reads: dict[str, Answer] = field(default_factory=dict)

    def swa_for(self, arch: str | None) -> vl.SwaRules | None:
        if arch and arch in self.swa:
            return self.swa[arch]
        return self.swa.get("DFlashDraftModel") or next(iter(self.swa.values()), None)

    @property
    def has_dflash(self) -> bool | None:
        if not self.dflash.decided:
            return None
        return bool(self.dflash.value)
