"""`dflash-doctor logs` and `diagnose --log` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def test_seed_log_gives_tau_118_through_diagnose(cli):
    r = cli("diagnose", "--log", str(FIX / "seed" / "vllm-0.20.1.log"), "--format", "json")
    acc = json.loads(r.stdout)["acceptance"]
    assert acc["mean_acceptance_length"] == pytest.approx(1.18, abs=0.005)
    assert acc["k"] == 15


def test_logs_terminal_output_names_what_was_launched(cli):
    r = cli("logs", str(FIX / "logs" / "vllm-0.11.0.log"), "-v")  # the full report names the launch
    assert r.returncode in (0, 1, 3)  # (3: the workload decides τ 5.22 for this pair)
    out = r.stdout
    assert "τ = 5.22" in out
    assert "version 0.11.0" in out and "method dflash" in out and "z-lab/Qwen3-8B-DFlash-b16" in out
    assert "secret-api-key-123456" not in out


def test_secrets_never_reach_any_output(cli):
    for name in ("vllm-0.8.3.log", "vllm-0.9.2.log", "sglang-0.5.8.log", "vllm-0.11.0.log"):
        for fmt in ("json", "markdown", "terminal"):
            r = cli("logs", str(FIX / "logs" / name), "--format", fmt)
            for secret in (
                "sk-test-0123456789abcdef0123",
                "hf_abcdefghijklmnopqrstuvwxyz0123",
                "sk-sglang-abcdefghijklmnop",
                "secret-api-key-123456",
            ):
                assert secret not in r.stdout, (name, fmt)


def test_since_and_until_select_intervals(cli):
    log = str(FIX / "logs" / "vllm-0.11.0.log")  # intervals every 10 s from 03-02 08:00:10
    r = cli("logs", log, "--since", "03-02 08:01:00", "--until", "03-02 08:02:00", "--format", "json")
    acc = json.loads(r.stdout)["acceptance"]
    assert acc["intervals"] == 7
    r = cli("logs", log, "--since", "not a time")
    assert r.returncode == 2 and "not a time" in r.stderr


def test_csv_and_parquet_export(cli, tmp_path):
    import pandas as pd

    log = str(FIX / "logs" / "vllm-0.9.2.log")
    r = cli("logs", log, "--csv", str(tmp_path / "i.csv"), "--format", "json")
    df = pd.read_csv(tmp_path / "i.csv")
    assert len(df) == 30 and {"timestamp", "drafts", "accepted", "pos_1", "pos_4"} <= set(df.columns)
    r = cli("logs", log, "--parquet", str(tmp_path / "i.parquet"), "--format", "json")
    assert len(pd.read_parquet(tmp_path / "i.parquet")) == 30
    r = cli("logs", log, "--csv", "a", "--parquet", "b")
    assert r.returncode == 2


def test_stdin(cli):
    text = (FIX / "logs" / "vllm-0.17.0-compose.log").read_text()
    r = cli("logs", "-", "--format", "json", input=text)
    acc = json.loads(r.stdout)["acceptance"]
    assert acc["intervals"] == 30 and acc["engines"] == ["vllm/pid 7"]


def test_engine_flag_settles_the_sglang_rate_meaning(cli):
    r = cli("logs", str(FIX / "logs" / "sglang-0.5.8.log"), "--engine", "sglang==0.5.8", "--format", "json")
    rep = json.loads(r.stdout)
    assert any("from --engine" in n for n in rep["notes"])


def test_large_file_scanned_in_parallel_matches_serial(tmp_path):
    from dflash_doctor.parse import logscan

    lines = (FIX / "logs" / "vllm-0.7.3-v0.log").read_text() + (FIX / "logs" / "vllm-0.11.0.log").read_text()
    p = tmp_path / "big.log"
    p.write_text(lines * 40)
    par = logscan.aggregate(logscan.scan(str(p), logscan.ScanPlan(parallel_from=0, workers=3)))
    ser = logscan.aggregate(logscan.scan(str(p), logscan.ScanPlan(parallel_from=0, workers=1)))
    assert par.mean_acceptance_length == pytest.approx(ser.mean_acceptance_length, abs=1e-12)
    assert par.intervals == ser.intervals and par.per_position == pytest.approx(ser.per_position)


def test_a_logs_run_with_scan_workers_reports_what_a_serial_run_reports(tmp_path, capsys, monkeypatch):
    """The command's own route for a large file (grep, two byte-range workers; thresholds lowered) against
    the same command with one worker."""
    import functools

    from dflash_doctor.cli.entry import main
    from dflash_doctor.collect import inputs
    from dflash_doctor.parse.logscan import ScanPlan

    monkeypatch.setattr(inputs, "ScanPlan", functools.partial(ScanPlan, grep_from=0, parallel_from=0))
    big = tmp_path / "big.log"
    big.write_text(
        ((FIX / "logs" / "vllm-0.7.3-v0.log").read_text() + (FIX / "logs" / "vllm-0.11.0.log").read_text()) * 30
    )
    runs = []
    for workers in ("2", "1"):
        monkeypatch.setenv("DFLASH_DOCTOR_WORKERS", workers)
        with pytest.raises(SystemExit):
            main(["logs", str(big), "--format", "json"])
        runs.append(json.loads(capsys.readouterr().out)["acceptance"])
    for key in ("intervals", "drafts", "accepted", "mean_acceptance_length", "per_position", "series"):
        assert runs[0][key] == runs[1][key], key
