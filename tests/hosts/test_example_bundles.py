"""The example deployments in fixtures/hosts/ diagnose as their scenarios say (`check bundle`)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, run_cli


def _check(name):
    res = run_cli("check", "bundle", str(FIXTURES / "hosts" / name), "--format", "json")
    return res, json.loads(res.stdout)


def test_seed_bundle_ranks_swa_above_layer_offset():
    res, doc = _check("seed")
    assert res.returncode == 1
    assert doc["acceptance"]["mean_acceptance_length"] == pytest.approx(1.18, abs=0.01)
    ids = [c["id"] for c in doc["causes"]]
    assert ids[0] == "swa-ignored" and ids[1] == "layer-offset"
    status = {f["check"]: f["status"] for f in doc["findings"]}
    assert status["engine-source-swa"] == "fail" and status["engine-source-layer-map"] == "fail"
    assert status["drafter-card"] == "warn"
    # The installed source was read on the host, so it decides; the release table defers to it.
    table = next(f for f in doc["findings"] if f["check"] == "engine-drafter-swa")
    assert (
        table["status"] == "not-applicable"
        and "engine-source-swa decides" in table["message"]
        and not table["observations"]
    )


def test_layer_offset_bundle_blames_the_raw_layer_ids():
    res, doc = _check("layer-offset-pre-40727")
    assert doc["causes"][0]["id"] == "layer-offset"
    status = {f["check"]: f["status"] for f in doc["findings"]}
    assert (
        status["engine-source-layer-map"] == "fail" and status["engine-source-swa"] == "not-applicable"
    )  # all-full drafter


def test_eagle3_launched_as_eagle_is_a_method_mismatch():
    res, doc = _check("eagle3-as-eagle")
    assert doc["causes"][0]["id"] == "method-mismatch" and doc["causes"][0]["confidence"] > 0.9
    assert any(
        f["check"] == "launch-method" and f["status"] == "fail" and "eagle3" in f["message"] for f in doc["findings"]
    )


def test_healthy_bundle_is_healthy():
    res, doc = _check("healthy-qwen3-8b")
    assert res.returncode == 0 and doc["verdict"] == "healthy"
    assert doc["acceptance"]["mean_acceptance_length"] > 6
    assert not [f for f in doc["findings"] if f["status"] == "fail"]
    assert all(c["confidence"] < 0.5 for c in doc["causes"])


def test_bundles_hold_no_secrets():
    from tests.hosts.fakedeploy import SECRET_API_KEY, SECRET_HF_TOKEN

    for path in (FIXTURES / "hosts").rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert SECRET_API_KEY not in text and SECRET_HF_TOKEN not in text and "wJalrXUtnFEMI" not in text, path
