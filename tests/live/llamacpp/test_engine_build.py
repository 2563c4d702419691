"""The lab's cached build step (engine.py), without building llama.cpp: a stand-in `cmake` on PATH plays the
build. Built once, found in the cache after; a failed step and a step out of time are one BuildError each,
and the step out of time leaves none of its process group behind."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from . import engine

FAKE_CMAKE = """#!/bin/sh
# stand-in: `cmake -B build …` configures, `cmake --build build …` writes the binary
echo "cmake $*" >> "$FAKE_LOG"
[ -n "$FAKE_FAIL" ] && exit 3
if [ -n "$FAKE_SLOW" ]; then sleep 30 & echo $! > "$FAKE_SLOW"; wait; fi
if [ "$1" = "--build" ]; then mkdir -p build/bin && printf '#!/bin/sh\\n' > build/bin/llama-server \\
    && chmod +x build/bin/llama-server; fi
exit 0
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cmake = bin_dir / "cmake"
    cmake.write_text(FAKE_CMAKE)
    cmake.chmod(0o755)
    (bin_dir / "c++").write_text("#!/bin/sh\nexit 0\n")  # looked for, never run by the stand-in
    (bin_dir / "c++").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DFLASH_DOCTOR_LIVE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "calls.log"))
    src = engine.source_dir()
    src.mkdir(parents=True)
    (src / "CMakeLists.txt").write_text("# stand-in source tree\n")  # no download: the source is there
    return tmp_path


def test_built_once_then_found_in_the_cache(fake):
    assert engine.cached_server() is None
    path = engine.build_server()
    assert path == engine.server_binary() and engine.cached_server() == path
    calls = (fake / "calls.log").read_text().splitlines()
    assert calls[0].startswith("cmake -B build") and "-DLLAMA_USE_PREBUILT_UI=OFF" in calls[0]
    assert calls[1] == "cmake --build build -j 2 --target llama-server"
    engine.build_server()
    assert len((fake / "calls.log").read_text().splitlines()) == 2  # cached: nothing run again


def test_a_failed_step_is_one_error_naming_it(fake, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "1")
    with pytest.raises(engine.BuildError, match=r"exit 3: cmake -B build"):
        engine.build_server()
    assert engine.cached_server() is None


def test_a_step_out_of_time_stops_its_whole_process_group(fake, monkeypatch):
    pid_file = fake / "sleep.pid"
    monkeypatch.setenv("FAKE_SLOW", str(pid_file))
    with pytest.raises(engine.BuildError, match="timed out"):
        engine.build_server(timeout_s=2)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists():
        stat = Path(f"/proc/{child}/stat").read_text() if Path(f"/proc/{child}/stat").exists() else ""
        if ") Z " in stat:  # a zombie awaiting its reaper is gone as a process
            break
        time.sleep(0.1)
    stat = Path(f"/proc/{child}/stat").read_text() if Path(f"/proc/{child}/stat").exists() else ""
    assert not stat or ") Z " in stat, f"the build's child {child} outlived the time bound"
