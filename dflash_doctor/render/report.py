"""The ranked report (evidence.Report) on a terminal or in Markdown (its JSON: report_json.py)."""

from __future__ import annotations

from .markdown import render_markdown
from .style import Format, Style
from .terminal import render_terminal

FORMATS = (Format.TERMINAL, Format.MARKDOWN)


def render(report, fmt: Format, style: Style) -> str:
    if fmt == Format.MARKDOWN:
        return render_markdown(report, verbose=style.verbose)
    return render_terminal(report, style=style)
