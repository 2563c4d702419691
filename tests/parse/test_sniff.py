"""Not an engine log: a file with no metrics line, no startup line and nothing a serving engine writes is one line
and exit 3, never a diagnosis (a confident `launch-config` and exit 1 on /etc/passwd was the bug)."""

from __future__ import annotations

import os

import pytest

from dflash_doctor.parse.sniff import looks_like_engine_log
from tests.conftest import ROOT

PASSWD = b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n" * 15
QUIET_VLLM = (
    b"(APIServer pid=7) INFO 05-14 09:00:00 [loggers.py:1] Engine 000: Avg prompt throughput: 0.0 tokens/s\n" * 30
)
NGINX = b'10.0.0.1 - - [14/May/2026:09:00:00 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/8.0"\n' * 30


@pytest.mark.parametrize(
    "head,engine",
    [
        (PASSWD, False),
        ((ROOT / "README.md").read_bytes()[:65536], False),
        (os.urandom(4096), False),
        (NGINX, False),  # a log, but not a serving engine's
        (QUIET_VLLM, True),  # vLLM's own logger header: an engine log whose spec decoding never ran
        (b"[2026-05-14 09:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 42\n" * 30, True),
        (b"[atom 09:00:00] Starting server, model loaded on 8 GPUs\n" * 30, True),
    ],
)
def test_what_reads_as_an_engine_log(head, engine):
    assert looks_like_engine_log(head) is engine


@pytest.mark.parametrize("command", ["diagnose", "logs"])
@pytest.mark.parametrize("name", ["passwd", "README.md", "random.bin"])
def test_a_file_that_is_no_engine_log_is_one_line_and_exit_3(cli, tmp_path, command, name):
    p = tmp_path / name
    p.write_bytes(
        {"passwd": PASSWD, "README.md": (ROOT / "README.md").read_bytes(), "random.bin": os.urandom(3000)}[name]
    )
    r = cli(command, "--log", str(p)) if command == "diagnose" else cli(command, str(p))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "not an engine log" in r.stderr and "Traceback" not in r.stderr
    assert not r.stdout.strip()  # no report, no cause
