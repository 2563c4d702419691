"""Exit codes and the one error type the CLI turns into a one-line message."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Documented in README.md ("Exit codes"); every command exits with one of these."""

    OK = 0  # nothing wrong found / gate passed
    PROBLEMS = 1  # problems found, or a gate failed
    USAGE = 2  # bad command line or unusable input the user named
    NOT_CHECKED = 3  # could not collect or check what was asked (no data, host unreachable)
    INTERRUPTED = 130


class DoctorError(Exception):
    """A known failure: printed as one line plus an optional hint, never as a traceback."""

    def __init__(self, message: str, hint: str | None = None, exit_code: ExitCode = ExitCode.NOT_CHECKED):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.exit_code = exit_code


class UsageError(DoctorError):
    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message, hint, ExitCode.USAGE)


class MissingExtra(DoctorError):
    """A command needs an optional extra (torch/transformers for the probe, matplotlib for plots)."""

    def __init__(self, extra: str, module: str):
        super().__init__(
            f"this command needs the '{extra}' extra ({module} is not installed)",
            hint=f"pip install 'dflash-doctor[{extra}]'" + (" torch==2.13.0" if extra == "probe" else ""),
            exit_code=ExitCode.USAGE,
        )
