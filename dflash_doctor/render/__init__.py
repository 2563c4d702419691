"""Renderers: a result in, text out. They never print; the CLI's Output object writes what they return.

One dispatch for every command's output (like pip-audit's `_format/`): `render(result, fmt, style)` picks
the module by the result's type, and every module has one `render(result, fmt, style) -> str` and the
`FORMATS` it writes. Every JSON goes through `json_report.dumps_safe`; every text is redacted here once
more (defence in depth: collectors redact structured values, this catches secrets in free text).

| result type | module | what it is |
|---|---|---|
| evidence.Report | report | the ranked report (diagnose, logs, check host/bundle) |
| services.hostcheck.HostFleet | host_fleet | several hosts or bundles: one line each, then the fleet table |
| prometheus.fleet.Fleet | fleet_table | engines read from Prometheus |
| probe.runs.ProbeRun | probe_run | a draft/verify probe, served vs probe |
| probe.runs.LayerOffsetRun | probe_run | which hidden state each captured tensor is |
| services.gate.GateResult | gate_text | thresholds passed or failed |
| registry.CheckRegistry | checks_list | `checks list` |
| services.inspection.Inspection | inspection_view | `inspect-model` |
| interpret.known_issues.audit.Audit | issues | `known-issues` |
| services.explain.Explanation | explain_view | `explain CAUSE|CHECK` |
| prometheus.rules.AlertRules / Dashboard | monitor | `monitor rules` (YAML) / `monitor grafana` (JSON) |

A new output format is a `Format` member (style.py) and a branch in the modules that write it; a new kind of
result is a module here and a row of RENDERERS.
"""

from __future__ import annotations

import importlib

from ..redact import redact_text
from .style import Format, Style

# result type name -> render module (imported when first used: `--help` imports none of them), or, where one
# type's formats live in separate modules, format -> module (the report's JSON needs none of the terminal
# layout and the rich import under it, ~15 ms of every `--format json` run)
RENDERERS: dict[str, str | dict[Format, str]] = {
    "Report": {Format.TERMINAL: "report", Format.MARKDOWN: "report", Format.JSON: "report_json"},
    "HostFleet": "host_fleet",
    "Fleet": "fleet_table",
    "ProbeRun": "probe_run",
    "LayerOffsetRun": "probe_run",
    "GateResult": "gate_text",
    "CheckRegistry": "checks_list",
    "Inspection": "inspection_view",
    "Audit": "issues",
    "Explanation": "explain_view",
    "AlertRules": "monitor",
    "Dashboard": "monitor",
}


def renderer(result, fmt: Format = Format.TERMINAL):
    """The module that writes `result` in `fmt`."""
    name = RENDERERS.get(type(result).__name__)
    if name is None:
        raise TypeError(f"no renderer for {type(result).__name__}")
    if isinstance(name, dict):
        name = name.get(Format(fmt), next(iter(name.values())))
    return importlib.import_module(f"{__name__}.{name}")


def formats(result_type: str) -> tuple[Format, ...]:
    name = RENDERERS[result_type]
    if isinstance(name, dict):
        return tuple(name)
    return importlib.import_module(f"{__name__}.{name}").FORMATS


def render(
    result,
    fmt: Format = Format.TERMINAL,
    color: bool = False,
    width: int | None = None,
    verbose: bool = False,
    style: Style | None = None,
) -> str:
    fmt = Format(fmt)
    module = renderer(result, fmt)
    if fmt not in module.FORMATS:
        raise ValueError(f"{type(result).__name__} has no {fmt.value} form")
    style = style or Style(color=color, width=width, verbose=verbose)
    return redact_text(module.render(result, fmt, style))


__all__ = ["Format", "Style", "render", "renderer", "formats", "RENDERERS"]
