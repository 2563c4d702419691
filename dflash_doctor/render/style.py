"""How text is laid out (no rich import here: `--help` and `--version` stay fast)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Style:
    """Colour allowed, the width to wrap at (None: never wrap, one record per line), every detail or not."""

    color: bool = False
    width: int | None = None
    verbose: bool = False
