"""Options shared by several commands, and the exit-code policy for reports."""

from __future__ import annotations

import os

import typer

from ..errors import ExitCode
from ..evidence import Report, Verdict
from ..render import Format

FormatOpt = typer.Option(Format.TERMINAL, "--format", "-f", help="terminal, json or markdown.", case_sensitive=False)
OutputOpt = typer.Option(None, "--output", "-o", help="Write the report to FILE instead of stdout.")
AllowSSHExecOpt = typer.Option(False, "--allow-ssh-exec",
                               help="Let `Match exec` lines in ssh_config run their command (refused by default).")


def exit_code_for(report: Report) -> ExitCode:
    """0 nothing wrong, 1 problems found, 3 nothing could be checked."""
    if report.verdict == Verdict.PROBLEM:
        return ExitCode.PROBLEMS
    if report.verdict == Verdict.INSUFFICIENT_DATA and report.acceptance is None:
        return ExitCode.NOT_CHECKED
    return ExitCode.OK


def dumb_terminal() -> bool:
    """TERM=dumb (Emacs shells, some CI consoles): no escape sequences at all, so no bars either."""
    return os.environ.get("TERM", "") in ("dumb", "unknown")


def color_allowed() -> bool:
    """Colour only where the environment allows it: never with NO_COLOR set (no-color.org: any
    non-empty value) nor on a dumb terminal."""
    return not os.environ.get("NO_COLOR") and not dumb_terminal()
