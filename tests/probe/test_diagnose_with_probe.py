"""`diagnose --probe-result`: a saved probe result becomes ProbeResult evidence and moves the ranking."""

from __future__ import annotations

import json

from tests.conftest import FIXTURES
from tests.probe.test_probe_checks import curve


def probe_doc(tau: float, swa_ignored: float) -> dict:
    return {
        "schema": "dflash-doctor/probe@1",
        "block_size": 16,
        "temperature": 0.0,
        "lossless": True,
        "mismatches": [],
        "acceptance": {"mean_acceptance_length": tau, "per_position": curve(tau, 15), "steps": 500},
        "ablations": [
            {"name": "swa-honoured", "mean_acceptance_length": tau, "per_position": curve(tau, 15)},
            {"name": "swa-ignored", "mean_acceptance_length": swa_ignored, "per_position": curve(swa_ignored, 15)},
        ],
    }


def run(cli, tmp_path, doc):
    f = tmp_path / "probe.json"
    f.write_text(json.dumps(doc))
    res = cli(
        "diagnose", "--log", str(FIXTURES / "seed" / "vllm-0.20.1.log"), "--probe-result", str(f), "--format", "json"
    )
    assert res.returncode in (0, 1), res.stderr
    return json.loads(res.stdout)


def findings(report, check_id):
    return [f for f in report["findings"] if f["check"] == check_id]


def test_probe_far_above_the_served_tau_with_matching_swa_ablation(cli, tmp_path):
    report = run(cli, tmp_path, probe_doc(6.5, 1.2))
    msgs = " ".join(f["message"] for f in findings(report, "probe-vs-served"))
    assert "reaches τ" in msgs and "sliding windows ignored" in msgs
    assert any(e["kind"] == "probe" for e in report["evidence"])
    assert report["causes"][0]["id"] == "swa-ignored"


def test_probe_as_low_as_served(cli, tmp_path):
    report = run(cli, tmp_path, probe_doc(1.25, 1.1))
    [f] = findings(report, "probe-vs-served")
    assert "reproduces the served" in f["message"]


def test_a_file_that_is_not_a_probe_result_is_a_usage_error(cli, tmp_path):
    f = tmp_path / "probe.json"
    f.write_text(json.dumps({"schema": "something-else"}))
    res = cli("diagnose", "--log", str(FIXTURES / "seed" / "vllm-0.20.1.log"), "--probe-result", str(f))
    assert res.returncode == 2 and res.stdout == ""
    assert "not a dflash-doctor/probe@1 document" in res.stderr.splitlines()[0]
