"""The llama.cpp part of the live-engine lab: a real llama-server, built once from the registry's
llama-cpp-python sdist (engine.py), serving tiny GGUF pairs made here (models.py), with speculative decoding.

When the server is not built in the cache the tests skip with the reason, except where asked to build it:
DFLASH_DOCTOR_CI=1 (CI: a failed build fails the run, loudly) or DFLASH_DOCTOR_LIVE_LLAMA=1. Every server
runs on 127.0.0.1 on a free port, in its own process group, stopped by it; every wait is bounded.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..lab import engine_popen
from .engine import BuildError, build_server, cached_server

START_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 120.0


def pytest_configure(config):
    config.addinivalue_line("markers", "live: runs a real engine (tests/live; built or installed into a cache)")


def _wanted() -> str | None:
    """Why this run builds the server when it is not cached (None: it does not)."""
    if os.environ.get("DFLASH_DOCTOR_CI") == "1":
        return "DFLASH_DOCTOR_CI=1"
    if os.environ.get("DFLASH_DOCTOR_LIVE_LLAMA") == "1":
        return "DFLASH_DOCTOR_LIVE_LLAMA=1"
    return None


@pytest.fixture(scope="session")
def llama_server_bin() -> Path:
    done = cached_server()
    if done is not None:
        return done
    why = _wanted()
    if why is None:
        pytest.skip(
            "llama-server is not built in the cache (DFLASH_DOCTOR_LIVE_CACHE); set DFLASH_DOCTOR_LIVE_LLAMA=1 to "
            "build it from the llama-cpp-python 0.3.36 sdist (10-20 min on 2 cores)"
        )
    try:
        return build_server()
    except BuildError as exc:
        if why == "DFLASH_DOCTOR_CI=1":
            pytest.fail(f"llama-server could not be built on CI: {exc}", pytrace=False)
        pytest.skip(f"llama-server could not be built here: {exc}")


@pytest.fixture(scope="session")
def llama_models(llama_server_bin) -> dict[str, Path]:
    from .models import make_models

    try:
        return make_models()
    except (RuntimeError, ImportError, OSError, subprocess.TimeoutExpired) as exc:
        if os.environ.get("DFLASH_DOCTOR_CI") == "1":
            pytest.fail(f"the tiny GGUF models could not be made: {exc}", pytrace=False)
        pytest.skip(f"the tiny GGUF models could not be made here: {exc}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LlamaServer:
    """One llama-server process: its argv, port, log file (its stdout and stderr) and process."""

    argv: list[str]
    port: int
    log: Path
    proc: subprocess.Popen | None = None
    requests: int = 0
    outputs: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> LlamaServer:
        with open(self.log, "ab") as out:
            self.proc = engine_popen(self.argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}: {self._tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama-server not ready within {START_TIMEOUT_S:.0f} s: {self._tail()}")

    def _tail(self) -> str:
        try:
            return " | ".join(self.log.read_text(errors="replace").splitlines()[-5:])
        except OSError:
            return "(no log)"

    def complete(self, prompt: str, n_predict: int = 64) -> str:
        body = json.dumps({"prompt": prompt, "n_predict": n_predict, "temperature": 0.0, "seed": 1}).encode()
        req = urllib.request.Request(f"{self.url}/completion", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT_S) as r:
            text = json.loads(r.read())["content"]
        self.requests += 1
        self.outputs.append(text)
        return text

    def metrics(self) -> str:
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as r:
            return r.read().decode()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        except ProcessLookupError:
            pass


def llama_server(binary: Path, target: Path, log: Path, *spec: str) -> LlamaServer:
    """A llama-server for `target` with the speculative flags `spec`, on a free port, with --metrics."""
    port = free_port()
    argv = [
        str(binary),
        "-m",
        str(target),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--metrics",
        "-c",
        "2048",
        "-np",
        "1",
        "-t",
        "2",
        *spec,
    ]
    return LlamaServer(argv, port, log)


@pytest.fixture(scope="module")
def serve(llama_server_bin, llama_models, tmp_path_factory):
    """serve(name, drafter_or_None, *spec_flags) -> a started LlamaServer; all stopped at the module's end."""
    started: list[LlamaServer] = []

    def start(name: str, *spec: str) -> LlamaServer:
        log = tmp_path_factory.mktemp("llama") / f"{name}.log"
        srv = llama_server(llama_server_bin, llama_models["target"], log, *spec)
        started.append(srv)
        return srv.start()

    yield start
    for srv in started:
        srv.stop()
