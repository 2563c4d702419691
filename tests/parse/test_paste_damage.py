"""Paste damage a user's log picks up on its way into a thread or a terminal (issue 29: "blank lines and other paste
damage inside a block are tolerated"): each variant of the same three vLLM V1 intervals must read to the same
drafts-weighted τ, on the plain and the fast route. Lines written here from vLLM's metrics.py format string."""

from __future__ import annotations

import json

import pytest

from dflash_doctor.parse import logscan
from dflash_doctor.parse.logscan import ScanPlan, aggregate

DATA = [(200, [120, 70, 40]), (180, [100, 60, 30]), (220, [130, 80, 45])]  # (drafts, accepted per position), k = 3
TAU = 1 + sum(sum(a) for _, a in DATA) / sum(d for d, _ in DATA)


def _lines() -> list[str]:
    out = []
    for i, (d, acc) in enumerate(DATA):
        a = sum(acc)
        out.append(
            f"(APIServer pid=7) INFO 05-14 09:10:{i * 10:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance "
            f"length: {1 + a / d:.2f}, Accepted throughput: 10.00 tokens/s, Drafted throughput: 120.00 tokens/s, "
            f"Accepted: {a} tokens, Drafted: {d * 3} tokens, Per-position acceptance rate: "
            f"{', '.join(f'{x / d:.3f}' for x in acc)}, Avg Draft acceptance rate: {a / (d * 3) * 100:.1f}%"
        )
    return out


L = _lines()
VARIANTS = {
    "markdown quote": ["> " + x for x in L],
    "code fence, indented": ["```", *("    " + x for x in L), "```"],
    "docker json-file": [
        json.dumps({"log": x + "\n", "stream": "stdout", "time": "2026-05-14T09:10:00.1Z"}) for x in L
    ],
    "kubectl --prefix": ["[pod/vllm-0/vllm] " + x for x in L],
    "CRLF": [x + "\r" for x in L],
    "line numbers with a bar": [f"{i + 120} | {x}" for i, x in enumerate(L)],
    "line numbers with a colon": [f"{i + 120}: {x}" for i, x in enumerate(L)],
    "ISO timestamp": ["2026-05-14T09:10:00.123456789Z " + x for x in L],
    "list bullets": ["- " + x for x in L],
    "inline code": ["`" + x + "`" for x in L],
    "inline code in a quoted list": ["> - `" + x + "`" for x in L],
    "tab indent": ["\t" + x for x in L],
    "Loki/Grafana export": [f'2026-05-14 09:10:00.000\t{{container="vllm", pod="vllm-0"}}\t{x}' for x in L],
    "ANSI colours": ["\x1b[32m" + x.replace("INFO", "\x1b[1;36mINFO\x1b[0;0m") + "\x1b[0m" for x in L],
    "blank lines between": [y for x in L for y in (x, "")],
    "line breaks lost": ["".join(L)],
    "line breaks lost, spaces kept": [" ".join(L)],
}


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_each_paste_reads_to_the_same_tau(tmp_path, name, fast):
    p = tmp_path / "pasted.log"
    p.write_text("\n".join(VARIANTS[name]) + "\n", encoding="utf-8")
    s = aggregate(logscan.scan(str(p), ScanPlan(fast=fast)))
    assert s is not None, name
    assert (round(s.mean_acceptance_length, 4), s.drafts, s.k) == (round(TAU, 4), 600, 3), name


def test_joined_records_are_said_and_a_literal_inside_words_is_not_a_record(tmp_path):
    p = tmp_path / "joined.log"
    p.write_text(" ".join(L) + "\n", encoding="utf-8")
    scan = logscan.scan(str(p))
    assert any("3 `SpecDecoding metrics` records on one line" in n for n in scan.notes)
    # a request that quotes the literal after the first record is other words, not a second record
    q = tmp_path / "quoted.log"
    q.write_text(L[0] + " user said: SpecDecoding metrics: Mean acceptance length: 9.00, Accepted: 9 tokens\n")
    s = aggregate(logscan.scan(str(q)))
    assert s is not None and s.drafts == 200 and round(s.mean_acceptance_length, 2) == 2.15


@pytest.mark.parametrize("prefix", ["Received request 12: ", '{"prompt": "x"} ', "echo "])
def test_a_literal_after_other_words_is_still_not_read(tmp_path, prefix):
    p = tmp_path / "other.log"
    p.write_text(prefix + L[0] + "\n", encoding="utf-8")
    assert aggregate(logscan.scan(str(p))) is None


@pytest.mark.parametrize(
    "text, tau",
    [
        ('{"internal_states": [{"last_gen_throughput": 120.5, "avg_spec_accept_length": 2.84}]}', 2.84),
        ("avg_spec_accept_length=3.0125", 3.0125),
        ("[2026-01-02 10:00:00 TP0] accuracy=0.91, avg_spec_accept_length=2.5", 2.5),
        ("user prompt: what is avg_spec_accept_length=9.0 in sglang", None),
        ('{"prompt": "say avg_spec_accept_length=9.0"}', None),
    ],
)
def test_sglang_server_info_figure_is_read_only_where_sglang_prints_it(tmp_path, text, tau):
    """SGLang's `avg_spec_accept_length` (get_server_info, or the name=value print of its tests): a printed τ of
    unknown weight; the same words inside a prompt are not a figure."""
    p = tmp_path / "info.txt"
    p.write_text(text + "\n", encoding="utf-8")
    s = aggregate(logscan.scan(str(p)))
    assert (round(s.mean_acceptance_length, 4) if s else None) == tau


SGL = (
    "[2026-01-22 10:{m}:07 DP0 TP0] Decode batch, #running-req: 4, #token: 1108, token usage: 0.01, accept len: {ln}, "
    "accept rate: 0.79, cuda graph: True, gen throughput (token/s): 90.39, #queue-req: 0"
)


@pytest.mark.parametrize("sep", [" ", ""])
def test_sglang_decode_records_joined_onto_one_line_are_each_read(tmp_path, sep):
    """SGLang's scheduler line (scheduler_metrics_mixin.py `log_decode_stats`), two records on one pasted line:
    both count, weighted by #running-req × decode_log_interval as on two lines."""
    lines = [SGL.format(m="27", ln="3.17"), SGL.format(m="28", ln="3.37")]
    apart, joined = tmp_path / "apart.log", tmp_path / "joined.log"
    apart.write_text("\n".join(lines) + "\n", encoding="utf-8")
    joined.write_text(sep.join(lines) + "\n", encoding="utf-8")
    a, j = aggregate(logscan.scan(str(apart))), aggregate(logscan.scan(str(joined)))
    assert a is not None and j is not None
    assert (
        (round(j.mean_acceptance_length, 4), j.drafts) == (round(a.mean_acceptance_length, 4), a.drafts) == (3.27, 320)
    )


def _run(pid: int, minute: int, drafts: int, acc: list[int]) -> list[str]:
    k, a = len(acc), sum(acc)
    return [
        f"(APIServer pid={pid}) INFO 05-14 10:{minute + i:02d}:00 [metrics.py:101] SpecDecoding metrics: Mean "
        f"acceptance length: {1 + a / drafts:.2f}, Accepted throughput: 10.00 tokens/s, Drafted throughput: 120.00 "
        f"tokens/s, Accepted: {a} tokens, Drafted: {drafts * k} tokens, Per-position acceptance rate: "
        f"{', '.join(f'{x / drafts:.3f}' for x in acc)}, Avg Draft acceptance rate: {a / (drafts * k) * 100:.1f}%"
        for i in range(3)
    ]


@pytest.mark.parametrize("fast", [False, True])
def test_a_restart_judges_the_last_run_and_says_the_others(tmp_path, fast):
    """Two runs one after another (another pid, another k): pooled they made one τ neither run had; the last run is
    judged and each run's τ said. Interleaved processes (two API servers) and DP ranks stay pooled."""
    p = tmp_path / "restart.log"
    first = _run(100, 0, 100, [90, 80, 70, 60])
    second = _run(205, 10, 200, [40, 10])
    p.write_text(
        "\n".join(
            first
            + ["(APIServer pid=205) INFO 05-14 10:09:00 [api_server.py:1] vLLM API server version 0.11.0"]
            + second
        )
        + "\n"
    )
    scan = logscan.scan(str(p), ScanPlan(fast=fast))
    from dflash_doctor.collect.inputs import _last_run

    _last_run(scan)
    s = aggregate(scan)
    assert s is not None and (s.k, s.drafts) == (2, 600) and round(s.mean_acceptance_length, 4) == 1.25
    note = next(n for n in scan.notes if "runs one after another" in n)
    assert "pid 100: 3 interval(s), τ 4.00" in note and "pid 205" in note
    mixed = tmp_path / "mixed.log"
    mixed.write_text(
        "\n".join(x for pair in zip(first, _run(205, 0, 100, [90, 80, 70, 60]), strict=True) for x in pair) + "\n"
    )
    scan = logscan.scan(str(mixed), ScanPlan(fast=fast))
    _last_run(scan)
    assert aggregate(scan).drafts == 600 and not any("runs one after another" in n for n in scan.notes)


@pytest.mark.parametrize(
    "plan",
    [ScanPlan(fast=False), ScanPlan(), ScanPlan(grep_from=0, parallel_from=0, workers=2)],
    ids=["plain", "stream", "grep"],
)
def test_drafts_shorter_than_k_follow_the_printed_mean_on_every_route(tmp_path, plan):
    """An n-gram proposer (or dynamic k) drafts fewer than k tokens at times: Drafted/k is then too few drafts even
    when it divides. vLLM's mean and rates are per draft (1 + Accepted/drafts, accepted at i / drafts), so a mean
    the counts do not fit says the drafts: Accepted/Σrates. (Read as Drafted/k: τ 3.00 over 800 for a true 2.60
    over 1000.)"""
    lines = []
    for i in range(40):
        d, acc = 1000, [700, 500, 250, 150]  # 1000 drafts, 3200 tokens drafted (not 4 each)
        a = sum(acc)
        lines.append(
            f"(APIServer pid=7) INFO 05-14 10:{i // 6:02d}:{(i % 6) * 10:02d} [metrics.py:101] SpecDecoding metrics: "
            f"Mean acceptance length: {1 + a / d:.2f}, Accepted throughput: 10.00 tokens/s, Drafted throughput: "
            f"120.00 tokens/s, Accepted: {a} tokens, Drafted: 3200 tokens, Per-position acceptance rate: "
            f"{', '.join(f'{x / d:.3f}' for x in acc)}, Avg Draft acceptance rate: {a / 3200 * 100:.1f}%"
        )
    p = tmp_path / "ngram.log"
    p.write_text("\n".join(lines) + "\n")
    s = aggregate(logscan.scan(str(p), plan))
    assert s is not None and round(s.drafts) == 40_000 and round(s.mean_acceptance_length, 3) == 2.6
