"""A huge line on the grep route (issue 19, item 12): grep holds a whole line to print it, so its memory
grew with the line (a 312 MB line cost 435 MB) and the "skipped" note of the streamed route was missing.
Capped now: grep stops at a line far beyond MAX_LINE, the range is streamed in Python, which skips the
line with its note; the intervals around it are all read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dflash_doctor.parse.fast.grep import grep_command
from tests.hardening import tally

ROOT = Path(__file__).resolve().parents[2]
GOOD = (
    "(APIServer pid=7) INFO 05-14 09:13:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
    "1.50, Accepted throughput: 50.00 tokens/s, Drafted throughput: 400.00 tokens/s, Accepted: 500 tokens, "
    "Drafted: 4000 tokens, Per-position acceptance rate: 0.300, 0.150, 0.050, 0.000, Avg Draft acceptance rate: 12.5%"
)
LINE_MB = 160

# Peak memory of this process and of its children (grep) after a scan; ru_maxrss of children is taken in a
# fresh small interpreter, so it is grep's own peak (or this small process's size, whichever is larger).
CODE = (
    "import re, resource, sys; from dflash_doctor.parse.logscan import ScanPlan, scan; "
    "s = scan(sys.argv[1], ScanPlan(workers=int(sys.argv[2]))); "
    "hwm = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); "
    "kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss; "
    "print(s.n_intervals, hwm // 1024, kids // 1024, '|'.join(s.notes) or '-')"
)


@pytest.fixture(scope="module")
def long_line_log(tmp_path_factory):
    p = tmp_path_factory.mktemp("longline") / "long.log"
    block = b"y" * (1 << 20)
    with open(p, "wb") as fh:
        fh.write("".join(GOOD.format(s=i) + "\n" for i in range(2)).encode())
        fh.write(b"(APIServer pid=7) INFO 05-14 09:13:02 [logger.py:41] Received request x: prompt: '")
        for _ in range(LINE_MB):
            fh.write(block)
        fh.write(b"'\n" + GOOD.format(s=3).encode() + b"\n")
    return p


@pytest.mark.skipif(grep_command() is None, reason="no GNU grep")
@pytest.mark.parametrize("workers", [1, 2])
def test_a_huge_line_costs_grep_no_memory_and_keeps_its_note(long_line_log, workers):
    tally.hostile_input("a huge line on the grep route")
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    out = subprocess.run(
        [sys.executable, "-c", CODE, str(long_line_log), str(workers)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    n, rss, kids, notes = out.stdout.strip().split(" ", 3)
    assert int(n) == 3
    assert int(rss) < 150, f"this process peaked at {rss} MiB"
    assert int(kids) < 100, f"grep peaked at {kids} MiB reading a {LINE_MB} MB line"
    assert "bytes without a newline was skipped" in notes
