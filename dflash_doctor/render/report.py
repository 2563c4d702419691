"""The ranked report (evidence.Report): terminal, Markdown or the versioned JSON."""

from __future__ import annotations

from .style import Format, Style

FORMATS = (Format.TERMINAL, Format.JSON, Format.MARKDOWN)


def render(report, fmt: Format, style: Style) -> str:
    if fmt == Format.JSON:
        from .json_report import render_json

        return render_json(report)
    if fmt == Format.MARKDOWN:
        from .markdown import render_markdown

        return render_markdown(report, verbose=style.verbose)
    from .terminal import render_terminal

    return render_terminal(report, style=style)
