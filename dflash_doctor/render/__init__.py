"""Renderers: Report in, text out. They never print; the CLI's Output object writes their result."""

from __future__ import annotations

import enum


class Format(str, enum.Enum):
    TERMINAL = "terminal"
    JSON = "json"
    MARKDOWN = "markdown"


def render(report, fmt: "Format", color: bool = False, width: int = 100) -> str:
    from ..redact import redact_text

    if fmt == Format.JSON:
        from .json_report import render_json
        out = render_json(report)
    elif fmt == Format.MARKDOWN:
        from .markdown import render_markdown
        out = render_markdown(report)
    else:
        from .terminal import render_terminal
        out = render_terminal(report, color=color, width=width)
    # Defence in depth: collectors redact structured values; this catches secrets in free text.
    return redact_text(out)
