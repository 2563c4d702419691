"""Numbers the gate is handed that no measurement can produce: a 400-digit baseline τ, `Infinity` in a
saved probe, nan or inf thresholds. Before, each was an `internal error` (OverflowError, ValueError
from the JSON writer) or a silent FAIL on `τ >= nan`; now a one-line usage error, exit 2, and a gate
never passes on them."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, run_cli
from tests.hardening import tally

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")


def _one_line_usage_error(res) -> None:
    assert res.returncode == 2, (res.returncode, res.stderr)
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "internal error" not in res.stderr, res.stderr
    assert res.stdout == ""


@pytest.mark.parametrize("tau", ["9" * 400, "1e400", "-1", "0.5", "1e6"])
def test_an_impossible_baseline_tau_is_refused(tmp_path, tau):
    tally.hostile_input("gate: impossible baseline τ")
    base = tmp_path / "base.json"
    base.write_text('{"schema": "dflash-doctor/report@1", "acceptance": {"mean_acceptance_length": ' + tau + "}}")
    res = run_cli("gate", "--log", LOG, "--max-regression", "5", "--baseline", str(base))
    _one_line_usage_error(res)


@pytest.mark.parametrize(
    "field,value",
    [
        ("drafted", "Infinity"),
        ("accepted", "-Infinity"),
        ("drafts", "NaN"),
        ("mean_acceptance_length", "NaN"),
        ("drafts", "1e400"),
        ("intervals", "1" + "0" * 30),
        ("per_position", "[0.5, NaN]"),
        ("per_position", "[2.0]"),
        ("mean_acceptance_length", '"2"'),
    ],
)
def test_a_saved_probe_with_a_non_finite_count_is_refused(tmp_path, field, value):
    tally.hostile_input("gate: non-finite number in a saved probe")
    acc = {
        "mean_acceptance_length": 2.0,
        "drafts": 1000,
        "drafted": 7000,
        "accepted": 1000,
        "per_position": [0.5],
        "intervals": 1,
    }
    text = json.dumps({"acceptance": acc}).replace(f'"{field}": {json.dumps(acc[field])}', f'"{field}": {value}')
    probe = tmp_path / "probe.json"
    probe.write_text(text)
    res = run_cli("gate", "--probe", str(probe), "--min-acceptance-length", "1.5", "--format", "json")
    _one_line_usage_error(res)


@pytest.mark.parametrize(
    "flag,value",
    [
        ("--min-acceptance-length", "nan"),
        ("--min-acceptance-length", "inf"),
        ("--min-acceptance-length", "-inf"),
        ("--max-regression", "nan"),
        ("--max-regression", "inf"),
    ],
)
def test_a_non_finite_threshold_is_refused(tmp_path, flag, value):
    """--min-acceptance-length nan: before, `--format json` crashed in the JSON writer; text output FAILed."""
    tally.hostile_input("gate: non-finite threshold")
    base = tmp_path / "base.json"
    base.write_text('{"schema": "dflash-doctor/report@1", "acceptance": {"mean_acceptance_length": 3.0}}')
    extra = ["--baseline", str(base)] if flag == "--max-regression" else []
    res = run_cli("gate", "--log", LOG, flag, value, *extra, "--format", "json", "--junit", str(tmp_path / "j.xml"))
    _one_line_usage_error(res)


def test_a_sane_saved_probe_still_gates(tmp_path):
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps({"acceptance": {"mean_acceptance_length": 2.0, "drafts": 1000, "per_position": [0.5]}}))
    assert run_cli("gate", "--probe", str(probe), "--min-acceptance-length", "1.5").returncode == 0
    assert run_cli("gate", "--probe", str(probe), "--min-acceptance-length", "2.5").returncode == 1
