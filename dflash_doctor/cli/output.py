"""One object owns where and how results are written, so commands never branch on --format.

Result -> stdout (or --output FILE); progress, warnings and errors -> stderr. Layout follows the stream:
on a terminal, colour (unless NO_COLOR or TERM=dumb) and wrapping at its width (or COLUMNS); piped or to a
file, no colour and no wrapping — one record per line — unless COLUMNS asks for a width.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field

from ..atomic import write_atomic
from ..errors import DoctorError, ExitCode, UsageError
from ..redact import redact_text
from ..render import Format, Style, render
from ..settings import Settings
from ..textsafe import plain
from .common import INTERRUPT_SAID, color_allowed


@dataclass
class Output:
    fmt: Format = Format.TERMINAL
    path: str | None = None
    quiet: bool = False
    verbose: int = 0  # how many -v: 0 the one-screen summary, 1 the full report, 2 every detail
    settings: Settings = field(default_factory=lambda: Settings.from_env(os.environ))

    @property
    def to_file(self) -> bool:
        return bool(self.path) and self.path != "-"

    @property
    def to_terminal(self) -> bool:
        if self.to_file:
            return False
        try:
            return sys.stdout.isatty()
        except (AttributeError, ValueError):
            return False

    @property
    def color(self) -> bool:
        return self.to_terminal and self.settings.color and color_allowed()

    @property
    def width(self) -> int | None:
        """The terminal's width (COLUMNS first); None — never wrap — when piped or written to a file, unless
        COLUMNS is set for a pipe."""
        if self.to_file:
            return None
        if self.settings.columns:
            return self.settings.columns
        if not self.to_terminal:
            return None
        try:
            return os.get_terminal_size(sys.stdout.fileno()).columns or 80
        except (OSError, ValueError):
            return 80

    @property
    def style(self) -> Style:
        """On a terminal: no -v the one screen, -v the full report, -vv every detail. Markdown and JSON have no
        one-screen form: -v gives their every-detail form, as it always has."""
        if Format(self.fmt) == Format.TERMINAL:
            return Style(color=self.color, width=self.width, verbose=self.verbose >= 2, screen=self.verbose == 0)
        return Style(color=self.color, width=self.width, verbose=self.verbose >= 1)

    def show(self, result) -> None:
        """Render any command's result (render/ picks the renderer by its type) and write it."""
        self.write(render(result, Format(self.fmt), style=self.style), redacted=True)  # render() redacts

    def report(self, report) -> None:
        self.show(report)

    def write(self, text: str, redacted: bool = False) -> None:
        if not redacted:
            text = redact_text(text)
        if self.to_file:
            assert self.path is not None  # to_file: a path other than "-"
            write_file(self.path, text, "the report")
            self.info(f"written to {self.path}")
        else:
            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except BrokenPipeError:  # `| head`: the reader went away
                _quiet_stdout()
                raise DoctorError(
                    "the report could not be written: its reader closed the pipe", exit_code=ExitCode.NOT_CHECKED
                ) from None

    def info(self, msg: str) -> None:
        if not self.quiet:
            print(redact_text(plain(msg)), file=sys.stderr)

    def warn(self, msg: str) -> None:
        if msg.startswith("interrupted"):
            INTERRUPT_SAID.append(msg)
        print("warning: " + redact_text(plain(msg)), file=sys.stderr)


def write_file(path: str, data: str | bytes, what: str) -> None:
    """An output file, all or nothing: on a full disk the previous file stays as it was."""

    try:
        write_atomic(path, data)
    except OSError as exc:
        raise UsageError(
            f"cannot write {what} to {path}: {exc.strerror or exc}",
            hint="nothing was written; a file that was there is unchanged",
        ) from None


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so Python's flush at exit does not fail a second time, with a traceback."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
