"""`healthy` is a claim: it needs τ compared with what the pair should reach. Absence of a problem
signal (no curve, no baseline) gives insufficient-data, never healthy."""

import json

import pytest

from tests.conftest import FIXTURES


@pytest.mark.parametrize("log", ["sglang-0.5.2.log", "vllm-0.8.3.log", "vllm-0.7.3-v0.log"])
def test_no_baseline_and_no_curve_is_not_healthy(cli, log):
    proc = cli("diagnose", "--log", str(FIXTURES / "logs" / log), "--format", "json")
    report = json.loads(proc.stdout)
    assert report["acceptance"]["mean_acceptance_length"] > 1.5
    assert report["verdict"] == "insufficient-data"
    assert any("cannot be judged" in n for n in report["notes"])
    assert proc.returncode == 3  # exit codes follow the verdict: insufficient-data is 3


def test_healthy_needs_the_pair_at_its_baseline(cli):
    proc = cli("check", "bundle", str(FIXTURES / "hosts" / "healthy-qwen3-8b"), "--format", "json")
    report = json.loads(proc.stdout)
    obs = {o["name"] for f in report["findings"] for o in f["observations"]}
    assert report["verdict"] == "healthy" and "tau:at-baseline" in obs
