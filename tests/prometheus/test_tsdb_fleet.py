"""`fleet` over a history written into the TSDB with promtool (the benchmark's path, smaller): the
broken engines are the outliers, restarts are seen, and the query count does not grow with engines."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.prometheus]


def test_fleet_over_promtool_blocks(tmp_path):
    from tests.prometheus.promserver import PROMTOOL_BIN, prometheus_available, start_prometheus
    from tests.prometheus.tsdbgen import create_blocks, plan, write_openmetrics

    reason = prometheus_available()
    if reason:
        pytest.skip(f"needs a real Prometheus: {reason}")
    end = int(time.time()) // 60 * 60
    from tests.prometheus.tsdbgen import GOOD, GenEngine

    engines = plan(60, broken_every=20, restart_every=30)
    stalled = GenEngine("10.9.9.9:8000", "Qwen/Qwen3-8B", GOOD, 30.0, restart=False, stalled=True)
    engines.append(stalled)
    write_openmetrics(tmp_path / "h.om", engines, end - 2 * 3600 - 600, end, 60)
    create_blocks(PROMTOOL_BIN, tmp_path / "h.om", tmp_path / "data")
    prom = start_prometheus(tmp_path, storage=tmp_path / "data")
    try:
        proc = run_cli(
            "fleet", "--prometheus", prom.url, "--since", "2h", "--step", "5m", "--until", str(end), "--format", "json"
        )
    finally:
        prom.stop()
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert len(doc["engines"]) == 61 and doc["queries"] <= 10
    stopped = next(e for e in doc["engines"] if e["labels"]["instance"] == stalled.instance)
    assert stopped["verdict"] == "problem" and stopped["drafts"] == 0
    assert any("speculative decoding stopped" in r for r in stopped["reasons"])
    broken = {e.instance for e in engines if e.broken}
    assert len(broken) == 3
    assert {e["labels"]["instance"] for e in doc["engines"] if e["outlier"]} == broken
    assert {e["labels"]["instance"] for e in doc["engines"][:3]} == broken  # outliers first
    restarted = {e.instance for e in engines if e.restart}
    seen = {e["labels"]["instance"] for e in doc["engines"] if e["restarts"]}
    assert restarted == seen
    # a restart with the same acceptance after it is not a change point
    assert all(e["trend"]["change_point"] is None for e in doc["engines"] if e["labels"]["instance"] in restarted)
    assert all(
        e["verdict"] == "healthy" for e in doc["engines"] if e["labels"]["instance"] not in broken | {stalled.instance}
    )
