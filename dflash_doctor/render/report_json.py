"""The ranked report (evidence.Report) as the versioned JSON (schema dflash-doctor/report@1)."""

from __future__ import annotations

from .json_report import render_json
from .style import Format, Style

FORMATS = (Format.JSON,)


def render(report, fmt: Format, style: Style) -> str:
    return render_json(report)
