"""A log mixing formats and engines: the drafts-weighted τ must equal the hand computation below."""

from __future__ import annotations

import json

import pytest

V1 = (
    "(APIServer pid=7) INFO 05-14 09:13:{s} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: {mean}, "
    "Accepted throughput: {athr} tokens/s, Drafted throughput: 400.00 tokens/s, Accepted: {acc} tokens, "
    "Drafted: 4000 tokens, Per-position acceptance rate: {pp}, Avg Draft acceptance rate: {rate}%"
)
V0 = (
    "INFO 07-24 04:00:{s} metrics.py:316] Speculative metrics: Draft acceptance rate: {rate}, System efficiency: "
    "{eff}, Number of speculative tokens: 3, Number of accepted tokens: {acc}, Number of draft tokens: {dft}, "
    "Number of emitted tokens: {emt}."
)
SGL = (
    "[2025-10-22 10:27:{s} TP0] Decode batch, #running-req: {run}, #token: 4000, token usage: 0.02, "
    "accept len: {ln}, accept rate: {rate}, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0"
)
BENCH = """---------------Speculative Decoding---------------
Acceptance rate (%):                     50.00
Acceptance length:                       2.50
Drafts:                                  1000
Draft tokens:                            3000
Accepted tokens:                         1500
Per-position acceptance (%):
  Position 0:                            70.00
  Position 1:                            50.00
  Position 2:                            30.00
==================================================
"""


def mixed_log() -> str:
    lines = [
        # vLLM 0.10.2+, k=4, 1000 drafts each: 500 and 700 accepted
        V1.format(s="10", mean="1.50", athr="50.00", acc=500, pp="0.300, 0.150, 0.050, 0.000", rate="12.5"),
        # vLLM V0, k=3, cumulative: 500 drafts / 1300 emitted, then +300 drafts / +800 emitted
        V0.format(s="11", rate="0.600", eff="0.650", acc=900, dft=1500, emt=1300),
        # SGLang: weight = running × 40 decode steps
        SGL.format(s="12", run=5, ln="2.50", rate="0.30"),
        V1.format(s="20", mean="1.70", athr="70.00", acc=700, pp="0.400, 0.200, 0.100, 0.000", rate="17.5"),
        V0.format(s="21", rate="0.625", eff="0.656", acc=1500, dft=2400, emt=2100),
        SGL.format(s="22", run=10, ln="1.80", rate="0.20"),
    ]
    return "\n".join(lines) + "\n" + BENCH


def test_mixed_log_tau_is_the_drafts_weighted_hand_computation(cli, tmp_path):
    p = tmp_path / "mixed.log"
    p.write_text(mixed_log())
    # hand computation: τ = 1 + Σ prefix-accepted / Σ drafts over every interval
    drafts = (1000 + 1000) + (500 + 300) + (5 * 40 + 10 * 40) + 1000
    accepted = (500 + 700) + ((1300 - 500) + (800 - 300)) + (1.5 * 200 + 0.8 * 400) + 1500
    tau = 1 + accepted / drafts
    assert tau == pytest.approx(2.05)
    r = cli("logs", str(p), "--format", "json")
    assert "Traceback" not in r.stderr
    acc = json.loads(r.stdout)["acceptance"]
    assert acc["mean_acceptance_length"] == pytest.approx(tau, abs=1e-4)
    assert acc["drafts"] == pytest.approx(drafts)
    assert acc["intervals"] == 7
    assert set(acc["formats"]) == {"vllm-v1-0.10.2", "vllm-v0", "sglang", "vllm-bench-serve"}
    assert any("mixes engines" in n for n in acc["notes"])
    # per-position: the V1 lines (k=4) and the bench block (k=3) summed by counts
    pos1 = (0.3 * 1000 + 0.4 * 1000 + 0.7 * 1000) / 3000
    assert acc["per_position"][0] == pytest.approx(pos1, abs=1e-4)
    # never the average of the printed means
    naive = (1.5 + 1.7 + 2.6 + 2.667 + 2.5 + 1.8 + 2.5) / 7
    assert abs(acc["mean_acceptance_length"] - naive) > 0.05
