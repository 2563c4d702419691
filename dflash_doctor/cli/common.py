"""Options shared by several commands, and the exit-code policy for reports."""

from __future__ import annotations

import typer

from ..errors import ExitCode
from ..evidence import Report, Verdict
from ..render import Format

FormatOpt = typer.Option(Format.TERMINAL, "--format", "-f", help="terminal, json or markdown.", case_sensitive=False)
OutputOpt = typer.Option(None, "--output", "-o", help="Write the report to FILE instead of stdout.")


def exit_code_for(report: Report) -> ExitCode:
    """0 nothing wrong, 1 problems found, 3 nothing could be checked."""
    if report.verdict == Verdict.PROBLEM:
        return ExitCode.PROBLEMS
    if report.verdict == Verdict.INSUFFICIENT_DATA and report.acceptance is None:
        return ExitCode.NOT_CHECKED
    return ExitCode.OK
