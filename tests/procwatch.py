"""Waiting for what a child process has done, read from /proc, instead of sleeping and hoping: a test that
must act while a scan is under way waits until the scanner's read offset in the file says so.

    pos = wait_for_read(proc, path, at_least=2 << 20)   # then SIGSTOP, act, SIGCONT

Linux only (/proc/PID/fd, /proc/PID/fdinfo); `proc_available()` says whether it can be used here.
"""

from __future__ import annotations

import array
import fcntl
import os
import subprocess
import termios
import time


def proc_available() -> bool:
    return os.path.isdir(f"/proc/{os.getpid()}/fdinfo")


def read_offsets(pid: int, path: str) -> list[int]:
    """The file offsets of `pid`'s descriptors open on `path` (none: the file is not open, or the process ended)."""
    real = os.path.realpath(path)
    out = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != real:
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as fh:
                for line in fh:
                    if line.startswith("pos:"):
                        out.append(int(line.split()[1]))
        except OSError:
            continue  # closed meanwhile
    return out


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (children, their children, …) alive now."""
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                kids = [int(x) for x in fh.read().split()]
        except OSError:
            continue
        out.update(kids)
        todo.extend(kids)
    return out


def wait_for_read(proc: subprocess.Popen | int, path: str, at_least: int, timeout: float = 300.0) -> int:
    """Wait until `proc` (a child, or a pid such as this process's own) or a process below it has read `path`
    up to `at_least` bytes (its descriptor's offset); return that offset. AssertionError when the child ends
    first, or after `timeout` seconds (a bound on a hang, not a timing the test relies on)."""
    pid = proc if isinstance(proc, int) else proc.pid
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in (pid, *descendants(pid)):
            for pos in read_offsets(p, path):
                if pos >= at_least:
                    return pos
        if not isinstance(proc, int) and proc.poll() is not None:
            raise AssertionError(f"the process ended before it was seen reading {path} at {at_least} bytes")
        time.sleep(0.001)
    raise AssertionError(f"no process read {path} up to {at_least} bytes within {timeout:.0f} s")


def wait_for_drained(proc: subprocess.Popen, timeout: float = 300.0) -> None:
    """Wait until `proc` has read everything written to its stdin pipe and waits for more: the pipe holds no
    byte (FIONREAD) and its main thread is blocked in read(0, …) (/proc/PID/syscall). AssertionError when
    it ends first, or after `timeout` seconds (a bound on a hang)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError("the process ended before it waited for more input")
        left = array.array("i", [0])
        fcntl.ioctl(proc.stdin.fileno(), termios.FIONREAD, left)
        try:
            with open(f"/proc/{proc.pid}/syscall") as fh:
                call = fh.read().split()
        except OSError:
            call = []
        if left[0] == 0 and call[:2] == ["0", "0x0"]:  # read(0, …)
            return
        time.sleep(0.01)
    raise AssertionError(f"the process did not drain its input within {timeout:.0f} s")
