"""The spec-decode series each engine release exposes to Prometheus, read from the releases' own source.

Names are the *exposed* names: prometheus_client strips a `_total` from a Counter's name and adds it
back on exposition, so vLLM 0.8.5's `vllm:spec_decode_num_drafts_total` and 0.9+'s
`vllm:spec_decode_num_drafts` are the same series on the wire.

vLLM V1 (labels model_name, engine; the per-position counter adds position="0"…"k-1"):
  0.8.3–0.8.4  num_draft_tokens, num_accepted_tokens only           v1/metrics/loggers.py:323,328 (0.8.3)
  0.8.5        + num_drafts, num_accepted_tokens_per_pos             v1/spec_decode/metrics.py:125-144 (0.8.5)
  0.9–0.23     same four counters (names without _total in source)   v1/spec_decode/metrics.py:155-189 (0.20.1)
vLLM V0 (engine/metrics.py, label model_name; 0.6.6:239-257, 0.9.2:204-222; gone in 0.10):
  gauges spec_decode_draft_acceptance_rate, spec_decode_efficiency and counters
  num_accepted_tokens, num_draft_tokens, num_emitted_tokens. The V0 counters are incremented by the
  sampler's running totals at every local log interval (engine/metrics.py:686-694 with
  spec_decode/metrics.py:132-140 in 0.6.6), so they are sums of totals, not token counts: only the
  gauges (since-start ratios) mean something.
SGLang (labels model_name, engine_type, tp/pp/dp ranks…):
  all          gauge spec_accept_length (last decode-log interval, bonus included)
               metrics/collector.py:85 (0.4.6); observability/metrics_collector.py:512 (0.5.23)
  0.5.6+       gauge spec_accept_rate                                metrics/collector.py:314 (0.5.6)
  0.5.13+      counter spec_verify_calls_total (verify forwards of finished requests) and gauge
               spec_num_draft_tokens (k + 1)                         observability/metrics_collector.py:1439,433
               (0.5.13); 1866,542 (0.5.23). With generation_tokens_total and num_requests_total
               (finished requests, metrics_collector.py:1861,1941 in 0.5.23) they give τ from counts:
               (Δgeneration − Δrequests) / Δverify_calls — SGLang's own per-request accept length is
               completion_tokens / spec_verify_ct (managers/tokenizer_manager.py:3167 in 0.5.23),
               which counts the prefill token too.
Requests still flowing (for "drafts stopped"): vllm:generation_tokens_total (V1 loggers.py:663 in
0.20.1, 199 in 0.8.5), sglang:generation_tokens_total, and the running gauges vllm:num_requests_running,
sglang:num_running_reqs.
"""

from __future__ import annotations

from dataclasses import dataclass

VLLM_DRAFTS = "vllm:spec_decode_num_drafts_total"
VLLM_DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens_total"
VLLM_ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
VLLM_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
VLLM_V0_EMITTED = "vllm:spec_decode_num_emitted_tokens_total"
VLLM_V0_RATE = "vllm:spec_decode_draft_acceptance_rate"
VLLM_V0_EFFICIENCY = "vllm:spec_decode_efficiency"
VLLM_GENERATION = "vllm:generation_tokens_total"
VLLM_RUNNING = "vllm:num_requests_running"
# llama.cpp's llama-server (--metrics; tools/server/server-task.cpp in the 0.5.0-dev of llama-cpp-python 0.3.36):
# the same four counters with the same meanings under its own prefix (drafts = verification steps)
LCPP_DRAFTS = "llamacpp:spec_decode_num_drafts_total"
LCPP_DRAFT_TOKENS = "llamacpp:spec_decode_num_draft_tokens_total"
LCPP_ACCEPTED = "llamacpp:spec_decode_num_accepted_tokens_total"
LCPP_PER_POS = "llamacpp:spec_decode_num_accepted_tokens_per_pos_total"

SGL_ACCEPT_LENGTH = "sglang:spec_accept_length"
SGL_ACCEPT_RATE = "sglang:spec_accept_rate"
SGL_VERIFY_CALLS = "sglang:spec_verify_calls_total"
SGL_NUM_DRAFT_TOKENS = "sglang:spec_num_draft_tokens"
SGL_GENERATION = "sglang:generation_tokens_total"
SGL_REQUESTS = "sglang:num_requests_total"
SGL_RUNNING = "sglang:num_running_reqs"


@dataclass(frozen=True)
class Series:
    """One series read in the fleet query: its tag in the answer, the metric, and how it is read."""

    tag: str  # the value of the `dflash_q` label that marks it in the combined answer
    metric: str
    how: str  # "increase" (counter over the window) | "avg" (gauge averaged over the window) | "last" | "resets"
    per_position: bool = False
    # Range of each reading as a multiple of the window asked for. resets() compares samples inside
    # its range only: per step it needs the last sample of the step before (twice the step), or a
    # restart between two steps is seen by neither.
    window_factor: float = 1.0
    # the same counter under another engine's name (llama-server's llamacpp: series): read in the same query
    alt: str | None = None


# Counters read with increase() over the window (Prometheus handles resets), and gauges.
FLEET_SERIES: tuple[Series, ...] = (
    Series("drafts", VLLM_DRAFTS, "increase", alt=LCPP_DRAFTS),
    Series("draft_tokens", VLLM_DRAFT_TOKENS, "increase", alt=LCPP_DRAFT_TOKENS),
    Series("accepted", VLLM_ACCEPTED, "increase", alt=LCPP_ACCEPTED),
    Series("pos", VLLM_PER_POS, "increase", per_position=True, alt=LCPP_PER_POS),
    Series("lcpp", LCPP_DRAFTS, "last"),  # marks a llama-server's counters as its own
    Series("v0_emitted", VLLM_V0_EMITTED, "increase"),
    Series("v0_rate", VLLM_V0_RATE, "last"),
    Series("v0_efficiency", VLLM_V0_EFFICIENCY, "last"),
    Series("generation", VLLM_GENERATION, "increase"),
    Series("sgl_verify", SGL_VERIFY_CALLS, "increase"),
    Series("sgl_generation", SGL_GENERATION, "increase"),
    Series("sgl_requests", SGL_REQUESTS, "increase"),
    Series("sgl_len", SGL_ACCEPT_LENGTH, "avg"),
    Series("sgl_rate", SGL_ACCEPT_RATE, "avg"),
    Series("sgl_k1", SGL_NUM_DRAFT_TOKENS, "last"),
    Series("resets", VLLM_DRAFTS, "resets", alt=LCPP_DRAFTS),
    Series("sgl_resets", SGL_VERIFY_CALLS, "resets"),
)

# Per step of the range query: τ over time and restarts.
TREND_SERIES: tuple[Series, ...] = (
    Series("drafts", VLLM_DRAFTS, "increase", alt=LCPP_DRAFTS),
    Series("accepted", VLLM_ACCEPTED, "increase", alt=LCPP_ACCEPTED),
    Series("sgl_verify", SGL_VERIFY_CALLS, "increase"),
    Series("sgl_generation", SGL_GENERATION, "increase"),
    Series("sgl_requests", SGL_REQUESTS, "increase"),
    Series("sgl_len", SGL_ACCEPT_LENGTH, "avg"),
    Series("resets", VLLM_DRAFTS, "resets", window_factor=2.0, alt=LCPP_DRAFTS),
    Series("sgl_resets", SGL_VERIFY_CALLS, "resets", window_factor=2.0),
)
