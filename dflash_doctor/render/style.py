"""What text is made and how it is laid out: the output format, and the style (no rich import here:
`--help` and `--version` stay fast)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Format(str, enum.Enum):
    TERMINAL = "terminal"
    JSON = "json"
    MARKDOWN = "markdown"


@dataclass(frozen=True)
class Style:
    """Colour allowed, the width to wrap at (None: never wrap, one record per line), every detail or not, and
    `screen`: a report as its one-screen summary (the CLI's default view; `-v` turns it off)."""

    color: bool = False
    width: int | None = None
    verbose: bool = False
    screen: bool = False
