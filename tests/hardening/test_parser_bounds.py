"""Bounds in the log parser (issue 24): line handling linear whatever the line length (a line holding "accept"
followed by one 64 MiB line took 31 s, its 2 GiB gzip 11 minutes and 0.7 GB), and a log read through the
descriptor it was opened as (a log swapped for a FIFO mid-scan hung: grep reopened it by name)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys

import pytest

from dflash_doctor.parse import logscan, stream
from dflash_doctor.parse.fast.grep import grep_command
from dflash_doctor.parse.linereader import CHUNK, MAX_LINE
from dflash_doctor.parse.logscan import ScanPlan
from tests.conftest import ROOT
from tests.hardening import tally

GOOD = (
    "(APIServer pid=7) INFO 05-14 09:13:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
    "1.50, Accepted throughput: 50.00 tokens/s, Drafted throughput: 400.00 tokens/s, Accepted: 500 tokens, "
    "Drafted: 4000 tokens, Per-position acceptance rate: 0.300, 0.150, 0.050, 0.000, Avg Draft acceptance rate: 12.5%"
)
# a short line holding the candidate literal (a block could start there: the scanner looks ahead of it)
ACCEPT = "INFO 05-14 09:13:01 [logger.py:41] request accepted\n"


def _accept_then_long_line(fh, mib: int) -> None:
    fh.write((GOOD.format(s=0) + "\n" + ACCEPT).encode())
    block = b"y" * (1 << 20)
    for _ in range(mib):
        fh.write(block)
    fh.write(b"\n" + GOOD.format(s=3).encode() + b"\n")


def test_a_long_line_after_a_candidate_line_is_read_in_bounded_buffers(tmp_path, monkeypatch):
    """The scanner held back the candidate line for the block it might start, and with it the whole long line
    behind it, a chunk more at every read: quadratic. Every buffer now stays within a chunk and a line."""
    tally.hostile_input("a candidate line before a 64 MiB line")
    p = tmp_path / "long.log"
    with open(p, "wb") as fh:
        _accept_then_long_line(fh, 64)
    sizes = []
    real = stream.Scanner.process
    monkeypatch.setattr(stream.Scanner, "process", lambda self, buf, *a: sizes.append(len(buf)) or real(self, buf, *a))
    scan = logscan.scan(str(p), ScanPlan(grep=False))
    assert max(sizes) <= MAX_LINE + 2 * CHUNK, max(sizes)
    assert logscan.aggregate(scan).intervals == 2
    assert any("was skipped" in n for n in scan.notes)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM")
def test_a_2_gib_gzip_of_it_streams_in_bounded_memory(tmp_path):
    tally.hostile_input("a candidate line before a 2 GiB line, gzipped")
    p = tmp_path / "long.log.gz"
    with gzip.open(p, "wb", compresslevel=1) as fh:
        _accept_then_long_line(fh, 2048)
    code = (
        "import re, sys; from dflash_doctor.parse.logscan import aggregate, scan; "
        "s = scan(sys.argv[1]); "
        "hwm = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); "
        "print(aggregate(s).intervals, hwm // 1024)"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    out = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    intervals, peak_mib = map(int, out.stdout.split())
    assert intervals == 2 and peak_mib < 150, (intervals, peak_mib)


@pytest.mark.skipif(grep_command() is None or not os.path.isdir("/proc/self/fd"), reason="no GNU grep, no /proc")
@pytest.mark.parametrize("workers", [1, 2])
def test_a_log_swapped_for_a_fifo_mid_scan_is_read_as_opened(tmp_path, workers):
    """The log is renamed over by a FIFO right after it was opened: every read goes through the descriptor
    opened first (grep once reopened the name, and waited on the FIFO for ever)."""
    tally.fault("a log swapped for a FIFO mid-scan")
    p = tmp_path / "served.log"
    p.write_text("\n".join(GOOD.format(s=i % 60) for i in range(300)) + "\n")
    code = (
        "import os, sys\n"
        "from dflash_doctor.parse import logscan\n"
        "real = logscan.open_source\n"
        "def swapped(path):\n"
        "    src = real(path)\n"
        "    os.mkfifo(path + '.fifo')\n"
        "    os.replace(path + '.fifo', path)\n"
        "    return src\n"
        "logscan.open_source = swapped\n"
        "plan = logscan.ScanPlan(grep_from=0, parallel_from=0, workers=int(sys.argv[2]))\n"
        "print(logscan.aggregate(logscan.scan(sys.argv[1], plan)).intervals)\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    try:
        out = subprocess.run(
            [sys.executable, "-c", code, str(p), str(workers)], capture_output=True, text=True, timeout=60, env=env
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the scan hung on the FIFO now at the log's path")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["300"]
    tally.survived("a log swapped for a FIFO mid-scan")


def test_a_fifo_or_a_directory_given_as_a_log_is_refused_without_waiting(tmp_path):
    """Opening never waits on a FIFO without a writer: it is not a regular file, and the scan says so."""
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    code = (
        "import sys\nfrom dflash_doctor.parse import logscan\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n        logscan.scan(path)\n    except OSError as exc:\n        print(exc.strerror)\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    try:
        out = subprocess.run(
            [sys.executable, "-c", code, str(fifo), str(tmp_path)], capture_output=True, text=True, timeout=60, env=env
        )
    except subprocess.TimeoutExpired:
        pytest.fail("opening the FIFO waited for a writer")
    assert out.stdout.splitlines() == ["not a regular file"] * 2, out.stderr[-1000:]
