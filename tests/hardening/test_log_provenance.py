"""A metrics line counts only when its whole record is the engine's own (issue 24, "the gate passes on forged
data"): the engine's logger header preceded by nothing but the capture's framing, a JSON record's own message
(no other field stands in for it), a record of the service, pod, unit or logger the engine's startup lines
came from, and a TensorRT-LLM record in IterationStats' form. Every route reads the same (the plain one, the
streamed bulk one, the grep route in byte ranges)."""

from __future__ import annotations

import json

import pytest

from dflash_doctor.parse import logscan
from dflash_doctor.parse.logscan import ScanPlan
from tests.hardening import tally

HDR = "(APIServer pid=7) INFO 05-14 09:13:{s:02d} [metrics.py:101] "
METRICS = (
    "SpecDecoding metrics: Mean acceptance length: {mean}, Accepted throughput: 18.00 tokens/s, Drafted "
    "throughput: 1500.00 tokens/s, Accepted: {acc} tokens, Drafted: 15000 tokens, Per-position acceptance "
    "rate: {pp}, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, "
    "Avg Draft acceptance rate: {avg}%"
)
REAL_MSG = METRICS.format(mean="1.18", acc=180, pp="0.150, 0.030", avg="1.2")
FORGED_MSG = METRICS.format(mean="15.85", acc=14000, pp="0.990, 0.990", avg="93.3")
STARTUP = [
    "(APIServer pid=7) INFO 05-14 09:11:52 [api_server.py:1885] vLLM API server version 0.20.1",
    "(APIServer pid=7) INFO 05-14 09:11:52 [utils.py:189] non-default args: {'model': 'Qwen/Qwen3-8B', "
    "'speculative_config': {'method': 'dflash', 'model': 'z-lab/Qwen3-8B-DFlash-b16', 'num_speculative_tokens': 15}}",
]
SGLANG_FORGED = (
    "[2025-10-22 10:00:00 TP0] Decode batch, #running-req: 400, #token: 3600, token usage: 0.02, accept len: 9.50, "
    "accept rate: 0.90, cuda graph: True, gen throughput (token/s): 166.00, #queue-req: 0"
)
PLANS = {
    "plain": ScanPlan(fast=False),
    "streamed": ScanPlan(),
    "grep, two ranges": ScanPlan(grep_from=0, parallel_from=0, workers=2),
}


def real(n: int, frame: str = "") -> list[str]:
    return [frame + HDR.format(s=i % 60) + REAL_MSG for i in range(n)]


def _read(tmp_path, lines: list[str], plan: ScanPlan):
    p = tmp_path / "captured.log"
    p.write_text("\n".join(lines) + "\n")
    scan = logscan.scan(str(p), plan)
    return scan, logscan.aggregate(scan)


CASES = {
    # vLLM's request logger quoting an SGLang line whose own header sits right before its literal
    "an SGLang Decode batch line quoted in a vLLM prompt": lambda: (
        STARTUP
        + real(10)
        + [
            "(APIServer pid=7) INFO 05-14 09:13:30 [logger.py:41] Received request chatcmpl-1: prompt: "
            f"'summarise: {SGLANG_FORGED}', params: SamplingParams(n=1)"
        ]
        + real(10)
    ),
    # the record's message is not a string: another field (the user's) must not stand in for it
    "a JSON record whose message is not a string": lambda: (
        STARTUP
        + real(10)
        + [
            json.dumps(
                {"timestamp": "2026-05-14T09:13:31", "message": {"event": "request"}, "msg": FORGED_MSG}
                | {"level": "INFO"}
            )
        ]
        + real(10)
    ),
    # docker compose: the gateway service echoes a user's text, whole engine line included
    "another compose service echoing user input": lambda: (
        [f"vllm-1     | {s}" for s in STARTUP]
        + real(10, "vllm-1     | ")
        + [f"gateway-1  | {HDR.format(s=40)}{FORGED_MSG}"]
        + real(10, "vllm-1     | ")
    ),
    "another pod in a kubectl capture": lambda: (
        [f"[pod/vllm-0/vllm] {s}" for s in STARTUP]
        + real(10, "[pod/vllm-0/vllm] ")
        + [f"[pod/gateway-7f9c/proxy] {HDR.format(s=40)}{FORGED_MSG}"]
        + real(10, "[pod/vllm-0/vllm] ")
    ),
    "another unit in a journald capture": lambda: (
        [f"May 14 09:11:52 gpu-7 vllm[2011]: {s}" for s in STARTUP]
        + real(10, "May 14 09:13:00 gpu-7 vllm[2011]: ")
        + [f"May 14 09:13:40 gpu-7 gateway[77]: {HDR.format(s=40)}{FORGED_MSG}"]
        + real(10, "May 14 09:13:50 gpu-7 vllm[2011]: ")
    ),
    # python logging's `asctime - name - level - message`: the engine's package logs it, not the app
    "an application logger in a python-logging capture": lambda: (
        real(10, "2026-05-14 09:13:00,120 - vllm.v1.metrics - INFO - ")
        + [f"2026-05-14 09:13:40,000 - chat_app.handlers - INFO - {HDR.format(s=40)}{FORGED_MSG}"]
        + real(10, "2026-05-14 09:13:50,120 - vllm.v1.metrics - INFO - ")
    ),
}


@pytest.mark.parametrize("plan", sorted(PLANS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_record_that_is_not_the_engine_s_own_is_not_read(tmp_path, case, plan):
    tally.hostile_input(f"provenance: {case}")
    scan, s = _read(tmp_path, CASES[case](), PLANS[plan])
    assert s.intervals == 20 and s.mean_acceptance_length == pytest.approx(1.18), scan.notes
    assert scan.foreign_count >= 1


def test_a_gateway_body_with_a_top_level_specdecodingstats_key_is_not_tensorrt_llm(tmp_path):
    """A request body logged whole by a gateway, shaped to carry TensorRT-LLM's iteration counts: not an
    IterationStats record (no `iter`, other fields), so not read; the engine's own records still are."""
    tally.hostile_input("provenance: gateway body as TensorRT-LLM stats")
    it = {"iter": 1, "iterLatencyMS": 14.7, "numActiveRequests": 4, "numQueuedRequests": 0}
    spec = {"numDraftTokens": 16, "numAcceptedTokens": 4, "numRequestsWithDraftTokens": 4, "acceptanceLength": 2.0}
    lines = [json.dumps(dict(it, iter=i, specDecodingStats=spec)) for i in range(20)]
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "specDecodingStats": {"numDraftTokens": 16, "numAcceptedTokens": 16, "numRequestsWithDraftTokens": 1},
    }
    lines.insert(10, json.dumps(body))
    for plan in PLANS.values():
        scan, s = _read(tmp_path, lines, plan)
        assert s.intervals == 20 and s.mean_acceptance_length == pytest.approx(2.0), scan.notes
        assert scan.foreign_count == 1


def test_the_gate_fails_on_a_capture_whose_only_passing_figure_is_another_service_s(cli, tmp_path):
    """The issue's end to end: τ ≈ 12 from an echoed line once passed `gate --min-acceptance-length 5` on a
    deployment at 1.18."""
    tally.hostile_input("provenance: gate")
    lines = [f"vllm-1     | {s}" for s in STARTUP] + real(40, "vllm-1     | ")
    lines += [f"gateway-1  | {HDR.format(s=50)}{FORGED_MSG.replace('15000', '1500000').replace('14000', '1400000')}"]
    p = tmp_path / "compose.log"
    p.write_text("\n".join(lines) + "\n")
    r = cli("gate", "--log", str(p), "--min-acceptance-length", "5", "--format", "json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["outcome"] == "fail", r.stderr
    assert out["measured"]["mean_acceptance_length"] == pytest.approx(1.18)


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_the_engine_s_own_records_still_read_in_every_capture(tmp_path, plan):
    """The rule takes nothing from the engine: its lines behind each framing (and in a capture of several
    engines, each engine's) are read."""
    lines = (
        [f"vllm-a-1  | {s}" for s in STARTUP]
        + [f"vllm-b-1  | {s.replace('pid=7', 'pid=9')}" for s in STARTUP]
        + real(5, "vllm-a-1  | ")
        + [f"vllm-b-1  | {x.replace('pid=7', 'pid=9')}" for x in real(5)]
    )
    scan, s = _read(tmp_path, lines, PLANS[plan])
    assert s.intervals == 10 and scan.foreign_count == 0
    assert len(s.per_engine) == 2
