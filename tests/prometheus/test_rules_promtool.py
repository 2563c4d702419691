"""The generated alert rules, evaluated by Prometheus' own rule engine (`promtool test rules`) over a
day of synthetic series: each of the four alerts fires for the engine that has its problem, per engine,
and for no healthy engine; SGLang engines are covered by the same rules."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from tests.conftest import run_cli

pytestmark = [pytest.mark.prometheus]

MIN = 1600  # one sample a minute: 26 h and a bit


def _vllm(instance: str, drafts: str, accepted: str, first: str, generation: str) -> list[dict]:
    lab = f'instance="{instance}", job="vllm", model_name="m", engine="0"'
    return [
        {"series": f"vllm:spec_decode_num_drafts_total{{{lab}}}", "values": drafts},
        {"series": f"vllm:spec_decode_num_accepted_tokens_total{{{lab}}}", "values": accepted},
        {"series": f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{lab}, position="0"}}', "values": first},
        {"series": f"vllm:generation_tokens_total{{{lab}}}", "values": generation},
    ]


def _render(text: str, instance: str, value: float | None) -> str:
    text = text.replace("{{ $labels.instance }}", instance)
    if value is not None:
        text = text.replace('{{ $value | printf "%.2f" }}', f"{value:.2f}").replace(
            '{{ $value | printf "%.3f" }}', f"{value:.3f}"
        )
    return text


def test_each_alert_fires_for_its_engine_only(tmp_path):
    from tests.prometheus.promserver import PROMTOOL_BIN, prometheus_available

    reason = prometheus_available()
    if reason:
        pytest.skip(reason)
    rules_file = tmp_path / "rules.yml"
    proc = run_cli(
        "monitor", "rules", "--selector", '{job="vllm"}', "--for", "5m", "--window", "10m", "-o", str(rules_file)
    )
    assert proc.returncode == 0, proc.stderr
    rules = {r["alert"]: r for r in yaml.safe_load(rules_file.read_text())["groups"][0]["rules"]}
    series = (
        _vllm("healthy", f"0+600x{MIN}", f"0+2200x{MIN}", f"0+510x{MIN}", f"0+2800x{MIN}")
        + _vllm("low", f"0+600x{MIN}", f"0+100x{MIN}", f"0+60x{MIN}", f"0+700x{MIN}")
        + _vllm("stalled", f"5000+0x{MIN}", f"9000+0x{MIN}", f"4000+0x{MIN}", f"0+700x{MIN}")
        + _vllm("dropped", f"0+600x{MIN}", f"0+2200x1500 3300000+1000x{MIN - 1500}", f"0+510x{MIN}", f"0+2800x{MIN}")
    )
    sgl = 'instance="sglang-low", job="vllm", model_name="m", engine_type="unified"'
    series += [
        {"series": f"sglang:spec_verify_calls_total{{{sgl}}}", "values": f"0+600x{MIN}"},
        {"series": f"sglang:generation_tokens_total{{{sgl}}}", "values": f"0+700x{MIN}"},
        {"series": f"sglang:num_requests_total{{{sgl}}}", "values": f"0+10x{MIN}"},
    ]
    expected = {  # alert -> [(instance, $value)]
        "SpecDecodeLowAcceptanceLength": [("low", 1 + 100 / 600), ("sglang-low", (700 - 10) / 600)],
        "SpecDecodeFirstPositionCollapse": [("low", 60 / 600)],
        "SpecDecodeDraftsStopped": [("stalled", None)],
        "SpecDecodeAcceptanceDrop": [("dropped", None)],
    }
    tests = []
    for alert, rule in rules.items():
        exp = []
        for instance, value in expected[alert]:
            exp.append(
                {
                    "exp_labels": {"instance": instance, **rule["labels"]},
                    "exp_annotations": {k: _render(v, instance, value) for k, v in rule["annotations"].items()},
                }
            )
        tests.append({"eval_time": f"{MIN - 40}m", "alertname": alert, "exp_alerts": exp})
    spec = {
        "rule_files": [str(rules_file)],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": tests}],
    }
    test_file = tmp_path / "test.yml"
    test_file.write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = subprocess.run([PROMTOOL_BIN, "test", "rules", str(test_file)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
