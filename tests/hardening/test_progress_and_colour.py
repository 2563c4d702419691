"""What reaches a terminal besides the report: fleet progress lines naming hosts the user (or a hosts
file) supplied, and colour. A host name holding ESC, an OSC 8 link, BEL or U+202E was printed raw;
TERM=dumb got 590 colour escapes. Run under a real pseudo-terminal where the terminal matters."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.hardening import tally
from tests.hardening.hostile import terminal_violations

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")
HOSTILE_HOSTS = [
    "\x1b]8;;http://evil.example\x07click me\x1b]8;;\x07",
    "gpu\u202ekcab",
    "bell\x07box",
    "\x1b[2J\x1b[Hcleared",
    "ssh://deploy@gpu\x1b[31mred",
]


def _env(**kw) -> dict:
    e = dict(os.environ, PYTHONPATH=str(ROOT))
    e.pop("NO_COLOR", None)
    e.update(kw)
    return e


def in_pty(argv: list[str], env: dict, timeout: float = 300) -> bytes:
    """Run argv with stdin/stdout/stderr on a fresh pseudo-terminal; everything it printed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = bytearray()
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        out += data
    proc.wait(timeout)
    os.close(master)
    return bytes(out)


def test_fleet_progress_lines_never_print_a_host_name_raw():
    tally.hostile_input("terminal: escapes in fleet host names (progress lines)", len(HOSTILE_HOSTS))
    res = subprocess.run(
        [sys.executable, "-m", "dflash_doctor", "check", "host", *HOSTILE_HOSTS, "--timeout", "5"],
        capture_output=True,
        text=True,
        env=_env(NO_COLOR="1"),
        timeout=300,
    )
    assert res.returncode == 3
    assert res.stderr.count(": unreachable (") == len(HOSTILE_HOSTS), res.stderr  # a progress line per host
    assert not terminal_violations(res.stderr, color=False), res.stderr
    assert not terminal_violations(res.stdout, color=False)


def test_fleet_on_a_terminal_prints_no_raw_host_name_either():
    out = in_pty(
        [sys.executable, "-m", "dflash_doctor", "check", "host", *HOSTILE_HOSTS[:3], "--timeout", "5"],
        _env(NO_COLOR="1", TERM="xterm"),
    ).decode("utf-8", "replace")
    for bad in ("\x1b]8;;", "\u202e", "\x07"):
        assert bad not in out, repr(bad)


@pytest.mark.parametrize(
    "argv",
    [
        ["diagnose", "--log", LOG],
        ["check", "host", "bundle:/nonexistent", "local"],
        ["gate", "--log", LOG, "--min-acceptance-length", "5"],
    ],
)
def test_a_dumb_terminal_gets_no_escape_sequence_at_all(argv):
    """Before: 590 colour escapes for `diagnose` on TERM=dumb."""
    tally.hostile_input("terminal: TERM=dumb")
    out = in_pty([sys.executable, "-m", "dflash_doctor", *argv], _env(TERM="dumb"))
    assert b"\x1b" not in out and b"\x9b" not in out, out.count(b"\x1b")


@pytest.mark.parametrize(
    "argv",
    [["diagnose", "--log", LOG], ["checks", "list"], ["inspect-model", str(FIXTURES / "models/Qwen3.6-27B-DFlash")]],
)
def test_no_color_is_honoured_on_a_colour_terminal(argv):
    out = in_pty([sys.executable, "-m", "dflash_doctor", *argv], _env(TERM="xterm-256color", NO_COLOR="1"))
    assert b"\x1b[" not in out


def test_a_colour_terminal_does_get_colour():
    """The harness sees colour when there is some to see (so the two tests above can fail)."""
    out = in_pty([sys.executable, "-m", "dflash_doctor", "diagnose", "--log", LOG], _env(TERM="xterm-256color"))
    assert b"\x1b[" in out
