"""Damaged and hostile logs: each gets a clear note, the rest is still parsed, no traceback, and
the exit code says what happened."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dflash_doctor.parse import logscan
from dflash_doctor.parse.logscan import aggregate
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
GOOD = (
    "(APIServer pid=7) INFO 05-14 09:13:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
    "1.50, Accepted throughput: 50.00 tokens/s, Drafted throughput: 400.00 tokens/s, Accepted: 500 tokens, "
    "Drafted: 4000 tokens, Per-position acceptance rate: 0.300, 0.150, 0.050, 0.000, Avg Draft acceptance rate: 12.5%"
)


def good(n: int = 3) -> str:
    return "".join(GOOD.format(s=i) + "\n" for i in range(n))


def run_logs(cli, path, *extra):
    r = cli("logs", str(path), "--format", "json", *extra)
    assert "Traceback" not in r.stderr, r.stderr
    return r, (json.loads(r.stdout) if r.stdout.strip() else None)


def notes_of(rep) -> str:
    return "\n".join(rep["notes"])


def test_empty_file(cli, tmp_path):
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    r = cli("logs", str(p), "--format", "json")
    assert r.returncode == 3 and r.stdout == ""  # nothing was read: one line, not a report
    assert r.stderr.startswith("error: ") and "is empty" in r.stderr


def test_binary_junk_with_metrics_lines_inside(cli, tmp_path):
    p = tmp_path / "junk.log"
    junk = bytes(range(256)) * 64
    p.write_bytes(junk + b"\n" + good(2).encode() + junk + b"\n" + good(1).encode())
    r, rep = run_logs(cli, p)
    assert rep["acceptance"]["intervals"] == 3
    assert "NUL" in notes_of(rep) or "binary" in notes_of(rep)


def test_nul_bytes_inside_a_metrics_line(tmp_path):
    p = tmp_path / "nul.log"
    p.write_bytes(good(2).encode() + GOOD.format(s=9).replace("Drafted:", "Draf\x00ted:").encode() + b"\n")
    scan = logscan.scan(str(p))
    assert scan.n_intervals == 3  # the NUL is dropped before parsing
    assert any("NUL" in n for n in scan.notes)


def test_invalid_utf8(cli, tmp_path):
    p = tmp_path / "bad-utf8.log"
    # (damaged bytes before the line's own start; words there would make it another message: test_log_provenance)
    p.write_bytes(b"\xff\xfe\xfa " + GOOD.format(s=1).encode() + b"\n" + good(2).encode())
    r, rep = run_logs(cli, p)
    assert rep["acceptance"]["intervals"] == 3
    assert "UTF-8" in notes_of(rep)


@pytest.mark.parametrize("route, head", [("python", b"x"), ("grep", b"x"), ("grep", b"SpecDecoding metrics: ")])
def test_100_mb_line_without_newline_keeps_memory_flat(tmp_path, route, head):
    """A 100 MB file takes the grep pre-filter route when GNU grep is there (fast/grep.py), else the
    streamed Python scan. Either way the long line costs no memory; a long line that could be a metrics
    line (it holds a literal) is skipped with a note — grep never shows Python one that cannot be."""
    from dflash_doctor.parse.fast.grep import grep_command

    if route == "grep" and grep_command() is None:
        pytest.skip("no GNU grep")
    p = tmp_path / "long.log"
    with open(p, "wb") as fh:
        fh.write(good(2).encode())
        block = b"x" * (1 << 20)
        fh.write(head + block[len(head) :])
        for _ in range(99):
            fh.write(block)
        fh.write(b"\n" + good(1).encode())
    # VmHWM, not ru_maxrss: ru_maxrss survives exec, so a child forked from a large pytest process would
    # report the parent's size rather than its own peak.
    code = (
        "import re, sys; from dflash_doctor.parse.logscan import ScanPlan, scan; "
        "s = scan(sys.argv[1], ScanPlan(grep=sys.argv[2] == 'grep')); "
        "hwm = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); "
        "print(s.n_intervals, hwm // 1024, '|'.join(s.notes) or '-')"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    out = subprocess.run(
        [sys.executable, "-c", code, str(p), route], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr
    n, rss_mib, notes = out.stdout.strip().split(" ", 2)
    assert int(n) == 3
    assert int(rss_mib) < 120, f"peak RSS {rss_mib} MiB reading a 100 MB line"
    if route == "python" or head != b"x":
        assert "104857600 bytes without a newline was skipped" in notes


def test_truncated_gzip(cli, tmp_path):
    data = gzip.compress(good(400).encode(), mtime=0)
    p = tmp_path / "cut.log.gz"
    p.write_bytes(data[: len(data) // 2])
    r, rep = run_logs(cli, p)
    n = rep["acceptance"]["intervals"]
    assert 0 < n < 400
    assert "truncated" in notes_of(rep)


def test_metrics_line_cut_mid_number_is_salvaged_and_reported(cli, tmp_path):
    """Issue 14.3: the fields before the cut (Accepted, Drafted) are kept, k comes from the complete lines
    of the same engine, and the report says which line was salvaged and what it lacked."""
    cut = GOOD.format(s=5)
    cut = cut[: cut.index("0.150") + 3]  # "... rate: 0.300, 0.1"
    p = tmp_path / "cut.log"
    p.write_text(good(2) + cut + "\n" + good(1))
    r, rep = run_logs(cli, p)
    acc = rep["acceptance"]
    assert acc["intervals"] == 4 and acc["drafts"] == pytest.approx(4000.0)
    assert acc["mean_acceptance_length"] == pytest.approx(1.5)
    salvage = next(n for n in rep["notes"] if n.startswith("salvaged"))
    assert ":3 " in salvage and "cut inside the list" in salvage and "k = 4 from complete lines" in salvage
    stats = next(e["value"] for e in rep["evidence"] if e["kind"] == "log-scan")
    assert stats["salvaged"][0]["where"].endswith(":3") and stats["salvaged_count"] == 1


def test_v0_line_cut_mid_number_is_salvaged_from_its_efficiency():
    line = (
        "INFO 07-24 04:00:31 metrics.py:316] Speculative metrics: Draft acceptance rate: 0.642, System efficiency: "
        "0.598, Number of speculative tokens: 3, Number of accepted tokens: 8547, Number of draft tokens: 13311, "
        "Number of emitted tokens: 106"
    )
    scan = logscan.scan(logscan.Lines([line], "v0-cut.log"))
    assert scan.malformed_count == 0 and scan.salvaged_count == 1
    assert "emitted" in scan.salvaged[0].missing and "system efficiency" in scan.salvaged[0].derived
    s = aggregate(scan)
    assert s.mean_acceptance_length == pytest.approx(0.598 * 4, abs=0.002)  # emitted/drafts = eff·(k+1)


def test_k_changing_between_lines():
    k4 = GOOD.format(s=1)
    k2 = (
        "(APIServer pid=7) INFO 05-14 09:14:00 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 1.40, "
        "Accepted throughput: 40.00 tokens/s, Drafted throughput: 200.00 tokens/s, Accepted: 400 tokens, Drafted: "
        "2000 tokens, Per-position acceptance rate: 0.300, 0.100, Avg Draft acceptance rate: 20.0%"
    )
    scan = logscan.scan(logscan.Lines([k4, k2], "k.log"))
    s = aggregate(scan)
    assert any("k changed" in n for n in s.notes)
    # positions 1-2 summed over both lines (1000 drafts each), positions 3-4 over the k=4 line only
    assert s.per_position == pytest.approx((0.3, 0.125, 0.05, 0.0))
    assert s.mean_acceptance_length == pytest.approx(1 + 900 / 2000)


@pytest.mark.parametrize(
    "mutate,reason",
    [
        (lambda ln: ln.replace("Accepted: 500", "Accepted: -500"), "negative"),
        (lambda ln: ln.replace("Accepted: 500", "Accepted: 50000"), "absurd"),
        (lambda ln: ln.replace("0.300, 0.150", "7.300, 0.150"), "absurd"),
    ],
)
def test_negative_or_absurd_numbers_are_rejected_with_a_reason(mutate, reason):
    scan = logscan.scan(logscan.Lines([GOOD.format(s=1), mutate(GOOD.format(s=2))], "bad.log"))
    assert scan.n_intervals == 1
    assert scan.malformed_count == 1 and reason in scan.malformed[0].reason


def test_two_engines_interleaved(cli, tmp_path):
    a = GOOD
    b = (
        GOOD.replace("pid=7", "pid=8")
        .replace("Accepted: 500", "Accepted: 1500")
        .replace("length: 1.50", "length: 2.50")
        .replace("0.300, 0.150, 0.050, 0.000", "0.700, 0.500, 0.300, 0.000")
        .replace("rate: 12.5%", "rate: 37.5%")
        .replace("50.00 tokens/s", "150.00 tokens/s")
    )
    p = tmp_path / "two.log"
    p.write_text("".join(a.format(s=i) + "\n" + b.format(s=i) + "\n" for i in range(3)))
    r, rep = run_logs(cli, p)
    acc = rep["acceptance"]
    by = {e["engine"]: e for e in acc["per_engine"]}
    assert by["pid 7"]["tau"] == pytest.approx(1.5) and by["pid 8"]["tau"] == pytest.approx(2.5)
    assert acc["mean_acceptance_length"] == pytest.approx(2.0)
    assert "interleaved" in notes_of(rep)


def test_missing_file_is_a_usage_error(cli, tmp_path):
    r = cli("logs", str(tmp_path / "nope.log"), "--format", "json")
    assert r.returncode == 2 and r.stdout == ""
    assert "nope.log: no such file" in r.stderr.splitlines()[0] and r.stderr.splitlines()[1].startswith("hint: ")


def test_log_without_metrics_lines(cli, tmp_path):
    p = tmp_path / "quiet.log"
    p.write_text("INFO 05-14 09:00:00 [loggers.py:1] hello\n" * 50)
    r, rep = run_logs(cli, p)
    assert r.returncode == 1  # spec decoding never showed up: that is a finding, not a pass
    active = next(f for f in rep["findings"] if f["check"] == "spec-decode-active")
    assert active["status"] == "fail"


def test_a_v0_line_cut_before_its_first_number_is_reported(tmp_path):
    """A `Speculative metrics` line cut before "acceptance" holds none of the literal the first pass looks
    for; the second pass must still show it (it did for V1 lines only)."""
    p = tmp_path / "v0cut.log"
    p.write_text("INFO 07-24 04:03:50 metrics.py:316] Speculative metrics: Draft ac\n")
    scan = logscan.scan(str(p))
    assert scan.malformed_count == 1 and "Speculative metrics" in scan.malformed[0].text


def test_a_startup_line_last_and_without_newline_is_read(tmp_path):
    p = tmp_path / "tail.log"
    p.write_text("INFO 03-02 08:00:00 [api_server.py:1034] vLLM API server version 0.10.1")
    assert logscan.scan(str(p)).startup.version == "0.10.1"


def test_a_summary_line_does_not_swallow_the_log_lines_after_it(tmp_path):
    """A bench summary's first line followed by ordinary log lines (a pasted excerpt): only the block's own
    lines belong to it; the SGLang line after it is still read."""
    p = tmp_path / "paste.log"
    p.write_text(
        "Acceptance rate (%):                     54.17\n"
        "[2025-10-22 10:27:00 TP0] Decode batch, #running-req: 4, #token: 3600, token usage: 0.02, "
        "accept len: 2.09, accept rate: 0.23, cuda graph: True, gen throughput (token/s): 166.00, "
        "#queue-req: 0\n"
    )
    scan = logscan.scan(str(p))
    assert scan.formats.get("sglang") == 1


def test_a_generic_block_with_zero_drafts_rates_and_no_mean_is_no_figure(tmp_path):
    """Found by mypy: the generic key-value reader computed (mean - 1) * drafts with no mean (TypeError, an
    internal error). Zero drafts with rates and no mean gives no τ: the block is not read."""
    log = tmp_path / "summary.log"
    log.write_text(
        "run summary\nnum_spec_tokens     : 3\nnum_drafts          : 0\n"
        "  accept@pos 0      : 0.6\n  accept@pos 1      : 0.3\n  accept@pos 2      : 0.1\n"
    )
    r = run_cli("logs", str(log))
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 3, r.stderr
