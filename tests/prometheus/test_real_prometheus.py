"""`fleet`, `diagnose --prometheus` and `monitor rules` against a real Prometheus scraping fake engines
(one healthy pair, one broken, one restarted into a worse deploy, one SGLang)."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.conftest import run_cli
from tests.prometheus.conftest import GOOD, HANG, SGL, WORSE
from tests.prometheus.promserver import PROMTOOL_BIN

pytestmark = [pytest.mark.slow, pytest.mark.prometheus]


def _fleet(stack, *args):
    return run_cli("fleet", "--prometheus", stack.url, *stack.window, *args)


@pytest.fixture(scope="module")
def fleet_json(stack):
    proc = _fleet(stack, "--format", "json")
    assert proc.returncode == 1, proc.stderr  # the broken engine is a problem
    return json.loads(proc.stdout)


def _engine(doc, eng):
    return next(e for e in doc["engines"] if e["labels"]["instance"] == eng.target)


def test_fleet_lists_every_engine_with_its_labels(stack, fleet_json):
    assert {e["labels"]["instance"] for e in fleet_json["engines"]} == {e.target for e in stack.engines}
    for e in fleet_json["engines"]:
        assert set(e["labels"]) == {"instance", "model_name"}
    assert fleet_json["queries"] <= 10


def test_fleet_reads_tau_and_curve_from_counters(stack, fleet_json):
    for eng in stack.healthy:
        e = _engine(fleet_json, eng)
        assert e["mean_acceptance_length"] == pytest.approx(1 + sum(GOOD), abs=0.03)
        assert e["per_position"] == pytest.approx(GOOD, abs=0.01)
        assert e["k"] == 7 and e["verdict"] == "healthy" and e["outlier"] is None


def test_fleet_flags_the_broken_engine_as_the_outlier_first(stack, fleet_json):
    first = fleet_json["engines"][0]
    assert first["labels"]["instance"] == stack.broken.target
    assert first["verdict"] == "problem" and first["outlier"]["peer_tau"] > 4
    assert first["tau_interval"]["high"] < first["outlier"]["peer_interval"]["low"]
    assert first["signature"] == "cliff-after-first"
    assert [
        e
        for e in fleet_json["engines"]
        if e["outlier"] and e["labels"]["instance"] in {h.target for h in stack.healthy}
    ] == []


def test_fleet_terminal_table_puts_the_outlier_on_top(stack):
    proc = _fleet(stack)
    assert proc.returncode == 1, proc.stderr
    rows = [ln for ln in proc.stdout.splitlines() if ln.startswith(("✗", "✓", "?"))]
    assert stack.broken.target.split(":")[1][:4] in rows[0] and "outlier" in rows[0]
    assert "Prometheus queries" in proc.stdout


def test_counter_reset_is_handled_and_the_drop_is_tied_to_it(stack, fleet_json):
    e = _engine(fleet_json, stack.restarting)
    assert e["restarts"] >= 1
    # the counts across the restart are not lost or negative: ~50 drafts/s over the 24 s window
    assert 24 * 50 * 0.75 < e["drafts"] < 24 * 50 * 1.1
    cp = e["trend"]["change_point"]
    assert cp and cp["after_restart"]
    # the step that holds the restart mixes both deploys; whichever side it lands on moves that side a little
    assert cp["tau_before"] == pytest.approx(1 + sum(GOOD), abs=0.3)
    assert cp["tau_after"] == pytest.approx(1 + sum(WORSE), abs=0.3)
    assert e["verdict"] == "problem"


def test_sglang_tau_from_its_counters(stack, fleet_json):
    e = _engine(fleet_json, stack.sglang)
    assert e["engine_kind"] == "sglang" and e["k"] == 3
    assert e["mean_acceptance_length"] == pytest.approx(1 + sum(SGL), abs=0.03)


def test_diagnose_prometheus_reports_the_drop_after_the_restart(stack):
    proc = run_cli(
        "diagnose",
        "--prometheus",
        stack.url,
        "--selector",
        f'{{instance="{stack.restarting.target}"}}',
        *stack.window,
        "--format",
        "json",
    )
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    acc = doc["acceptance"]
    assert len(acc["per_position"]) == 7 and len(acc["series"]) >= 6
    assert acc["tau_first_third"] > acc["tau_last_third"] + 1
    change = next(f for f in doc["findings"] if f["check"] == "acceptance-change-point")
    assert change["status"] == "fail" and "after a restart" in change["message"]
    kinds = {e["kind"] for e in doc["evidence"]}
    assert {"metrics", "acceptance"} <= kinds


def test_diagnose_prometheus_on_the_broken_engine_ranks_the_cliff(stack):
    proc = run_cli(
        "diagnose",
        "--prometheus",
        stack.url,
        "--selector",
        f'{{instance="{stack.broken.target}"}}',
        *stack.window,
        "--format",
        "json",
    )
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    curve = next(f for f in doc["findings"] if f["check"] == "acceptance-curve")
    assert curve["status"] == "fail" and "cliff-after-first" in curve["message"]


def test_generated_rules_pass_promtool(stack):
    proc = subprocess.run([PROMTOOL_BIN, "check", "rules", stack.rules], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 rules found" in proc.stdout


def test_alert_goes_pending_for_the_broken_engine_only(stack):
    wanted = {"SpecDecodeLowAcceptanceLength", "SpecDecodeFirstPositionCollapse"}
    deadline = time.monotonic() + HANG  # (bounds a hang: the loop ends when both alerts are there)
    alerts: list = []
    while time.monotonic() < deadline:
        alerts = [a for a in stack.prom.api("/api/v1/alerts")["data"]["alerts"] if a["state"] in ("pending", "firing")]
        if wanted <= {a["labels"]["alertname"] for a in alerts}:
            break
        time.sleep(0.5)
    assert {a["labels"]["instance"] for a in alerts} == {stack.broken.target}, alerts
    assert {"SpecDecodeLowAcceptanceLength", "SpecDecodeFirstPositionCollapse"} <= {
        a["labels"]["alertname"] for a in alerts
    }


def test_fleet_exits_3_when_no_series_match(stack):
    proc = _fleet(stack, "--selector", '{job="no-such-job"}')
    assert proc.returncode == 3
    assert "no spec-decode series" in proc.stderr


def test_a_bad_selector_is_a_usage_error_from_prometheus(stack):
    proc = _fleet(stack, "--selector", '{job=~"("}')
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: Prometheus rejected the query") and "hint:" in proc.stderr


def test_a_metrics_page_is_not_a_prometheus_api(stack):
    proc = run_cli("fleet", "--prometheus", f"http://{stack.broken.target}")
    assert proc.returncode == 3
    assert "is not a Prometheus HTTP API" in proc.stderr and "Traceback" not in proc.stderr
