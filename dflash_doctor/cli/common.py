"""Options shared by several commands, the help text conventions, and the exit-code policy.

Exit codes (README "Exit codes"), for every command that prints a verdict or a check result:
0 healthy / passed, 1 problem found / failed, 2 usage error (a bad flag, a missing file, a path where a
host belongs), 3 insufficient data (nothing could be checked, too few drafts, τ that cannot be judged),
130 interrupted.
"""

from __future__ import annotations

import enum
import math
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from ..errors import ExitCode, UsageError
from ..redact import redact_text
from ..render import Format

# A command that stopped at a Ctrl-C and said so (its warning): cli/app.py says "interrupted" for any other
# (Typer turns a Ctrl-C in a command into exit status 130 without a word).
INTERRUPT_SAID: list[str] = []

if TYPE_CHECKING:
    from ..evidence import Report


def number(flag: str, lo: float, hi: float, *, above: bool = False, integer: bool = False) -> Callable[[object], float]:
    """The parser of a numeric option (typer's `parser=`): NaN, ±inf and absurd magnitudes (`1e300`, a
    400-digit integer) are a one-line usage error, never a value a command runs on (`monitor rules
    --min-acceptance-length nan` once wrote an alert that never fires, with exit 0). `above`: `lo` itself
    is refused too."""
    kind = "a whole number" if integer else "a number"
    lo_s, hi_s = (str(int(lo)), str(int(hi))) if integer else (f"{lo:g}", f"{hi:g}")
    bounds = f"{'above' if above else 'from'} {lo_s} {'up ' if above else ''}to {hi_s}"

    def parse(text: object) -> float:
        if isinstance(text, (int, float)) and not isinstance(text, bool):
            value: float = text
        else:
            raw = str(text).strip()
            try:
                value = int(raw) if integer else float(raw)
            except ValueError:
                raise UsageError(f"{flag} {raw[:40]!r} is not {kind}", hint=f"{flag} takes {kind} {bounds}") from None
        if isinstance(value, float) and not math.isfinite(value) or not lo <= value <= hi or (above and value == lo):
            raise UsageError(f"{flag} {str(text)[:40]}: expected {kind} {bounds}")
        return value

    parse.__name__ = "INTEGER" if integer else "FLOAT"  # (what --help shows when no metavar is given)
    return parse


class TextOrJson(str, enum.Enum):
    """--format for results that have no Markdown form (probe, layer-offset)."""

    TERMINAL = "terminal"
    JSON = "json"


# The choices come from the enums: a new output format is a Format member and its writer, nothing here.
FormatOpt = typer.Option(
    Format.TERMINAL, "--format", "-f", metavar="|".join(Format), help="Output format.", case_sensitive=False
)
TextOrJsonOpt = typer.Option(
    TextOrJson.TERMINAL, "--format", "-f", metavar="|".join(TextOrJson), help="Output format.", case_sensitive=False
)
OutputOpt = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the result to FILE instead of stdout.")
VerboseOpt = typer.Option(
    0,
    "--details",
    "--verbose",
    "-v",
    count=True,
    help="The full report: causes with their evidence, every failed check (the default is one screen); "
    "-vv: every check, detail, weight and note.",
)
ProbeResultOpt = typer.Option(
    None,
    "--probe-result",
    metavar="PROBE.json",
    help="A saved `dflash-doctor probe --format json` result for the served pair.",
)
ForcePairOpt = typer.Option(
    False, "--force-probe-pair", help="Use --probe-result even when it is of another drafter/target pair."
)


AllowSSHExecOpt = typer.Option(
    False, "--allow-ssh-exec", help="Let `Match exec` lines in ssh_config run their command (refused by default)."
)


def dumb_terminal() -> bool:
    """TERM=dumb (Emacs shells, some CI consoles): no escape sequences at all, so no bars either."""
    return os.environ.get("TERM", "") in ("dumb", "unknown")


def color_allowed() -> bool:
    """Colour only where the environment allows it: never with NO_COLOR set (no-color.org: any
    non-empty value) nor on a dumb terminal."""
    return not os.environ.get("NO_COLOR") and not dumb_terminal()


def examples(*lines: str) -> str:
    """An Examples section for a command's help (typer epilog; \\b keeps click from rewrapping it)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {x}" for x in lines)


def exit_code_for(report: Report) -> ExitCode:
    """problem 1, healthy 0, insufficient-data 3."""
    return ExitCode(report.exit_code)


# The arguments as typed (set by app.main), for next-step commands that repeat the command with a flag added.
ARGV: list[str] = []


def invocation() -> tuple[str, ...]:
    """The command as typed (program name first), secrets redacted."""

    return ("dflash-doctor", *(redact_text(a) for a in (ARGV or sys.argv[1:])))


def env() -> dict[str, str]:
    return dict(os.environ)
