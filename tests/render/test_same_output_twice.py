"""Issue 25 point 5: the same input gives the same bytes on every run, whatever the hash seed — evidence
references, engine-source citations and times (a replayed bundle's come from its manifest)."""

import json

import pytest

from tests.conftest import FIXTURES, run_cli

SEEDS = ("1", "5", "77")


def _runs(*args: str) -> list[str]:
    return [run_cli(*args, env={"PYTHONHASHSEED": s}).stdout for s in SEEDS]


@pytest.mark.parametrize("bundle", ["seed", "layer-offset-pre-40727"])
@pytest.mark.parametrize("view", [("-v",), ("-vv",), ("--format", "json"), ()])
def test_a_bundle_gives_the_same_bytes_every_run(bundle, view):
    outs = _runs("check", "bundle", str(FIXTURES / "hosts" / bundle), *view)
    assert outs[0] and outs[0] == outs[1] == outs[2]


def test_a_replayed_bundle_keeps_the_time_it_was_collected():
    manifest = json.loads((FIXTURES / "hosts" / "seed" / "manifest.json").read_text())
    doc = json.loads(run_cli("check", "bundle", str(FIXTURES / "hosts" / "seed"), "--format", "json").stdout)
    assert doc["generated_at"] == manifest["collected_at"]
    assert {e["collected_at"] for e in doc["evidence"]} == {manifest["collected_at"]}
    host = next(e for e in doc["evidence"] if e["kind"] == "host")
    assert "replayed from a bundle" in host["summary"]


def test_a_log_gives_the_same_report_every_run():
    outs = _runs("diagnose", "--log", str(FIXTURES / "seed" / "vllm-0.20.1.log"), "-vv")
    assert outs[0] == outs[1] == outs[2]
