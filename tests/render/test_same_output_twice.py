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


def test_a_diagnosis_of_the_same_files_is_the_same_bytes(tmp_path):
    """Files are dated by their last write, not by the run: the same log diagnosed twice, a second apart, gives
    the same JSON (it gave the run's time as generated_at and as every file's collected_at)."""
    import os
    import time

    log = tmp_path / "vllm.log"
    log.write_bytes((FIXTURES / "seed" / "vllm-0.20.1.log").read_bytes())
    os.utime(log, (1_700_000_000, 1_700_000_000))
    first = run_cli("diagnose", "--log", str(log), "--format", "json").stdout
    time.sleep(1.1)
    second = run_cli("diagnose", "--log", str(log), "--format", "json").stdout
    assert first and first == second
    doc = json.loads(first)
    assert doc["generated_at"] == "2023-11-14T22:13:20+00:00"
    assert {e["collected_at"] for e in doc["evidence"]} == {"2023-11-14T22:13:20+00:00"}
