"""The parts of the Prometheus support that need no server: flags, PromQL, rules, dashboard, the
change-point reading, one-line errors, and what `--help` imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dflash_doctor.errors import UsageError
from dflash_doctor.prometheus.client import display_url, normalise_url
from dflash_doctor.prometheus.metrics import FLEET_SERIES, TREND_SERIES
from dflash_doctor.prometheus.queries import combined, parse_duration, parse_labels, promql_duration, selector_matchers
from tests.conftest import ROOT, run_cli


@pytest.mark.parametrize(
    "text,want",
    [
        ('{job="vllm"}', 'job="vllm"'),
        ('job="vllm"', 'job="vllm"'),
        ("", ""),
        (' { job="a", ns=~"p.*" } ', 'job="a", ns=~"p.*"'),
        ('{name="x}{"}', 'name="x}{"'),
    ],
)
def test_selector_matchers(text, want):
    assert selector_matchers(text) == want


@pytest.mark.parametrize("text", ['{job="vllm"', 'job="a"}) or vector(1', 'job="a', '{__name__="up"}'])
def test_selector_that_could_escape_its_braces_is_refused(text):
    with pytest.raises(UsageError):
        selector_matchers(text)


def test_durations():
    assert parse_duration("6h", "--since") == 21600 and parse_duration("90", "--step") == 90
    assert promql_duration(21600) == "6h" and promql_duration(90) == "90s" and promql_duration(600) == "10m"
    with pytest.raises(UsageError):
        parse_duration("six hours", "--since")
    with pytest.raises(UsageError):
        parse_labels("instance,bad-label", "--by")


def test_one_expression_per_query_whatever_the_engines():
    expr = combined(FLEET_SERIES, 'job="vllm"', ("instance", "model_name"), 21600)
    assert expr.count("label_replace(") == len(FLEET_SERIES)
    drafts = '__name__=~"vllm:spec_decode_num_drafts_total|llamacpp:spec_decode_num_drafts_total"'
    assert f'increase({{{drafts}, job="vllm"}}[6h])' in expr  # vLLM's counters and llama-server's, one query
    assert 'last_over_time(llamacpp:spec_decode_num_drafts_total{job="vllm"}[6h])' in expr
    assert "sum by (instance, model_name, position)" in expr
    step = combined(TREND_SERIES, "", ("instance",), 300)
    assert f"resets({{{drafts}}}[10m])" in step  # twice the step: see TREND_SERIES


def test_llama_server_counters_read_as_their_own_kind():
    """llama-server exposes vLLM's four counters under `llamacpp:` (tools/server/server-task.cpp, llama.cpp
    0.5.0-dev in llama-cpp-python 0.3.36): read the same way, named as llama.cpp's."""
    from dflash_doctor.prometheus.fleet import EngineRow, _read_engine

    e = EngineRow(labels={"instance": "a:8080"})
    e.values.update({"drafts": 200.0, "draft_tokens": 600.0, "accepted": 270.0, "lcpp": 200.0})
    e.positions.update({0: 140.0, 1: 85.0, 2: 45.0})
    _read_engine(e)
    assert (e.kind, e.k) == ("llamacpp", 3)
    assert e.tau == pytest.approx(2.35) and e.rate == pytest.approx(0.45)
    assert e.per_position == pytest.approx((0.70, 0.425, 0.225))
    v = EngineRow(labels={"instance": "b:8000"})
    v.values.update({"drafts": 200.0, "draft_tokens": 600.0, "accepted": 270.0})
    _read_engine(v)
    assert v.kind == "vllm" and v.tau == pytest.approx(2.35)


def test_a_vllm_engine_row_carries_its_generated_tokens_for_the_drafted_share():
    """`diagnose --prometheus` reads an n-gram deployment's drafted share as a /metrics scrape gives it: vLLM's
    generation counter over the same window as the drafts (checks/baseline.py drafted_share)."""
    from checks.baseline import drafted_share
    from dflash_doctor.evidence import EvidenceSet, Source
    from dflash_doctor.evidence.payloads import MetricsScrape
    from dflash_doctor.prometheus.fleet import EngineRow, _read_engine

    v = EngineRow(labels={"instance": "b:8000"})
    v.values.update({"drafts": 200.0, "draft_tokens": 600.0, "accepted": 270.0, "generation": 2000.0})
    _read_engine(v)
    row = v.to_dict()
    assert row["generated_tokens"] == 2000.0
    ev = EvidenceSet()
    ev.add("history", Source("prometheus", "http://prom:9090"), MetricsScrape(source="p", engines=(row,)))
    assert drafted_share(ev) == pytest.approx((0.235, 2000.0, 200.0, 270.0))
    bare = EngineRow(labels={"instance": "c:8000"})
    bare.values.update({"drafts": 200.0, "draft_tokens": 600.0, "accepted": 270.0})
    _read_engine(bare)
    assert "generated_tokens" not in bare.to_dict()


@pytest.mark.parametrize(
    "url,want",
    [
        ("prom:9090", "http://prom:9090"),
        ("http://p:9090/", "http://p:9090"),
        ("https://p/prometheus/graph", "https://p/prometheus"),
        ("http://p:9090/api/v1/query?x=1", "http://p:9090"),
    ],
)
def test_url_normalised(url, want):
    assert normalise_url(url) == want


def test_shown_url_has_no_credentials():
    assert display_url("https://u:pw@p:9090/x") == "https://p:9090/x"


def test_unreachable_prometheus_is_one_line_exit_3():
    from tests.sshd import free_port

    proc = run_cli("fleet", "--prometheus", f"http://127.0.0.1:{free_port()}", "--timeout", "5")
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("error: cannot reach Prometheus") and lines[1].startswith("hint:")


def test_diagnose_with_only_an_unreachable_prometheus_is_one_error_line(tmp_path):
    from tests.sshd import free_port

    proc = run_cli(
        "diagnose",
        "--prometheus",
        f"http://127.0.0.1:{free_port()}",
        "--selector",
        '{instance="x"}',
        "--format",
        "json",
    )
    assert proc.returncode == 3, proc.stderr
    # nothing else was given: nothing was read, so one error line (README: "one error: line and a hint, exit 3")
    assert proc.stdout == "" and "cannot reach Prometheus" in proc.stderr.splitlines()[0]


def test_rules_yaml_has_one_group_of_four_per_engine_alerts():
    import yaml

    proc = run_cli("monitor", "rules", "--by", "pod,model_name", "--selector", '{job="vllm"}', "--for", "5m")
    assert proc.returncode == 0, proc.stderr
    doc = yaml.safe_load(proc.stdout)
    rules = doc["groups"][0]["rules"]
    assert [r["alert"] for r in rules] == [
        "SpecDecodeLowAcceptanceLength",
        "SpecDecodeFirstPositionCollapse",
        "SpecDecodeDraftsStopped",
        "SpecDecodeAcceptanceDrop",
    ]
    for r in rules:
        assert "sum by (pod, model_name)" in r["expr"] and 'job="vllm"' in r["expr"] and r["for"] == "5m"
    assert "offset 1d" in rules[3]["expr"]


def test_monitor_rejects_nonsense_thresholds():
    assert run_cli("monitor", "rules", "--min-acceptance-length", "0.5").returncode == 2
    assert run_cli("monitor", "rules", "--max-drop", "2").returncode == 2


def test_grafana_dashboard_draws_the_thresholds():
    proc = run_cli("monitor", "grafana", "--min-acceptance-length", "3.5")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    titles = [p["title"] for p in doc["panels"]]
    assert any("τ per engine" in t for t in titles) and any("Per-position" in t for t in titles)
    assert any("Draft rate" in t for t in titles)
    tau = doc["panels"][0]
    assert tau["fieldConfig"]["defaults"]["thresholds"]["steps"][1]["value"] == 3.5
    assert tau["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] == "line"
    assert doc["templating"]["list"][0]["type"] == "datasource"


def _summary(taus, drafts=500.0):
    from dflash_doctor.evidence.acceptance import AcceptanceSummary

    series = tuple(
        {"timestamp": f"2026-01-01T00:{i:02d}:00+00:00", "tau": t, "drafts": drafts, "intervals": 1}
        for i, t in enumerate(taus)
    )
    total = drafts * len(taus)
    acc = sum((t - 1) * drafts for t in taus)
    return AcceptanceSummary(
        mean_acceptance_length=1 + acc / total,
        per_position=(0.8, 0.6, 0.45, 0.3),
        drafts=total,
        drafted=0,
        accepted=int(acc),
        k=4,
        draft_acceptance_rate=None,
        intervals=len(taus),
        formats=("test",),
        series=series,
    )


def _change_finding(taus, restarts=()):
    from checks.acceptance_change import AcceptanceChangePoint
    from dflash_doctor.evidence import EvidenceSet, Source

    ev = EvidenceSet()
    if restarts:
        from dflash_doctor.evidence.payloads import MetricsScrape

        ev.add("m", Source("url", "x"), MetricsScrape(source="x", restarts=tuple(restarts), step_seconds=60))
    ev.add("a", Source("file", "x"), _summary(taus))
    return AcceptanceChangePoint().run(ev)[0]


def test_change_point_flat_series_is_ok():
    assert _change_finding([3.1, 3.2, 3.15, 3.1, 3.2, 3.15]).status.value == "ok"


def test_change_point_drop_without_restart_warns_step_drop():
    f = _change_finding([3.1, 3.2, 3.15, 1.9, 1.95, 1.9])
    assert f.status.value == "warn" and f.observations[0].name == "trend:step-drop"
    assert "at 2026-01-01T00:03:00+00:00" in f.message


def test_change_point_drop_at_a_restart_fails():
    f = _change_finding([3.1, 3.2, 3.15, 1.9, 1.95, 1.9], restarts=["2026-01-01T00:03:00+00:00"])
    assert f.status.value == "fail" and f.observations[0].name == "trend:drop-after-restart"


def test_change_point_needs_enough_drafts_on_each_side():
    from dflash_doctor.stats import change_point

    assert change_point([50, 50, 50, 50], [150, 150, 20, 20]) is None  # 100 drafts a side < 200
    cp = change_point([500] * 6, [1000, 1000, 1000, 300, 300, 300], (0.8, 0.6, 0.4, 0.2), 4)
    assert cp is not None and cp.index == 3 and cp.drop > 0.5


@pytest.mark.parametrize(
    "args", [["--help"], ["fleet", "--help"], ["monitor", "rules", "--help"], ["diagnose", "--help"]]
)
def test_help_imports_neither_heavy_libraries_nor_the_http_client(args):
    # (the console entry ends the process without the interpreter's teardown, exit handlers run: the list is
    # written by one)
    code = (
        f"import atexit, json, runpy, sys\nsys.argv = ['dflash-doctor'] + {args!r}\n"
        "atexit.register(lambda: sys.stderr.write('\\nLOADED=' + json.dumps(sorted(m for m in "
        "('torch', 'transformers', 'pandas', 'paramiko', 'numpy', 'httpx2', 'httpcore2', 'yaml') if m in "
        "sys.modules))))\n"
        "try:\n    runpy.run_module('dflash_doctor', run_name='__main__')\nexcept SystemExit:\n    pass\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert json.loads(proc.stderr.rsplit("LOADED=", 1)[1]) == []
