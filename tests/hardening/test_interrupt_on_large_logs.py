"""Ctrl-C while a large log is read keeps what was read (issue 19, item 9): on a log of 64 MiB and more
(the grep route, in one process or in byte-range workers) it exited 130 with "the log is empty"; the
streamed route kept its intervals. Every route must."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from dflash_doctor.parse import logscan
from dflash_doctor.parse.fast.grep import grep_command
from tests.hardening import tally
from tests.procwatch import wait_for_read

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# SGLang lines go through the per-line dispatch (no fast path): slow enough to be interrupted mid-file
LINE = (
    "[2025-10-22 10:{m:02d}:{s:02d} TP0] Decode batch, #running-req: 4, #token: 3600, token usage: 0.02, "
    "accept len: 2.09, accept rate: 0.23, cuda graph: True, gen throughput (token/s): 166.00, #queue-req: 0\n"
)


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    p = tmp_path_factory.mktemp("ctrlc") / "sglang-big.log"
    block = "".join(LINE.format(m=i // 60 % 60, s=i % 60) for i in range(3600)).encode()
    with open(p, "wb") as fh:
        while fh.tell() < (66 << 20):
            fh.write(block)
    return p


def _read_into(big_log, workers: int) -> int:
    """How far a grep of the scan must have read `big_log` before a stop: its scanner has then parsed lines
    (grep runs at most a pipe's 1 MiB ahead of it) and the file is not finished. With byte-range workers, past
    the second range's start (the second grep starts there)."""
    size = os.path.getsize(big_log)
    return 8 << 20 if workers == 1 else size // 2 + (4 << 20)


def _interrupt_once_read(big_log, workers: int, at: list) -> threading.Thread:
    """SIGINT to this process once its scan (its greps, its workers' greps) has read into the log."""

    def run():
        wait_for_read(os.getpid(), str(big_log), _read_into(big_log, workers))
        at.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.mark.skipif(grep_command() is None, reason="no GNU grep")
@pytest.mark.parametrize("workers", [1, 2], ids=["one process", "byte-range workers"])
def test_ctrl_c_on_the_grep_route_keeps_the_intervals_read(big_log, workers):
    tally.fault("Ctrl-C on a large log")
    plan = logscan.ScanPlan(workers=workers, parallel_from=0)
    # (Python's own Ctrl-C handler, whatever an earlier test left installed; and no gc callbacks, such as the
    # one hypothesis installs: a KeyboardInterrupt raised inside one is swallowed as "unraisable")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    callbacks = gc.callbacks[:]
    gc.callbacks.clear()
    scan = logscan.LogScan()
    sent: list = []
    watcher = _interrupt_once_read(big_log, workers, sent)
    try:
        with pytest.raises(KeyboardInterrupt):
            logscan.scan(str(big_log), plan, into=scan)
    finally:
        signal.signal(signal.SIGINT, previous)
        gc.callbacks.extend(callbacks)
    watcher.join(5)
    assert sent and time.monotonic() - sent[0] < 20  # the workers stop when asked, they do not finish the file
    assert scan.interrupted
    assert 0 < scan.n_intervals < (66 << 20) // len(LINE)
    s = logscan.aggregate(scan)
    assert s.mean_acceptance_length == pytest.approx(2.09)
    assert scan.sources == [str(big_log)]
    tally.survived("Ctrl-C on a large log")


@pytest.mark.skipif(grep_command() is None, reason="no GNU grep")
def test_ctrl_c_through_the_cli_reports_what_was_read(big_log):
    tally.fault("Ctrl-C on a large log")
    env = {"PYTHONPATH": ROOT, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dflash_doctor", "logs", str(big_log), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    wait_for_read(proc, str(big_log), _read_into(big_log, 1))  # imports, then into the file (66 MiB: one grep)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()[-500:]
    rep = json.loads(out)
    assert rep["acceptance"] is not None and rep["acceptance"]["intervals"] > 0, err.decode()[-500:]
    assert "the log is empty" not in out.decode()
    assert (
        any("interrupted" in n.lower() for n in rep["notes"] + [m["reason"] for m in rep["missing_evidence"]])
        or "interrupted" in err.decode()
    )
    tally.survived("Ctrl-C on a large log")


def test_a_suite_started_with_sigint_ignored_gives_its_children_the_default():
    """`pytest … &` from a script starts the suite with SIGINT ignored, which exec hands on to every CLI child:
    the Ctrl-C tests then measured a process that cannot be interrupted (exit 1, not 130). The suite's
    conftest gives the children the default a terminal gives."""
    probe = (
        "import subprocess, sys\n"
        "import tests.conftest\n"
        "child = 'import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)'\n"
        "print(subprocess.run([sys.executable, '-c', child], capture_output=True, text=True).stdout.strip())\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        timeout=120,
    )
    assert res.stdout.strip() == "True", (res.stdout, res.stderr[-800:])


@pytest.mark.parametrize(("command", "sig"), [("logs", "SIGINT"), ("diagnose", "SIGTERM"), ("logs", "SIGHUP")])
def test_a_stop_before_anything_was_read_exits_as_a_stop(command, sig):
    """A stop while the scan waits for its first bytes (stdin, which nothing has written to yet: the earliest
    moment of a scan, made deterministic): nothing to report, so stdout stays empty and one line says why —
    and the exit status is the stop's (130, 143, 129), not 3 ("could not read log"), which a script would take
    for an unreadable input."""
    tally.fault(f"{sig} before the first byte of the log")
    argv = [sys.executable, "-m", "dflash_doctor", command, *(["--log"] if command == "diagnose" else []), "-"]
    r, w = os.pipe()
    env = {"PYTHONPATH": ROOT, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [*argv, "--format", "json"], stdin=r, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    os.close(r)
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                with open(f"/proc/{proc.pid}/wchan") as fh:
                    if "pipe_read" in fh.read():  # blocked reading the log from stdin
                        break
            except OSError:
                pass
            time.sleep(0.02)
        assert proc.poll() is None, "the command ended before it read stdin"
        proc.send_signal(getattr(signal, sig))
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(w)
        if proc.poll() is None:
            proc.kill()
    text = err.decode()
    assert proc.returncode == 128 + int(getattr(signal, sig)), text[-800:]
    assert out == b"", out[:300]
    errors = [ln for ln in text.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "interrupted" in errors[0] and "Traceback" not in text, text[-800:]
    tally.survived(f"{sig} before the first byte of the log")
