"""A `logs` run with two scan workers, then the same run serial: what each reported, and which scans began."""

from __future__ import annotations

import json

import pytest

from dflash_doctor.parse import logscan

COMPARED = ("intervals", "drafts", "accepted", "mean_acceptance_length", "per_position", "series")


def parallel_then_serial(main, path, capsys, monkeypatch):
    """(start_scan's answers during the parallel run, whether a scan was left untaken after it, the parallel
    run's acceptance, the serial run's acceptance)."""
    began: list[bool] = []
    real = logscan.start_scan
    monkeypatch.setattr(logscan, "start_scan", lambda *a, **k: began.append(real(*a, **k)) or began[-1])
    runs = []
    for workers in ("2", "1"):
        monkeypatch.setenv("DFLASH_DOCTOR_WORKERS", workers)
        with pytest.raises(SystemExit):
            main(["logs", str(path), "--format", "json"])
        runs.append(json.loads(capsys.readouterr().out)["acceptance"])
        if workers == "2":
            parallel_began, left = list(began), bool(logscan._STARTED)
    return parallel_began, left, runs[0], runs[1]


def assert_same_acceptance(a: dict, b: dict) -> None:
    for key in COMPARED:
        assert a[key] == b[key], key
