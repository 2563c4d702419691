"""What `probe` and `layer-offset` hand to the renderer: the result document (JSON-ready) and its verdict.
No torch here: the CLI imports this before deciding whether the probe extra is needed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ProbeRun:
    result: dict

    @property
    def checks(self) -> list[dict]:
        return list(self.result.get("served_comparison") or [])

    @property
    def exit_code(self) -> int:
        """1 when the probe is not lossless or the served τ fails against it, 3 when a comparison with a served
        log was asked for and could not be made, else 0."""
        if self.result.get("lossless") is False or any(c.get("status") == "fail" for c in self.checks):
            return 1
        if self.checks and all(c.get("status") == "could-not-check" for c in self.checks):
            return 3
        return 0

    def to_dict(self) -> dict[str, Any]:
        return self.result


@dataclass(frozen=True)
class LayerOffsetRun:
    result: dict
    drafter_given: bool = False

    @property
    def exit_code(self) -> int:
        """With a drafter: 0 when the taps match its layer ids, 1 when they are offset, 3 when undetermined."""
        if not self.drafter_given:
            return 0
        off = self.result.get("offset")
        return 0 if off == 0 else 3 if off is None else 1

    def to_dict(self) -> dict[str, Any]:
        return self.result
