"""Fake inference engines for the Prometheus tests: small HTTP servers whose spec-decode counters grow
with wall time, exposed in the engines' own exposition (through prometheus_client, as vLLM and SGLang
do), under the metric names of their releases (dflash_doctor/prometheus/metrics.py cites the source).

    eng = FakeEngine(VLLM, rates=(0.85, 0.7, …), drafts_per_s=50).start()   # eng.port, eng.url
    ...
    eng.stop()

A `restart_at` (seconds after `t0`) resets every counter to zero, as a restarted process does, and
may switch to other per-position rates (a deploy that changed acceptance). Counting starts at `t0` (by default
when the engine is made; `math.inf` holds the counters at zero until `t0` is set).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VLLM = "vllm"
SGLANG = "sglang"


@dataclass
class FakeEngine:
    engine: str  # VLLM (V1, 0.9+) or SGLANG (0.5.13+)
    rates: tuple[float, ...]  # unconditional per-position acceptance rates (non-increasing)
    drafts_per_s: float = 50.0
    model: str = "Qwen/Qwen3-8B"
    restart_at: float | None = None
    rates_after: tuple[float, ...] | None = None
    requests_per_s: float = 0.5
    t0: float = field(default_factory=time.time)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def tau(self) -> float:
        return 1.0 + sum(self.rates)

    def _state(self, now: float) -> tuple[float, tuple[float, ...]]:
        """Seconds of counting since the (last) start, and the rates in force. Before `t0` the counters
        stay at zero (a stack sets `t0` once Prometheus scrapes every engine)."""
        elapsed = max(0.0, now - self.t0)
        if self.restart_at is not None and elapsed >= self.restart_at:
            return elapsed - self.restart_at, self.rates_after or self.rates
        return elapsed, self.rates

    def exposition(self, now: float | None = None) -> bytes:
        from prometheus_client import CollectorRegistry, generate_latest
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        secs, rates = self._state(time.time() if now is None else now)
        drafts = int(self.drafts_per_s * secs)
        per_pos = [int(r * drafts) for r in rates]
        accepted = sum(per_pos)
        k = len(rates)
        requests = int(self.requests_per_s * secs)
        engine = self

        class Collector:
            def collect(self):
                if engine.engine == VLLM:
                    labels = ["model_name", "engine"]
                    values = [engine.model, "0"]
                    for name, doc, v in (
                        ("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", drafts),
                        ("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", drafts * k),
                        ("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", accepted),
                        ("vllm:generation_tokens", "Number of generation tokens processed.", drafts + accepted),
                    ):
                        c = CounterMetricFamily(name, doc, labels=labels)
                        c.add_metric(values, v)
                        yield c
                    c = CounterMetricFamily(
                        "vllm:spec_decode_num_accepted_tokens_per_pos",
                        "Accepted tokens per draft position.",
                        labels=labels + ["position"],
                    )
                    for i, v in enumerate(per_pos):
                        c.add_metric(values + [str(i)], v)
                    yield c
                    g = GaugeMetricFamily(
                        "vllm:num_requests_running", "Number of requests in model execution batches.", labels=labels
                    )
                    g.add_metric(values, 4)
                    yield g
                else:
                    labels = ["model_name", "engine_type"]
                    values = [engine.model, "unified"]
                    # one verify call per draft; the first token of each request comes from prefill
                    for name, doc, v in (
                        ("sglang:spec_verify_calls", "Number of speculative decoding verification calls.", drafts),
                        (
                            "sglang:generation_tokens",
                            "Number of generation tokens processed.",
                            drafts + accepted + requests,
                        ),
                        ("sglang:num_requests", "Number of requests processed.", requests),
                    ):
                        c = CounterMetricFamily(name, doc, labels=labels)
                        c.add_metric(values, v)
                        yield c
                    for name, doc, v in (
                        (
                            "sglang:spec_accept_length",
                            "Mean acceptance length of speculative decoding.",
                            1.0 + sum(rates),
                        ),
                        ("sglang:spec_num_draft_tokens", "Currently active speculative_num_draft_tokens.", k + 1),
                        ("sglang:num_running_reqs", "The number of running requests.", 4),
                    ):
                        g = GaugeMetricFamily(name, doc, labels=labels)
                        g.add_metric(values, v)
                        yield g

        reg = CollectorRegistry()
        reg.register(Collector())
        return generate_latest(reg)

    def start(self) -> FakeEngine:
        engine = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404)
                    return
                body = engine.exposition()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=f"fake-{self.engine}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
