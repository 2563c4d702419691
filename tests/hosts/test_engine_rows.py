"""Issue 15's table, row by row: `check host` over a real SSH connection against a fake deployment of the
seed drafter (4 sliding + 1 full layers) on its Qwen3.6 target, served by each kind of install.

Refused and absent launches must be a failing finding with the engine's own text and the launch that
works, and raise neither swa-ignored nor layer-offset above its prior; patched, SGLang and source-checkout
installs must read as what their code does."""

from __future__ import annotations

import json
import math

import pytest

from tests.conftest import run_cli
from tests.hosts.fakedeploy import build, scenarios, start_server, stop_server

pytestmark = pytest.mark.ssh


def _prior(cause: str) -> float:
    from dflash_doctor.knowledge.causes import default_knowledge

    causes = default_knowledge().causes
    c = causes[cause] if isinstance(causes, dict) else next(c for c in causes if c.id == cause)
    return 1 / (1 + math.exp(-c.prior))


@pytest.fixture
def check(sshd, tmp_path):
    deps = []

    def run(name):
        dep = start_server(build(tmp_path / name, scenarios()[name]))
        deps.append(dep)
        res = run_cli(
            "check",
            "host",
            "testhost",
            "--ssh-config",
            str(sshd.ssh_config),
            "--pid",
            str(dep.proc.pid),
            "--format",
            "json",
        )
        assert "Traceback" not in res.stderr
        doc = json.loads(res.stdout)
        findings = {f["check"]: f for f in doc["findings"]}
        conf = {c["id"]: c["confidence"] for c in doc["causes"]}
        engine = next(e for e in doc["evidence"] if e["kind"] == "engine")["value"]
        return findings, conf, engine

    yield run
    for dep in deps:
        stop_server(dep)


def _not_raised(conf):
    for cause in ("swa-ignored", "layer-offset"):
        assert conf.get(cause, 0) < _prior(cause), (cause, conf.get(cause))


@pytest.mark.parametrize(
    "name, error, works",
    [
        ("vllm-0.25-mixed", "issues/40898", "no launch of this release serves it"),
        ("vllm-0.25-mixed-v2", "issues/40898", "no launch of this release serves it"),
        ("vllm-0.26-v1", "VLLM_USE_V2_MODEL_RUNNER=1", "unset VLLM_USE_V2_MODEL_RUNNER"),
        (
            "vllm-0.29-v1",
            "Model Runner V1 does not support: mixed sliding/full dflash drafts",
            "unset VLLM_USE_V2_MODEL_RUNNER",
        ),
    ],
)
def test_refused_launch_is_a_failing_finding_and_no_cause(check, name, error, works):
    findings, conf, _ = check(name)
    f = findings["engine-source-swa"]
    assert f["status"] == "fail" and ("refuses" in f["message"] or "rejects" in f["message"])
    assert any(error in d for d in f["details"]) and works in f["remedy"]
    assert [o["name"] for o in f["observations"]] == ["engine-launch:refused"]
    assert findings["engine-drafter-swa"]["status"] == "not-applicable"  # the table defers to the source
    _not_raised(conf)


def test_release_without_dflash_is_absent(check):
    findings, conf, engine = check("vllm-0.19.1")
    f = findings["engine-source-swa"]
    assert f["status"] == "fail" and "has no DFlash" in f["message"] and "upgrade to vllm >= 0.20.0" in f["remedy"]
    assert [o["name"] for o in f["observations"]] == ["engine-launch:absent"]
    _not_raised(conf)


def test_hand_patched_plus_one_reads_as_plus_one(check):
    findings, conf, _ = check("vllm-0.20.1-patched")
    m = findings["engine-source-layer-map"]
    assert m["status"] == "ok" and "+ 1" in m["message"]
    assert any("says layer_map 'raw'" in d and "'plus-one'" in d for d in m["details"])  # both, when they disagree
    assert findings["engine-source-swa"]["status"] == "fail"  # the patch adds +1, not sliding windows
    assert conf["layer-offset"] < _prior("layer-offset") < conf["swa-ignored"]


@pytest.mark.parametrize("name", ["sglang-0.5.22", "sglang-0.5.23"])
def test_sglang_adds_one_in_the_target_and_honours_windows(check, name):
    findings, conf, engine = check(name)
    assert engine["version"] == name.split("-")[1]
    m, s = findings["engine-source-layer-map"], findings["engine-source-swa"]
    assert (
        m["status"] == "ok"
        and "+ 1" in m["message"]
        and any("qwen3_vl.py" in d and "val + 1" in d for d in m["details"])
    )
    assert s["status"] == "ok" and "honours" in s["message"]
    _not_raised(conf)


def test_source_checkout_without_dist_info_has_its_version(check):
    findings, conf, engine = check("vllm-0.26-no-dist-info")
    assert (engine["version"], engine["version_from"]) == ("0.26.0", "vllm/_version.py")
    assert findings["engine-source-swa"]["status"] == "ok" and "V2 runner" in findings["engine-source-swa"]["message"]
    assert findings["engine-layer-map"]["status"] == "not-applicable"  # the row was found; the source decides
