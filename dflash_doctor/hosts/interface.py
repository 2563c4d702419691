"""The Host interface every collector speaks. Implementations: local, ssh, bundle.

Commands are argv lists, never shell strings: an SSH implementation quotes each word with
shlex.quote. Every call has a timeout. Hosts are read-only by contract: nothing here writes,
kills or restarts anything on the host.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    rc: int | None  # None when it did not finish (timeout, connection lost)
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    truncated: bool = False  # output exceeded max_bytes and was cut
    error: str | None = None  # why it could not run (not found, connection dropped, …)

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out and self.error is None

    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")


class HostError(Exception):
    """The host cannot be reached or used at all (auth, host key, refused). One line, user-facing."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


def _os_error(res: CommandResult, path: str) -> OSError:
    """Map a failed remote file command to the OSError a local call would have raised."""
    msg = (res.stderr.decode("utf-8", "replace").strip() or res.error or f"exit status {res.rc}")[:300]
    low = msg.lower()
    if "no such file" in low:
        return FileNotFoundError(2, "No such file or directory", path)
    if "permission denied" in low or "operation not permitted" in low:
        return PermissionError(13, "Permission denied", path)
    if "is a directory" in low:
        return IsADirectoryError(21, "Is a directory", path)
    if "not a directory" in low:
        return NotADirectoryError(20, "Not a directory", path)
    if res.timed_out:
        return TimeoutError(f"{path}: {res.error}")
    return OSError(f"{path}: {msg}")


class Host(ABC):
    name: str  # "local", "ssh://user@host:port", "bundle:/path"

    @abstractmethod
    def run(
        self,
        argv: Sequence[str],
        timeout: float = 30.0,
        max_bytes: int = 16 << 20,
        stdin: bytes | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
        bulk: bool = False,
    ) -> CommandResult:
        """Run argv on the host; never raises for command failures, only HostError for the host itself.

        `on_stderr`, when given, receives stderr chunks as they arrive (progress of a long command);
        they are also kept in the result as usual. Hosts that replay recorded output may not call it.
        `bulk` says the command may run long and return much (the log filter): a host that runs
        commands one after another on a shared remote shell (SSH) runs it alongside the others."""

    @abstractmethod
    def read_file(self, path: str, max_bytes: int = 16 << 20, timeout: float = 30.0) -> bytes:
        """Read up to max_bytes of a file. Raises FileNotFoundError / PermissionError / OSError."""

    @abstractmethod
    def list_dir(self, path: str, timeout: float = 30.0) -> list[str]:
        """Names in a directory. Raises FileNotFoundError / NotADirectoryError / PermissionError / OSError."""

    def readlink(self, path: str, timeout: float = 30.0) -> str:
        """The target of a symbolic link (e.g. /proc/PID/fd/1). Raises OSError when it is not one."""
        res = self.run(["readlink", "--", path], timeout=timeout, max_bytes=1 << 16)
        if not res.ok:
            raise _os_error(res, path)
        return res.text().rstrip("\n")

    def close(self) -> None:
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
