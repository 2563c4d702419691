"""The machine dflash-doctor runs on, as a Host: argv lists through subprocess, never a shell."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence

from .interface import CommandResult, Host


class _Drain(threading.Thread):
    """Reads one pipe to EOF, keeping at most `cap` bytes; the rest is read and dropped so the child never blocks."""

    def __init__(self, pipe, cap: int, on_chunk=None):
        super().__init__(daemon=True)
        self.pipe, self.cap, self.on_chunk = pipe, cap, on_chunk
        self.chunks: list[bytes] = []
        self.kept = 0
        self.truncated = False

    def run(self) -> None:
        try:
            while True:
                chunk = self.pipe.read1(1 << 16) if hasattr(self.pipe, "read1") else self.pipe.read(1 << 16)
                if not chunk:
                    break
                if self.on_chunk is not None:
                    self.on_chunk(chunk)
                room = self.cap - self.kept
                if room > 0:
                    self.chunks.append(chunk[:room])
                    self.kept += min(room, len(chunk))
                if len(chunk) > room:
                    self.truncated = True
        except (OSError, ValueError):
            pass

    @property
    def data(self) -> bytes:
        return b"".join(self.chunks)


def run_argv(
    argv: Sequence[str],
    timeout: float,
    max_bytes: int,
    stdin: bytes | None = None,
    env: dict | None = None,
    on_stderr=None,
) -> CommandResult:
    """Run argv with both output streams drained concurrently and capped, and a hard timeout."""
    argv = tuple(str(a) for a in argv)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=env,
        )
    except FileNotFoundError:
        return CommandResult(argv, None, b"", b"", error=f"{argv[0]}: command not found")
    except PermissionError:
        return CommandResult(argv, None, b"", b"", error=f"{argv[0]}: permission denied")
    except OSError as exc:
        return CommandResult(argv, None, b"", b"", error=f"{argv[0]}: {exc.strerror or exc}")
    out, err = _Drain(proc.stdout, max_bytes), _Drain(proc.stderr, max_bytes, on_stderr)
    out.start()
    err.start()
    if stdin is not None:
        assert proc.stdin is not None  # (stdin=PIPE when there is input)
        try:
            proc.stdin.write(stdin)
        except (BrokenPipeError, OSError):
            pass
        finally:
            with contextlib.suppress(OSError):
                proc.stdin.close()
    timed_out = False
    try:
        rc: int | None = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        # Only our own command is stopped (its process group), never anything else on the host.
        timed_out = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        rc = None
    deadline = time.monotonic() + 2.0
    for d in (out, err):
        d.join(max(0.0, deadline - time.monotonic()))
    return CommandResult(
        argv,
        rc,
        out.data,
        err.data,
        timed_out=timed_out,
        truncated=out.truncated or err.truncated,
        error=f"timed out after {timeout:g}s" if timed_out else None,
    )


class LocalHost(Host):
    name = "local"

    def __init__(self) -> None:
        self.bytes_received = 0  # nothing crosses a network here; kept for a uniform report
        self.bytes_sent = 0
        self.commands: list[tuple[str, ...]] = []

    def run(
        self,
        argv: Sequence[str],
        timeout: float = 30.0,
        max_bytes: int = 16 << 20,
        stdin: bytes | None = None,
        on_stderr=None,
        bulk: bool = False,
    ) -> CommandResult:
        self.commands.append(tuple(argv))
        return run_argv(argv, timeout, max_bytes, stdin, on_stderr=on_stderr)

    def read_file(self, path: str, max_bytes: int = 16 << 20, timeout: float = 30.0) -> bytes:
        with open(path, "rb") as fh:
            return fh.read(max_bytes)

    def list_dir(self, path: str, timeout: float = 30.0) -> list[str]:
        return sorted(os.listdir(path))

    def readlink(self, path: str, timeout: float = 30.0) -> str:
        return os.readlink(path)
