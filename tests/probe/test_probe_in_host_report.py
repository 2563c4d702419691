"""A saved probe result joins a host's report: `check bundle … --probe-result` weighs served vs probe."""

import json

import pytest

from tests.conftest import FIXTURES

pytest.importorskip("torch")
TINY = FIXTURES / "tiny"


@pytest.mark.torch
def test_probe_result_moves_the_ranking_of_a_bundle(cli, tmp_path):
    result = tmp_path / "probe.json"
    res = cli(
        "probe",
        "--target",
        str(TINY / "target"),
        "--drafter",
        str(TINY / "drafter-swa"),
        "--prompts",
        str(TINY / "prompts.jsonl"),
        "--limit",
        "2",
        "--max-new-tokens",
        "24",
        "--device",
        "cpu",
        "--ablate",
        "swa",
        "--format",
        "json",
        "--output",
        str(result),
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    without = json.loads(cli("check", "bundle", str(FIXTURES / "hosts" / "seed"), "--format", "json").stdout)
    # the tiny pair is not the pair the seed serves: refused with both pairs named (issue 17 item 4) …
    refused = cli("check", "bundle", str(FIXTURES / "hosts" / "seed"), "--probe-result", str(result))
    assert refused.returncode == 2 and refused.stdout == ""
    line = refused.stderr.splitlines()[0]
    assert (
        "tiny/drafter-swa on " in line
        and "tiny/target" in line
        and "z-lab/Qwen3.6-27B-DFlash" in line
        and "Qwen/Qwen3.6-27B" in line
    )
    assert "--force-probe-pair" in refused.stderr
    # … unless the user opts in
    res = cli(
        "check",
        "bundle",
        str(FIXTURES / "hosts" / "seed"),
        "--probe-result",
        str(result),
        "--format",
        "json",
        "--force-probe-pair",
    )
    report = json.loads(res.stdout)
    assert any("--force-probe-pair" in n for n in report["notes"])
    obs = {o["name"] for f in report["findings"] for o in f["observations"]}
    assert "probe:exceeds-served" in obs
    weak = {c["id"]: c for c in report["causes"]}.get("undertrained-drafter")
    weak_before = {c["id"]: c for c in without["causes"]}.get("undertrained-drafter")
    assert weak_before is not None and (weak is None or weak["confidence"] < weak_before["confidence"])
    assert (
        any(e["observation"] == "probe:exceeds-served" for e in (weak or {}).get("evidence_against", []))
        or weak is None
    )
    missing = " ".join(m["kind"] for m in report["missing_evidence"])
    assert "probe" not in missing.split()


def test_missing_probe_result_is_a_usage_error(cli, tmp_path):
    res = cli(
        "check",
        "bundle",
        str(FIXTURES / "hosts" / "seed"),
        "--probe-result",
        str(tmp_path / "nope.json"),
        "--format",
        "json",
    )
    assert res.returncode == 2 and res.stdout == ""
    assert "nope.json: no such file" in res.stderr.splitlines()[0]
