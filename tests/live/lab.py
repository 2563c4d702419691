"""The live-engine lab's generic helpers: free ports, servers in their own process groups, bounded waits,
requests, /metrics scrapes. Engine-neutral: a llama-server lab uses the same `Server` with its own argv.

    srv = Server.start(argv, env=..., log=path, ready=lambda: http_ok(url), timeout=300)
    ...
    srv.stop()            # SIGTERM to the whole group, SIGKILL after a grace period
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url: str, timeout: float = 5.0) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.read().decode("utf-8", "replace")
    except (OSError, urllib.error.URLError):
        return None


def http_post_json(url: str, body: dict, timeout: float = 120.0) -> dict:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


def engine_popen(argv: list[str], **kw) -> subprocess.Popen:
    """Start an engine for the lab: leader of its own process group (stop_group ends it and its children),
    in the test's session, at the lowest CPU priority (`nice -n 19`, which execs the engine: the pid and
    /proc/PID/cmdline are the engine's own).

    Why: a loaded CPU engine on a 2-core machine left a new process about 5 % of a core. Started in a new
    session (its own scheduler autogroup) a loaded vLLM server made 0.13 s of CPU work take 2-12 s of wall
    time, and `gate --window 1s` 6-66 s (CI once timed out a gate at 120 s). In this session at nice 19 the
    same work took 0.13 s and the gate 1.5-1.8 s, the engine still drafting on every idle cycle."""
    return subprocess.Popen(["nice", "-n", "19", *argv], process_group=0, **kw)


def stop_group(proc: subprocess.Popen, grace: float = 20.0) -> None:
    """SIGTERM the process group the lab started `proc` in; SIGKILL whatever is left after `grace` s."""
    if proc.poll() is not None:
        _kill_group(proc.pid, signal.SIGKILL)  # children may outlive the leader
        return
    _kill_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(grace)
    _kill_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(10)


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@dataclass
class Server:
    """A server process started by the lab, leader of its own process group, stdout+stderr to `log`."""

    proc: subprocess.Popen
    log: Path
    port: int
    argv: list[str]
    started_s: float = 0.0
    notes: dict = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    @classmethod
    def start(
        cls,
        argv: list[str],
        *,
        port: int,
        log: Path,
        env: dict | None = None,
        ready: Callable[[], bool] | None = None,
        dead: Callable[[str], bool] | None = None,
        timeout: float = 300.0,
        cwd: Path | None = None,
    ) -> Server:
        """Start `argv` (engine_popen: its own process group, lowest priority); wait until `ready()` or the
        process exits, or `dead(log text)` says it will not come up, or `timeout` s. On a timeout the group is
        stopped and TimeoutError raised; a server that exited or is dead is returned as is (the caller reads its
        log)."""
        log.parent.mkdir(parents=True, exist_ok=True)
        fh = open(log, "wb")  # noqa: SIM115 - the child owns it; closed below once handed over
        try:
            proc = engine_popen(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
        finally:
            fh.close()
        srv = cls(proc, log, port, argv)
        t0 = time.monotonic()
        while True:
            if proc.poll() is not None:
                break
            if ready is not None and ready():
                break
            if dead is not None and dead(srv.log_text()):
                break
            if time.monotonic() - t0 > timeout:
                stop_group(proc)
                raise TimeoutError(f"{argv[0]} not ready after {timeout:.0f} s; log {log}")
            time.sleep(1.0)
        srv.started_s = time.monotonic() - t0
        return srv

    def stop(self) -> None:
        stop_group(self.proc)

    def wait_for_log(self, needle: str, timeout: float = 60.0) -> bool:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if needle in self.log_text():
                return True
            time.sleep(0.5)
        return False
