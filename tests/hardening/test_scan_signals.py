"""SIGTERM and SIGHUP end a large log's scan as Ctrl-C does (issue 24): the scan workers and their greps stop,
what was read is reported, and the exit code says which signal it was (128 + its number: 143, 129; Ctrl-C
130). `timeout` in CI once left the workers running, with no report at all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from dflash_doctor.parse.fast.grep import grep_command
from tests.conftest import ROOT
from tests.hardening import tally
from tests.procwatch import descendants, wait_for_read

# SGLang lines go through the per-line dispatch (no bulk path): slow enough to be stopped mid-file
LINE = (
    "[2025-10-22 10:{m:02d}:{s:02d} TP0] Decode batch, #running-req: 4, #token: 3600, token usage: 0.02, "
    "accept len: 2.09, accept rate: 0.23, cuda graph: True, gen throughput (token/s): 166.00, #queue-req: 0\n"
)
pytestmark = pytest.mark.skipif(
    grep_command() is None or not os.path.isdir("/proc/self/task"), reason="no GNU grep, no /proc"
)


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    """A log the byte-range workers take (256 MiB and more)."""
    p = tmp_path_factory.mktemp("signals") / "sglang-big.log"
    block = "".join(LINE.format(m=i // 60 % 60, s=i % 60) for i in range(3600)).encode()
    with open(p, "wb") as fh:
        while fh.tell() < (258 << 20):
            fh.write(block)
    return p


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _run_and_stop(big_log, sig: int, group: bool):
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "NO_COLOR": "1",
        "DFLASH_DOCTOR_WORKERS": "2",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "dflash_doctor", "logs", str(big_log), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    # into the file: the second range's grep (it starts halfway) has read 16 MiB, so its worker has parsed lines
    wait_for_read(proc, str(big_log), os.path.getsize(big_log) // 2 + (16 << 20))
    kids = descendants(proc.pid)  # the two workers and their greps
    if group:
        os.killpg(proc.pid, sig)  # as `timeout` does: the whole process group
    else:
        os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err, kids


@pytest.mark.parametrize("group", [False, True], ids=["to the process", "to its process group"])
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["TERM", "HUP"])
def test_a_stop_signal_ends_the_workers_and_keeps_what_was_read(big_log, sig, code, group):
    tally.fault("TERM/HUP during a large-log scan")
    rc, out, err, kids = _run_and_stop(big_log, sig, group)
    assert rc == code, (rc, err.decode()[-1000:])
    assert b"Traceback" not in err
    rep = json.loads(out)
    assert rep["acceptance"] is not None and rep["acceptance"]["intervals"] > 0, err.decode()[-500:]
    assert rep["acceptance"]["mean_acceptance_length"] == pytest.approx(2.09)
    assert kids, "no scan worker was seen"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.1)
    assert not [k for k in kids if _alive(k)], "a scan worker or its grep outlived the run"
    tally.survived("TERM/HUP during a large-log scan")
