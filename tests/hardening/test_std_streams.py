"""Standard streams the shell hands over: an ASCII or Latin-1 encoding, a C locale, a closed stdout,
stdin or stderr, a reader that goes away. Before, each was an `internal error` and no report
(`UnicodeEncodeError` on the τ of the first line, `'NoneType' object has no attribute …`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.hardening import tally

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")
DIAGNOSE = [sys.executable, "-m", "dflash_doctor", "diagnose", "--log", LOG]


def _run(argv, env=None, **kw) -> subprocess.CompletedProcess:
    e = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    e.pop("PYTHONUTF8", None)
    e.update(env or {})
    return subprocess.run(argv, capture_output=True, env=e, timeout=300, **kw)


ENCODINGS = {
    "PYTHONIOENCODING=ascii": {"PYTHONIOENCODING": "ascii"},
    "PYTHONIOENCODING=latin-1": {"PYTHONIOENCODING": "latin-1"},
    # without locale coercion and UTF-8 mode (both switched on by default in a C locale since 3.7)
    "C locale": {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"},
}


@pytest.mark.parametrize("enc", list(ENCODINGS))
@pytest.mark.parametrize("fmt", ["terminal", "json", "markdown"])
def test_an_output_encoding_without_tau_still_gets_the_whole_report(enc, fmt):
    name = f"output encoding: {enc}"
    tally.fault(name)
    full = ["-v"] if fmt == "terminal" else []  # the full report (the default terminal view is the summary)
    res = _run([*DIAGNOSE, "--format", fmt, *full], env=ENCODINGS[enc])
    assert res.returncode == 1, res.stderr
    assert b"internal error" not in res.stderr
    text = res.stdout.decode("latin-1")
    if fmt == "json":
        assert json.loads(text)["acceptance"]["mean_acceptance_length"] > 1  # '?' replaces τ inside strings only
    else:
        assert "1.18" in text and "ranked causes" in text.lower()
    tally.survived(name)


def test_errors_in_an_ascii_terminal_are_readable_too():
    res = _run(
        [sys.executable, "-m", "dflash_doctor", "gate", "--log", "/nonexistent/τ.log", "--min-acceptance-length", "2"],
        env={"PYTHONIOENCODING": "ascii"},
    )
    assert res.returncode in (2, 3) and b"internal error" not in res.stderr


def test_a_closed_stdout_is_a_warning_not_a_crash():
    tally.fault("stdout closed (>&-)")
    res = _run(["sh", "-c", f"exec {' '.join(DIAGNOSE)} >&-"])
    assert res.returncode == 1, res.stderr  # the diagnosis ran; its report had nowhere to go, and it says so
    assert b"stdout is closed" in res.stderr and b"internal error" not in res.stderr
    tally.survived("stdout closed (>&-)")


def test_a_closed_stdout_with_an_output_file_writes_the_file(tmp_path):
    out = tmp_path / "r.json"
    res = _run(["sh", "-c", f"exec {' '.join(DIAGNOSE)} -f json -o {out} >&-"])
    assert res.returncode == 1 and json.loads(out.read_text())["acceptance"]


def test_a_closed_stdin_read_as_a_log_is_an_empty_log():
    tally.fault("stdin closed (<&-) with --log -")
    res = _run(["sh", "-c", f"exec {sys.executable} -m dflash_doctor diagnose --log - -f json <&-"])
    assert res.returncode == 3, res.stderr  # nothing to check: documented exit 3
    assert res.stdout == b"" and res.stderr.startswith(b"error: - is empty")  # nothing read: one line, no report
    assert b"internal error" not in res.stderr
    tally.survived("stdin closed (<&-) with --log -")


def test_a_closed_stderr_keeps_warnings_off_stdout():
    tally.fault("stderr closed (2>&-)")
    res = _run(["sh", "-c", f"exec {' '.join(DIAGNOSE)} -f json 2>&-"])
    assert res.returncode == 1
    json.loads(res.stdout)  # before: print(file=None) would have sent warnings into the JSON on stdout
    tally.survived("stderr closed (2>&-)")


def test_a_reader_that_goes_away_is_one_line():
    tally.fault("stdout pipe closed by its reader")
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first write
    e = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    proc = subprocess.run(DIAGNOSE, stdout=w, stderr=subprocess.PIPE, env=e, timeout=300)
    os.close(w)
    err = proc.stderr.decode()
    assert proc.returncode == 3 and "internal error" not in err and "Traceback" not in err, err
    assert "closed the pipe" in err
    tally.survived("stdout pipe closed by its reader")


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_stop_during_a_blocked_write_leaves_a_prefix_of_the_report(sig):
    """A reader slower than the report (a pager, a full pipe): a stop while the write is blocked leaves
    what the reader got a byte-exact prefix of the report — no line of the interruption note mixed into it,
    nothing written twice — and the stop's exit status (130 for SIGINT, 143 for SIGTERM)."""
    import fcntl
    import signal
    import termios
    import time

    tally.fault(f"{sig} during a blocked write of the report")
    argv = [*DIAGNOSE, "-vv"]  # every detail: far more than the pipe below holds
    e = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", COLUMNS="100")
    whole = subprocess.run(argv, capture_output=True, env=e, timeout=300).stdout
    r, w = os.pipe()
    fcntl.fcntl(w, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
    proc = subprocess.Popen(argv, stdout=w, stderr=subprocess.PIPE, env=e)
    os.close(w)
    try:
        deadline = time.monotonic() + 120
        held = bytearray(4)
        while proc.poll() is None and time.monotonic() < deadline:
            fcntl.ioctl(r, termios.FIONREAD, held)
            if int.from_bytes(held, sys.byteorder) >= 4096:  # the pipe is full: the writer is blocked
                break
            time.sleep(0.05)
        assert proc.poll() is None and len(whole) > 3 * 4096, "the report was written before the pipe filled"
        time.sleep(0.3)
        proc.send_signal(getattr(signal, sig))
        got = b""
        while chunk := os.read(r, 1 << 16):
            got += chunk
        err = proc.stderr.read().decode() if proc.stderr else ""
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(r)
    assert proc.returncode == {"SIGINT": 130, "SIGTERM": 143}[sig], (proc.returncode, err[-800:])
    assert got and whole.startswith(got), (len(got), got[-200:])
    assert "Traceback" not in err and "internal error" not in err, err[-800:]
    tally.survived(f"{sig} during a blocked write of the report")
