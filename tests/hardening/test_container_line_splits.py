"""Container runtimes split a log line longer than 16 KiB into records — CRI's `stdout P` records up to the `F`
one (containerd, CRI-O), Docker json-file's `{"log": …}` records whose text has no line end yet — and a
prompt that puts a metrics line right at a split once made it a line of its own (issue 24). The records are
joined before any line is judged; every route reads the same."""

from __future__ import annotations

import json

import pytest

from dflash_doctor.parse import logscan
from dflash_doctor.parse.logscan import Lines, ScanPlan
from tests.hardening import tally

HDR = "(APIServer pid=7) INFO 05-14 09:13:{s:02d} [metrics.py:101] "
METRICS = (
    "SpecDecoding metrics: Mean acceptance length: {mean}, Accepted throughput: 18.00 tokens/s, Drafted "
    "throughput: 1500.00 tokens/s, Accepted: {acc} tokens, Drafted: 15000 tokens, Per-position acceptance "
    "rate: {pp}, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, "
    "Avg Draft acceptance rate: {avg}%"
)
REAL = METRICS.format(mean="1.18", acc=180, pp="0.150, 0.030", avg="1.2")
FORGED = METRICS.format(mean="15.85", acc=14000, pp="0.990, 0.990", avg="93.3")
REQUEST = "(APIServer pid=7) INFO 05-14 09:13:30 [logger.py:41] Received request chatcmpl-1: prompt: '"
SPLIT = 16384
PLANS = {"plain": ScanPlan(fast=False), "streamed": ScanPlan(), "large-file route": ScanPlan(grep_from=0, workers=2)}


def _ts(i: int) -> str:
    return f"2026-05-14T09:13:{i % 60:02d}.{i:09d}Z"


def _cri(lines: list[str], split_at: int | None = None) -> list[str]:
    """CRI records of `lines`; the request line (the one holding `prompt: '`) split every SPLIT bytes, its
    second record starting with the forged metrics text (its prompt's padding sized for that)."""
    out = []
    for i, ln in enumerate(lines):
        if REQUEST not in ln:
            out.append(f"{_ts(i)} stdout F {ln}")
            continue
        parts = [ln[j : j + SPLIT] for j in range(0, len(ln), SPLIT)]
        out += [f"{_ts(i)} stdout {'F' if k == len(parts) - 1 else 'P'} {p}" for k, p in enumerate(parts)]
    return out


def _docker(lines: list[str]) -> list[str]:
    out = []
    for i, ln in enumerate(lines):
        parts = [ln[j : j + SPLIT] for j in range(0, len(ln), SPLIT)] if REQUEST in ln else [ln]
        for k, p in enumerate(parts):
            end = "\n" if k == len(parts) - 1 else ""
            out.append(json.dumps({"log": p + end, "stream": "stdout", "time": _ts(i)}))
    return out


def _served(splits: int = 1) -> list[str]:
    """20 real metrics lines and a request whose prompt puts the forged line at the start of a record."""
    pad = "x" * (SPLIT * splits - len(REQUEST))
    request = REQUEST + pad + FORGED + "', params: SamplingParams(n=1)"
    return [HDR.format(s=i) + REAL for i in range(10)] + [request] + [HDR.format(s=20 + i) + REAL for i in range(10)]


CAPTURES = {
    "CRI, split once": lambda: _cri(_served(1)),
    "CRI, split three times": lambda: _cri(_served(3)),
    "Docker json-file": lambda: _docker(_served(1)),
}


@pytest.mark.parametrize("plan", sorted(PLANS))
@pytest.mark.parametrize("capture", sorted(CAPTURES))
def test_a_metrics_line_at_a_runtime_split_is_not_a_line_of_its_own(tmp_path, capture, plan):
    tally.hostile_input(f"container line split: {capture}")
    p = tmp_path / "container.log"
    p.write_text("\n".join(CAPTURES[capture]()) + "\n")
    scan = logscan.scan(str(p), PLANS[plan])
    s = logscan.aggregate(scan)
    assert s.intervals == 20 and s.mean_acceptance_length == pytest.approx(1.18), scan.notes
    assert scan.foreign_count == 1
    assert any("joined" in n for n in scan.notes)


@pytest.mark.parametrize("capture", sorted(CAPTURES))
def test_lines_from_elsewhere_are_joined_too(capture):
    """A host's filtered log or a pasted capture, handed over as lines."""
    scan = logscan.scan(Lines(CAPTURES[capture](), "host:/var/log/pods/x.log"))
    s = logscan.aggregate(scan)
    assert s.intervals == 20 and s.mean_acceptance_length == pytest.approx(1.18)


def test_a_line_split_into_records_is_read_whole():
    """The other side of joining: the engine's own long line, split by the runtime, is read as one line (an
    SGLang request record of 40 KiB, its counts in its last record)."""
    line = (
        "[2026-03-02 08:01:00] Finish: obj=GenerateReqInput(rid='req-0', text='"
        + "y" * 40000
        + "'), out={'meta_info': "
        "{'id': 'req-0', 'completion_tokens': 300, 'spec_verify_ct': 100, 'spec_accept_length': 3.0}}"
    )
    parts = [line[j : j + SPLIT] for j in range(0, len(line), SPLIT)]
    records = [f"{_ts(k)} stdout {'F' if k == len(parts) - 1 else 'P'} {p}" for k, p in enumerate(parts)]
    records.insert(1, f"{_ts(99)} stderr F an unrelated stderr line")
    scan = logscan.scan(Lines(records, "pod.log"))
    assert scan.formats.get("sglang-request") == 1, (scan.formats, scan.malformed)
