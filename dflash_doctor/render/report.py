"""The ranked report (evidence.Report): terminal, Markdown or the versioned JSON."""

from __future__ import annotations

from .json_report import render_json
from .markdown import render_markdown
from .style import Format, Style
from .terminal import render_terminal

FORMATS = (Format.TERMINAL, Format.JSON, Format.MARKDOWN)


def render(report, fmt: Format, style: Style) -> str:
    if fmt == Format.JSON:
        return render_json(report)
    if fmt == Format.MARKDOWN:
        return render_markdown(report, verbose=style.verbose)

    return render_terminal(report, style=style)
