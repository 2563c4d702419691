"""The fast route (parse/fast/: the grep pre-filter, byte-range workers, vLLM lines in bulk) must give what
the plain route (every candidate line through the format registry) gives.

Large plain files take the grep route; here the plan's thresholds are lowered so that every fixture log, and
mixes of them split across worker processes, go every way and are compared field by field.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dflash_doctor.parse import logscan
from dflash_doctor.parse.fast import grep as fastgrep
from dflash_doctor.parse.logscan import ScanPlan

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
LOGS = sorted(p for p in FIX.iterdir() if p.is_file() and p.suffix in (".log", ".txt", ".jsonl"))

pytestmark = pytest.mark.skipif(fastgrep.grep_command() is None, reason="no GNU grep")


GREP = ScanPlan(grep_from=0, parallel_from=0)  # the grep route, in `workers` byte ranges
STREAM = ScanPlan()  # a small file's route: streamed, vLLM lines in bulk
PLAIN = ScanPlan(fast=False)  # every candidate line through the registry


def _scan(path: Path, plan: ScanPlan, workers: int = 1):
    scan = logscan.scan(str(path), dataclasses.replace(plan, workers=workers))
    return scan, logscan.aggregate(scan)


def _same(a, b, startup: bool = True):
    (sa, aa), (sb, ab) = a, b
    assert sa.n_intervals == sb.n_intervals
    assert sa.formats == sb.formats
    assert sa.malformed_count == sb.malformed_count, (sa.malformed, sb.malformed)
    assert [(m.offset, m.reason) for m in sa.malformed] == [(m.offset, m.reason) for m in sb.malformed]
    st_a, st_b = sa.startup, sb.startup
    for f in ("engine", "version", "method", "drafter", "num_speculative_tokens", "model", "architectures"):
        assert not startup or getattr(st_a, f) == getattr(st_b, f), f
    assert sa.sglang_rate_meaning == sb.sglang_rate_meaning
    assert sa.mean_normalised == sb.mean_normalised
    if aa is None or ab is None:
        assert aa is ab
        return
    for f in (
        "mean_acceptance_length",
        "drafts",
        "drafted",
        "accepted",
        "k",
        "intervals",
        "draft_acceptance_rate",
        "tau_first_third",
        "tau_last_third",
    ):
        x, y = getattr(aa, f), getattr(ab, f)
        if isinstance(x, float) and math.isnan(x):
            assert isinstance(y, float) and math.isnan(y), f
        elif x is None or y is None:
            assert x is y, f
        else:
            assert x == pytest.approx(y, rel=1e-12), f
    assert aa.per_position == pytest.approx(ab.per_position, rel=1e-12)
    assert aa.formats == ab.formats and aa.engines == ab.engines
    assert aa.series == ab.series
    assert aa.per_engine == ab.per_engine


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_every_fixture_log_reads_the_same_through_grep(log):
    plain = _scan(log, PLAIN)
    _same(_scan(log, GREP), plain)
    _same(_scan(log, STREAM), plain)


def test_a_mixed_log_split_across_workers_reads_the_same(tmp_path, monkeypatch):
    """Every server-log format interleaved, repeated so that the worker ranges cut through them. One SGLang
    deployment: with three, whose startup `server_args` (and so the `accept rate` reading) counts would
    depend on which of their startup lines a scan reads first — there is no right answer to compare."""
    # Not the 0.8.3 log either: its lines print no drafts, which come from the k in the startup lines, and
    # with a dozen deployments' startup lines in one file, whose k applies is as ambiguous (tested alone).
    servers = [
        p
        for p in LOGS
        if "offline" not in p.name and p.name not in ("sglang-0.5.2.log", "sglang-0.5.23.log", "vllm-0.8.3.log")
    ]
    text = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in servers)
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(text * 7)
    python = _scan(mixed, PLAIN, workers=1)
    assert python[0].n_intervals > 100
    for workers in (1, 2, 5):
        # (startup facts not compared: with a dozen deployments' startup lines in one file, the last one a
        # route reads near each new process is 'the' version; single logs and the mixtures below compare them)
        _same(_scan(mixed, GREP, workers=workers), python, startup=False)


def test_offline_summary_at_the_end_of_a_large_file(tmp_path, monkeypatch):
    """The offline example's summary carries no grep literal: it is looked for at the file's ends."""
    noise = b"INFO 05-14 09:00:00 [engine.py:1] request done\n" * 60000  # 2.8 MB: the middle is not searched
    off = (FIX / "vllm-offline-example.txt").read_bytes()
    p = tmp_path / "offline-run.log"
    p.write_bytes(noise + off)
    scan, summary = _scan(p, GREP)
    assert "vllm-offline" in " ".join(scan.formats)
    _same((scan, summary), _scan(p, PLAIN))


def test_grep_failure_falls_back_to_python(tmp_path, monkeypatch):
    log = FIX / "vllm-0.11.0.log"
    monkeypatch.setattr(logscan, "grep_command", lambda: str(tmp_path / "no-such-grep"))
    _same(_scan(log, GREP), _scan(log, PLAIN))


def test_absurd_and_damaged_lines_are_reported_the_same(tmp_path, monkeypatch):
    good = (
        "(APIServer pid=9) INFO 05-14 09:11:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance "
        "length: 1.50, Accepted throughput: 10.00 tokens/s, Drafted throughput: 30.00 tokens/s, Accepted: "
        "{a} tokens, Drafted: 300 tokens, Per-position acceptance rate: 0.500, 0.000, 0.000, Avg Draft "
        "acceptance rate: 33.3%\n"
    )
    lines = [good.format(s=i, a=50) for i in range(40)]
    lines[7] = good.format(s=7, a=500)  # accepted > drafted
    lines[9] = lines[9][:120] + "\n"  # cut mid-line
    lines[11] = "(APIServer pid=9) INFO 05-14 09:11:11 [metrics.py:101] SpecDecoding metrics: Mean acc\n"
    p = tmp_path / "bad.log"
    p.write_text("".join(lines))
    grep = _scan(p, GREP)
    assert grep[0].malformed_count == 3
    # the lines after a damaged one keep their process tag (the streamed scanner once lost it there)
    assert grep[1].engines == ("pid 9",)
    _same(grep, _scan(p, PLAIN))


def test_unusual_rate_lists_read_the_same(tmp_path, monkeypatch):
    """The grep route reads the rates loosely and checks them a buffer at a time: every list that is not
    exactly vLLM's layout must still come out as the streamed scanner reads it."""
    line = (
        "(APIServer pid=9) INFO 05-14 09:12:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance "
        "length: 1.60, Accepted throughput: 10.00 tokens/s, Drafted throughput: 30.00 tokens/s, Accepted: "
        "60 tokens, Drafted: 300 tokens, Per-position acceptance rate: {pp}, Avg Draft acceptance rate: 20.0%\n"
    )
    odd = [
        "0.400,0.200,0.000",
        "0.400, 0.200, 1.000",
        "1.001, 0.200, 0.000",
        "2.000, 0.1, 0.0",
        "00.40, 0.200, 0.000",
        "0.4a0, 0.200, 0.000",
        "0.400, 0.200",
        "0.400, 0.200, 0.000, 0.000, 0.000",
    ]
    lines = [line.format(s=i, pp="0.400, 0.200, 0.000") for i in range(30)]
    for i, pp in enumerate(odd):
        lines.insert(3 + 3 * i, line.format(s=40 + i, pp=pp))
    p = tmp_path / "odd.log"
    p.write_text("".join(lines))
    _same(_scan(p, GREP), _scan(p, PLAIN))


def test_counts_beyond_the_cap_are_rejected_the_same_way_on_every_route(tmp_path, monkeypatch):
    """A 32-digit count is beyond the 10^15 cap (SECURITY.md): rejected as forged or damaged (it used to be
    summed as data), on the streamed route, the grep route and in workers alike; nothing crashes or wraps."""
    line = (
        "(APIServer pid=9) INFO 05-14 09:12:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance "
        "length: 1.60, Accepted throughput: 10.00 tokens/s, Drafted throughput: 30.00 tokens/s, Accepted: "
        "{a} tokens, Drafted: {d} tokens, Per-position acceptance rate: 0.400, 0.200, 0.000, Avg Draft "
        "acceptance rate: 20.0%\n"
    )
    lines = [line.format(s=i % 60, a=60, d=300) for i in range(40)]
    lines[30] = line.format(s=30, a=6 * 10**30, d=3 * 10**31)
    p = tmp_path / "huge.log"
    p.write_text("".join(lines))
    python = _scan(p, PLAIN)
    assert python[1].drafted == 39 * 300
    assert python[0].rejected_count == 1 and "cap" in python[0].malformed[0].reason
    for workers in (1, 2, 3):
        _same(_scan(p, GREP, workers=workers), python)


def test_a_log_full_of_bench_words_reads_the_same(tmp_path, monkeypatch):
    """Lines with `Draft tokens:` / `Speculative Decoding` make the grep route read the lines around them;
    a server that logs such words on every line must still read the same (and once, not once a line)."""
    bench = (FIX / "vllm-bench-serve.txt").read_text()
    noise = "".join(
        f"INFO 05-14 09:00:{i % 60:02d} request {i}: Draft tokens: {i % 7}, Speculative Decoding on\n"
        for i in range(3000)
    )
    p = tmp_path / "wordy.log"
    p.write_text(noise + bench + noise)
    grep = _scan(p, GREP)
    assert grep[0].formats
    _same(grep, _scan(p, PLAIN))


# server-log lines (a bench block is found through its header in the grep route: tested above)
_POOL = [
    ln
    for p in LOGS
    if "offline" not in p.name and "bench" not in p.name and p.name not in ("sglang-0.5.2.log", "sglang-0.5.23.log")
    for ln in p.read_text("utf-8", "replace").splitlines()
]


def _fixture_line(name: str, holding: str) -> str:
    return next(ln for ln in (FIX / name).read_text().splitlines() if holding in ln)


_DECODE = _fixture_line("sglang-0.5.23-requests.log", "08:01:00 TP0] Decode batch")
_FINISH_0 = _fixture_line("sglang-0.5.23-requests.log", "rid='req-0'")
_FINISH_1 = _fixture_line("sglang-0.5.23-requests.log", "rid='req-1'")
_TIMING = _fixture_line("llamacpp-server.log", "| task 1 | draft acceptance")
_GENERIC = _fixture_line("generic-eval-summary.txt", "avg acceptance length")
_V1_092 = _fixture_line("vllm-0.9.2.log", "SpecDecoding metrics")


@given(
    lines=st.lists(st.one_of(st.sampled_from(_POOL), st.text(max_size=80)), min_size=1, max_size=120),
    cut=st.integers(0, 200),
)
# the request line's marker ('spec_verify_ct') cut off: its pass was not run (a pass's literals now select it)
@example(lines=[_DECODE, _FINISH_0], cut=29)
# a llama.cpp line holding the offline example's block literal was read by the reader of last resort in the
# grep route's block window (a block format now gives way to a line format tried before it)
@example(lines=[_TIMING, _GENERIC], cut=0)
@example(lines=[_GENERIC, _TIMING], cut=0)
# rows of two grep passes (main: the vLLM line; requests: the SGLang lines) in one file order
@example(lines=[_FINISH_0, _V1_092, _FINISH_1], cut=0)
def test_random_mixtures_read_the_same(tmp_path_factory, lines, cut):
    """Lines drawn from every server-log fixture, junk between them and the last line cut anywhere. (One
    range: split across workers, a range that starts after the startup lines parses old formats without
    their k until the merge — the mixed-log test above compares what splitting keeps.)"""
    text = "\n".join(lines)
    text = text[: max(1, len(text) - cut)]
    p = tmp_path_factory.mktemp("mix") / "mix.log"
    p.write_bytes(text.encode("utf-8", "replace"))
    _same(_scan(p, GREP), _scan(p, PLAIN))


def test_a_pass_is_selected_by_lines_that_start_after_the_file_s_head(tmp_path, monkeypatch):
    """The grep passes other than the main one were chosen by the file's first 256 KiB: a request log whose
    first `Finish:` line comes later (a head full of decode lines, or of long prompts) lost its requests on the
    grep route. The choice now also samples the tail and windows between (fast/grep.py selection_sample)."""
    head = (FIX / "sglang-0.5.23-requests.log").read_text().splitlines()[0] + "\n"
    decode = [ln for ln in (FIX / "sglang-0.5.23-requests.log").read_text().splitlines() if "Decode batch" in ln]
    text = head + "\n".join(decode[i % len(decode)] for i in range(1800)) + "\n"
    text += (
        "\n".join(f"{decode[i % len(decode)]}\n{_FINISH_0.replace('req-0', f'req-{i}')}" for i in range(1000)) + "\n"
    )
    p = tmp_path / "late-requests.log"
    p.write_text(text)
    assert b"Finish: obj" not in p.read_bytes()[: 300 << 10]
    grep = _scan(p, GREP)
    assert grep[0].formats.get("sglang-request") == 1000
    _same(grep, _scan(p, PLAIN))


def test_lines_without_a_fast_literal_are_found_by_the_grep_route_too(tmp_path, monkeypatch):
    """llama.cpp releases that log the draft line through SLT_INF with a leading newline (or SLT_CNT) print it
    alone, without the `| ` of its lead; SGLang's JSON request log (`--log-requests-format json`,
    utils/log_utils.py log_json) has no `Finish: obj`. The streamed route reads both; the grep route once
    missed them (its literals were `| draft acceptance` and `Finish: obj`)."""
    llama = (
        "0.08.434.829 I slot print_timing: id  0 | task {t} | \n"
        "prompt eval time =      35.12 ms /    12 tokens (    2.93 ms per token,   341.68 tokens per second)\n"
        "       eval time =    1203.55 ms /   128 tokens (    9.40 ms per token,   106.35 tokens per second)\n"
        "      total time =    1238.67 ms /   140 tokens\n"
        "0.08.434.829 I slot print_timing: id  0 | task {t} | \n"
        "draft acceptance rate = 0.57576 (   57 accepted /    99 generated)\n"
    )
    p = tmp_path / "llama.log"
    p.write_text("0.00.010.410 I llama_model_loader: loaded meta data\n" + "".join(llama.format(t=t) for t in range(5)))
    grep = _scan(p, GREP)
    assert grep[0].formats == {"llamacpp-print-timing": 5}
    _same(grep, _scan(p, PLAIN))
    rec = (
        '[2026-03-02 08:01:0{i}] {{"timestamp": "2026-03-02T08:01:0{i}.5", "event": "request.finished", "rid": "r{i}", '
        '"obj": {{"rid": "r{i}", "stream": false}}, "out": {{"meta_info": {{"id": "r{i}", "completion_tokens": 30{i}, '
        '"spec_accept_length": 2.5, "spec_verify_ct": 11{i}}}}}}}\n'
    )
    p = tmp_path / "sglang-json.log"
    p.write_text(
        "[2026-03-02 08:00:00] server_args=ServerArgs(speculative_algorithm='EAGLE3', log_requests=True)\n"
        + "".join(rec.format(i=i) for i in range(5))
    )
    grep = _scan(p, GREP)
    assert grep[0].formats == {"sglang-request": 5}
    _same(grep, _scan(p, PLAIN))


def test_grep_ending_on_its_own_is_not_a_failure(tmp_path):
    """At EOF grep exits by itself; it was once signalled before it had, read as a failure, and the range
    silently re-scanned in Python (another result for startup lines past the range). 40 tries."""
    p = tmp_path / "quiet.log"
    p.write_text("server_args=ServerArgs(speculative_num_draft_tokens=9)\nINFO vLLM API server version 0.10.1\n")
    size = p.stat().st_size
    with open(p, "rb", buffering=0) as fh:
        for _ in range(40):
            fastgrep.scan_range(fh, str(p), 0, size, size, logscan.LogScan(), fastgrep.grep_command())


def _v1_line(prefix: str, i: int) -> str:
    acc, drafts = 40 + i % 17, 100 + i % 7
    rates = ", ".join(f"{r:.3f}" for r in (acc / drafts / 2, acc / drafts / 2, 0.0))
    return (
        f"{prefix}SpecDecoding metrics: Mean acceptance length: {1 + acc / drafts:.2f}, Accepted throughput: "
        f"{acc / 10:.2f} tokens/s, Drafted throughput: {drafts * 3 / 10:.2f} tokens/s, Accepted: {acc} tokens, "
        f"Drafted: {drafts * 3} tokens, Per-position acceptance rate: {rates}, "
        f"Avg Draft acceptance rate: {acc / drafts / 3 * 100:.1f}%"
    )


def test_shaped_fast_reading_gives_the_rows_the_general_one_gives(tmp_path, monkeypatch):
    """Once a buffer's lines have set the prefix shape, later buffers are read with a regex that takes the
    prefix as that many bytes. Lines of another shape (another process, another prefix length), a line whose
    prefix holds the message's literal within that length, and a prefix of the right length that is not the
    shape's must read as the general reading (and the streamed route) reads them. Small buffers: many of them."""
    monkeypatch.setattr(fastgrep, "READ", 700)
    a = "(APIServer pid=1843) INFO 05-14 09:{m:02d}:{s:02d} [metrics.py:101] "
    b = "(EngineCore_DP1 pid=77) INFO 05-14 09:{m:02d}:{s:02d} [loggers.py:9] "
    lines = []
    for i in range(400):
        m, s = divmod(i, 60)
        lines.append(_v1_line(a.format(m=m, s=s), i))
        if i % 37 == 5:
            lines.append(_v1_line(b.format(m=m, s=s), i))
        if i % 53 == 11:  # the literal inside the first len(prefix) bytes: the general regex ends the prefix there
            lines.append(_v1_line("SpecDecoding metrics: " + a.format(m=m, s=s)[22:], i))
        if i % 61 == 7:  # same length as the shape, another process (its own tag, its own startup lines)
            lines.append(_v1_line(a.format(m=m, s=s).replace("pid=1843", "pid=9999"), i))
    p = tmp_path / "shapes.log"
    p.write_text("\n".join(lines) + "\n")
    seen = []
    real = fastgrep._shaped
    monkeypatch.setattr(fastgrep, "_shaped", lambda n: seen.append(n) or real(n))
    grep = _scan(p, GREP)
    assert seen, "the shaped regex was never tried"
    python = _scan(p, STREAM)
    _same(grep, python)
    _same(grep, _scan(p, PLAIN))
    assert grep[0].n_intervals == python[0].n_intervals >= 400
    assert grep[0].foreign_count == python[0].foreign_count
    for c in ("acc", "dft", "off"):
        assert list(grep[0].fast[c]) == list(python[0].fast[c]), c
    assert list(grep[0].fast["tag"]) == list(python[0].fast["tag"])
    assert len(set(grep[0].fast["tag"])) == 3
    assert list(grep[0].fast["ts"]) == list(python[0].fast["ts"])
