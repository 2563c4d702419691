"""The Prometheus test stack: fake engines (tests/prometheus/fakeengine.py) scraped every second by a
real Prometheus (tests/prometheus/promserver.py) that also evaluates the rules `monitor rules` writes.

One stack per module; everything is stopped by its PID / server handle at the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from tests.prometheus.fakeengine import SGLANG, VLLM, FakeEngine

# Per-position rates (unconditional) of the fake engines.
GOOD = (0.85, 0.72, 0.60, 0.50, 0.41, 0.33, 0.27)  # τ 4.68: a healthy DFlash-like curve, k = 7
CLIFF = (0.15, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0)  # τ 1.16: first token only, the broken engine
WORSE = (0.70, 0.45, 0.30, 0.20, 0.12, 0.08, 0.05)  # τ 2.90: the restarted engine after a bad deploy
SGL = (0.80, 0.60, 0.45)  # τ 2.85, k = 3 (SGLang speculative_num_draft_tokens 4)
RESTART_AT = 12.0  # seconds after the start
READY_AT = 26.0  # history the tests read: --since 24s --step 2s


@dataclass
class Stack:
    prom: object
    healthy: list
    broken: FakeEngine
    restarting: FakeEngine
    sglang: FakeEngine
    rules: str
    t0: float

    @property
    def url(self) -> str:
        return self.prom.url

    @property
    def engines(self) -> list:
        return [*self.healthy, self.broken, self.restarting, self.sglang]


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    from tests.conftest import run_cli
    from tests.prometheus.promserver import prometheus_available, start_prometheus

    reason = prometheus_available()
    if reason:
        pytest.skip(f"needs a real Prometheus: {reason}")
    tmp = tmp_path_factory.mktemp("prom")
    t0 = time.time()
    engines = [
        FakeEngine(VLLM, GOOD, drafts_per_s=50, t0=t0),
        FakeEngine(VLLM, GOOD, drafts_per_s=40, t0=t0),
        FakeEngine(VLLM, CLIFF, drafts_per_s=50, t0=t0),
        FakeEngine(VLLM, GOOD, drafts_per_s=50, restart_at=RESTART_AT, rates_after=WORSE, t0=t0),
        FakeEngine(SGLANG, SGL, drafts_per_s=50, model="meta-llama/Llama-3.1-8B-Instruct", t0=t0),
    ]
    prom = None
    try:
        for e in engines:
            e.start()
        rules = tmp / "rules.yml"
        # short windows so that the test Prometheus holds enough history within seconds
        proc = run_cli("monitor", "rules", "--window", "10s", "--for", "1m", "--min-drafts", "50", "-o", str(rules))
        assert proc.returncode == 0, proc.stderr
        prom = start_prometheus(tmp, [e.target for e in engines], [str(rules)])
        stack = Stack(prom, engines[:2], engines[2], engines[3], engines[4], str(rules), t0)
        time.sleep(max(0.0, READY_AT - (time.time() - t0)))
        yield stack
    finally:
        if prom is not None:
            prom.stop()
        for e in engines:
            e.stop()
