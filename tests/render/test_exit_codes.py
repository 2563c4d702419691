"""The exit-code table (README "Exit codes"), command by command: problem 1, healthy 0, insufficient data 3,
usage error 2 — for every command that prints a verdict or a check result."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, run_cli

LOGS = FIXTURES / "logs"
SEED_LOG = str(FIXTURES / "seed" / "vllm-0.20.1.log")
HEALTHY_LOG = str(LOGS / "sglang-0.5.2.log")  # τ inside EAGLE-3's healthy band
# Qwen3-8B-DFlash-b16 at τ 5.22 with the workload unnamed: healthy on mt-bench, below on gsm8k — the workload decides
UNJUDGED_LOG = str(LOGS / "vllm-0.11.0.log")

TABLE = [
    # command, args, exit code, verdict words
    ("diagnose", ["--log", SEED_LOG], 1, "problem"),
    ("diagnose", ["--log", HEALTHY_LOG], 0, "healthy"),
    ("diagnose", ["--log", UNJUDGED_LOG], 3, "insufficient-data"),
    ("logs", [SEED_LOG], 1, "problem"),
    ("logs", [HEALTHY_LOG], 0, "healthy"),
    ("logs", [UNJUDGED_LOG], 3, "insufficient-data"),
    ("check bundle", [str(FIXTURES / "hosts" / "seed")], 1, "problem"),
    ("check bundle", [str(FIXTURES / "hosts" / "healthy-qwen3-8b")], 0, "healthy"),
    (
        "inspect-model",
        [
            str(FIXTURES / "models" / "Qwen3.6-27B-DFlash"),
            "--target",
            str(FIXTURES / "models" / "Qwen3.6-27B"),
            "--engine",
            "vllm==0.20.1",
        ],
        1,
        None,
    ),
    (
        "inspect-model",
        [
            str(FIXTURES / "models" / "Qwen3-8B-DFlash-b16"),
            "--target",
            str(FIXTURES / "models" / "Qwen3-8B"),
            "--engine",
            "vllm==0.26.0",
        ],
        0,
        None,
    ),
    ("gate", ["--log", SEED_LOG, "--min-acceptance-length", "3"], 1, "FAILED"),
    ("gate", ["--log", SEED_LOG, "--min-acceptance-length", "1.1"], 0, "passed"),
    ("gate", ["--log", "/nonexistent/server.log", "--min-acceptance-length", "2"], 3, "no data"),
]


@pytest.mark.parametrize(
    "cmd,args,code,words", TABLE, ids=[f"{c}-{code}-{i}" for i, (c, _, code, _) in enumerate(TABLE)]
)
def test_exit_code_follows_the_verdict(cmd, args, code, words):
    r = run_cli(*cmd.split(), *args)
    assert r.returncode == code, (r.stdout[-2000:], r.stderr)
    if words:  # said where the eye lands: the first lines, or the last (the one-screen report ends on its verdict)
        lines = r.stdout.splitlines()
        assert words in "\n".join(lines[:4] + lines[-2:])


def test_check_exits_by_the_verdict_and_a_fleet_by_its_worst_host():
    """`check host local` depends on what runs on this machine; the policy is tested on the service's results."""
    import dataclasses

    from dflash_doctor.evidence import EvidenceSet, Verdict
    from dflash_doctor.services.doctor import build_report
    from dflash_doctor.services.hostcheck import HostFleet, HostResult

    base, _ = build_report(EvidenceSet("h"))
    assert base.verdict == Verdict.INSUFFICIENT_DATA
    res = {v: HostResult("h", dataclasses.replace(base, verdict=v), "checked") for v in Verdict}
    assert [res[v].exit_code for v in (Verdict.PROBLEM, Verdict.HEALTHY, Verdict.INSUFFICIENT_DATA)] == [1, 0, 3]
    down = HostResult("d", base, "unreachable", "connection refused")
    assert HostFleet((res[Verdict.HEALTHY], down)).exit_code == 3
    assert HostFleet((res[Verdict.PROBLEM], down)).exit_code == 1
    assert HostFleet((res[Verdict.HEALTHY], HostResult("i", base, "interrupted"))).exit_code == 130


def test_inspect_model_of_nothing_a_reader_knows_is_insufficient(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["Foo"]}))
    assert run_cli("inspect-model", str(d)).returncode == 3


def test_a_probe_and_a_layer_offset_run_exit_by_their_checks():
    from dflash_doctor.probe.runs import LayerOffsetRun, ProbeRun

    assert ProbeRun({"lossless": True}).exit_code == 0
    assert ProbeRun({"lossless": False}).exit_code == 1
    assert ProbeRun({"lossless": True, "served_comparison": [{"status": "fail"}]}).exit_code == 1
    assert ProbeRun({"lossless": None, "served_comparison": [{"status": "could-not-check"}]}).exit_code == 3
    assert LayerOffsetRun({"offset": 0}, drafter_given=True).exit_code == 0
    assert LayerOffsetRun({"offset": -1}, drafter_given=True).exit_code == 1
    assert LayerOffsetRun({"offset": None}, drafter_given=True).exit_code == 3
    assert LayerOffsetRun({"offset": None}).exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["diagnose", "--log", SEED_LOG, "--format", "html"],
        ["probe", "--target", "T", "--drafter", "D", "--format", "markdown"],
        ["logs", "--no-such-flag", SEED_LOG],
        ["check", "host"],
    ],
)
def test_usage_errors_exit_2(args):
    r = run_cli(*args)
    assert r.returncode == 2 and r.stdout == ""
