"""llama.cpp's llama-server for the live lab: built once from the registry's llama-cpp-python sdist, cached.

The cache lives outside the repository ($DFLASH_DOCTOR_LIVE_CACHE, default ~/.cache/dflash-doctor/live, then
`llama/` under it). Nothing here is committed: the sdist, the build folder and the models stay in the cache.
Run as a script (`python -m tests.live.llamacpp.engine`) it builds the server and prints the binary's path.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

LLAMA_CPP_PYTHON = "0.3.36"  # its sdist vendors llama.cpp 0.5.0-dev (commit 0c1e570)
# 560 s on a quiet 2-core machine, 44 min with six jobs sharing those cores: the bound is for a hung build
BUILD_TIMEOUT_S = float(os.environ.get("DFLASH_DOCTOR_LLAMA_BUILD_TIMEOUT", "5400"))
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=ON",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # otherwise it downloads its web UI
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
]


class BuildError(RuntimeError):
    """The server could not be built here (the message says which step and why)."""


def cache_dir() -> Path:
    base = os.environ.get("DFLASH_DOCTOR_LIVE_CACHE") or str(Path.home() / ".cache" / "dflash-doctor" / "live")
    return Path(base) / "llama"


def source_dir(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / f"llama_cpp_python-{LLAMA_CPP_PYTHON}" / "vendor" / "llama.cpp"


def server_binary(cache: Path | None = None) -> Path:
    return source_dir(cache) / "build" / "bin" / "llama-server"


def cached_server() -> Path | None:
    """The built llama-server when the cache holds one (a build that finished), else None."""
    b = server_binary()
    return b if b.is_file() and os.access(b, os.X_OK) and (b.parent.parent / ".built").is_file() else None


def _run(cmd: list[str], log, cwd: Path | None, deadline: float) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise BuildError(f"out of time before: {' '.join(cmd)}")
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    try:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as e:
        raise BuildError(f"cannot run {cmd[0]}: {e}") from e
    try:
        rc = p.wait(timeout=left)
    except BaseException as e:  # the time bound, or Ctrl-C: the whole group (make and its compilers) stops
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        if isinstance(e, subprocess.TimeoutExpired):
            raise BuildError(f"timed out after {BUILD_TIMEOUT_S:.0f} s: {' '.join(cmd)}") from e
        raise
    if rc != 0:
        raise BuildError(f"exit {rc}: {' '.join(cmd)} (log: {log.name})")


def _fetch_source(cache: Path, log, deadline: float) -> None:
    if (source_dir(cache) / "CMakeLists.txt").is_file():
        return
    dl = cache / "sdist"
    dl.mkdir(parents=True, exist_ok=True)
    sdist = dl / f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz"
    if not sdist.is_file():
        # the sdist only: `--no-binary :all:` would also build its build backend (and that one's) from source
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "llama-cpp-python", "-d", str(dl)]
        _run([*pip, f"llama-cpp-python=={LLAMA_CPP_PYTHON}"], log, None, deadline)
    if not sdist.is_file():
        raise BuildError(f"pip download left no {sdist.name} in {dl}")
    with tarfile.open(sdist) as tf:
        tf.extractall(cache, filter="data")


def build_server(timeout_s: float | None = None) -> Path:
    """Build llama-server into the cache (once; a lock keeps two processes from building together)."""
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise BuildError(f"{tool} not found (install cmake and g++)")
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + (timeout_s or BUILD_TIMEOUT_S)
    with open(cache / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second pytest process waits here, then finds the build done
        done = cached_server()
        if done:
            return done
        with open(cache / "build.log", "a") as log:
            t0 = time.monotonic()
            _fetch_source(cache, log, deadline)
            src = source_dir(cache)
            _run(["cmake", "-B", "build", *CMAKE_FLAGS], log, src, deadline)
            jobs = os.environ.get("DFLASH_DOCTOR_LLAMA_BUILD_JOBS", "2")
            _run(["cmake", "--build", "build", "-j", jobs, "--target", "llama-server"], log, src, deadline)
            if not server_binary(cache).is_file():
                raise BuildError(f"the build left no {server_binary(cache)}")
            (src / "build" / ".built").write_text(f"{time.monotonic() - t0:.0f}\n")
            log.write(f"built in {time.monotonic() - t0:.0f} s\n")
        return server_binary(cache)


if __name__ == "__main__":
    t = time.monotonic()
    try:
        path = build_server()
    except BuildError as e:
        print(f"llama-server build failed: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"{path} ({time.monotonic() - t:.0f} s)")
