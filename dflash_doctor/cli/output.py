"""One object owns where and how results are written, so commands never branch on --format.

Report -> stdout (or --output FILE); progress, warnings and errors -> stderr.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from ..errors import DoctorError, ExitCode, UsageError
from ..redact import redact_text
from ..render import Format, render
from ..textsafe import plain


@dataclass
class Output:
    fmt: Format = Format.TERMINAL
    path: str | None = None
    quiet: bool = False

    @property
    def color(self) -> bool:
        from .common import color_allowed

        if self.path or not color_allowed():
            return False
        return sys.stdout.isatty()

    @property
    def width(self) -> int:
        try:
            return max(60, min(140, os.get_terminal_size().columns)) if sys.stdout.isatty() else 100
        except OSError:
            return 100

    def write(self, text: str, redacted: bool = False) -> None:
        if not redacted:
            text = redact_text(text)
        if self.path and self.path != "-":
            write_file(self.path, text, "the report")
            self.info(f"report written to {self.path}")
        else:
            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except BrokenPipeError:  # `| head`: the reader went away
                _quiet_stdout()
                raise DoctorError("the report could not be written: its reader closed the pipe",
                                  exit_code=ExitCode.NOT_CHECKED) from None

    def report(self, report) -> None:
        self.write(render(report, self.fmt, color=self.color, width=self.width), redacted=True)  # render() redacts

    def info(self, msg: str) -> None:
        if not self.quiet:
            print(redact_text(plain(msg)), file=sys.stderr)

    def warn(self, msg: str) -> None:
        print("warning: " + redact_text(plain(msg)), file=sys.stderr)


def write_file(path: str, data: str | bytes, what: str) -> None:
    """An output file, all or nothing: on a full disk the previous file stays as it was."""
    from ..atomic import write_atomic

    try:
        write_atomic(path, data)
    except OSError as exc:
        raise UsageError(f"cannot write {what} to {path}: {exc.strerror or exc}",
                         hint="nothing was written; a file that was there is unchanged") from None


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so Python's flush at exit does not fail a second time, with a traceback."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
