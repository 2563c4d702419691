"""The Prometheus test stack: fake engines (tests/prometheus/fakeengine.py) scraped every second by a
real Prometheus (tests/prometheus/promserver.py) that also evaluates the rules `monitor rules` writes.

One stack per module; everything is stopped by its PID / server handle at the end.
"""

from __future__ import annotations

import math
import time
import urllib.parse
from dataclasses import dataclass

import pytest

from tests.prometheus.fakeengine import SGLANG, VLLM, FakeEngine

# Per-position rates (unconditional) of the fake engines.
GOOD = (0.85, 0.72, 0.60, 0.50, 0.41, 0.33, 0.27)  # τ 4.68: a healthy DFlash-like curve, k = 7
CLIFF = (0.15, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0)  # τ 1.16: first token only, the broken engine
WORSE = (0.70, 0.45, 0.30, 0.20, 0.12, 0.08, 0.05)  # τ 2.90: the restarted engine after a bad deploy
SGL = (0.80, 0.60, 0.45)  # τ 2.85, k = 3 (SGLang speculative_num_draft_tokens 4)
RESTART_AT = 12.0  # seconds after the engines start counting
READY_AT = 26.0  # the end of the window the tests read (--since 24s --step 2s --until t0 + READY_AT)
HANG = 300.0  # bounds a wait on Prometheus (a hang), never a timing the tests rely on


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
    def window(self) -> tuple[str, ...]:
        """The one window every test reads: 24 s of history that Prometheus holds in full, whenever a test runs."""
        return ("--since", "24s", "--step", "2s", "--until", f"{self.t0 + READY_AT:.3f}")

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
    waiting = math.inf  # counters held at zero until Prometheus scrapes every engine
    engines = [
        FakeEngine(VLLM, GOOD, drafts_per_s=50, t0=waiting),
        FakeEngine(VLLM, GOOD, drafts_per_s=40, t0=waiting),
        FakeEngine(VLLM, CLIFF, drafts_per_s=50, t0=waiting),
        FakeEngine(VLLM, GOOD, drafts_per_s=50, restart_at=RESTART_AT, rates_after=WORSE, t0=waiting),
        FakeEngine(SGLANG, SGL, drafts_per_s=50, model="meta-llama/Llama-3.1-8B-Instruct", t0=waiting),
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
        targets = {e.target for e in engines}
        _wait_for(prom, "up == 1", lambda last: set(last) == targets)  # every engine scraped once
        t0 = time.time()
        for e in engines:
            e.t0 = t0
        # the window's end is behind the last scrape of every engine: the history it covers is complete
        _wait_for(prom, "timestamp(up)", lambda last: set(last) == targets and min(last.values()) >= t0 + READY_AT)
        yield Stack(prom, engines[:2], engines[2], engines[3], engines[4], str(rules), t0)
    finally:
        if prom is not None:
            prom.stop()
        for e in engines:
            e.stop()


def _wait_for(prom, query: str, done) -> None:
    """Poll an instant query until `done({instance: value})` holds (bounded by HANG)."""
    deadline = time.monotonic() + HANG
    last: dict = {}
    while time.monotonic() < deadline:
        res = prom.api("/api/v1/query?query=" + urllib.parse.quote(query))["data"]["result"]
        last = {r["metric"].get("instance"): float(r["value"][1]) for r in res}
        if done(last):
            return
        time.sleep(0.2)
    raise AssertionError(f"Prometheus: {query} gave {last} after {HANG:.0f} s")
