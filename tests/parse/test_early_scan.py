"""The entry point begins a `logs` run's large-file scan from the raw arguments, before the CLI is
loaded (cli/early.py): it reads exactly the `logs` command's options, begins nothing for arguments it
does not understand, and the run reports what it reports without the head start."""

from __future__ import annotations

from pathlib import Path

import pytest

from dflash_doctor.cli import early
from dflash_doctor.parse import logscan, prefilter
from tests.parse.scan_runs import assert_same_acceptance, parallel_then_serial

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def test_the_reading_knows_every_option_of_the_logs_command():
    import typer

    from dflash_doctor.cli.app import app

    cmd = typer.main.get_command(app).commands["logs"]
    value, flags = set(), set()
    for p in cmd.params:
        if getattr(p, "param_type_name", "") != "option":
            continue
        names = set(p.opts) | set(p.secondary_opts)
        (flags if p.is_flag else value).update(names)
    # --engine is left out on purpose (the workers would need its parsed form); --help is never read early
    assert value - {"--engine"} == early.VALUE_OPTIONS
    assert flags - {"--help", "-h"} == early.FLAGS


@pytest.mark.parametrize(
    "args, files",
    [
        (["logs", "a.log"], ["a.log"]),
        (["logs", "a.log.1", "a.log", "--format", "json", "-o", "r.json"], ["a.log.1", "a.log"]),
        (["logs", "--since", "05-14 09:15", "a.log", "--until=05-14 10:00", "-v", "--csv", "-"], ["a.log"]),
        (["logs", "-", "-f", "json"], ["-"]),
        (["logs", "a.log", "--engine", "sglang==0.5.8"], None),  # the workers would need the engine
        (["logs", "a.log", "--engine=sglang==0.5.8"], None),
        (["logs", "a.log", "--help"], None),
        (["logs", "--help", "a.log"], None),
        (["logs", "a.log", "-h"], None),
        (["logs", "a.log", "-vf", "json"], None),  # combined short options: not read here
        (["logs", "--", "-a.log"], None),
        (["logs", "a.log", "--format"], None),  # a value missing: the command's error, not a head start
        (["logs", "--format", "json"], None),
        (["--debug", "logs", "a.log"], None),
        (["diagnose", "--log", "a.log"], None),
        ([], None),
    ],
)
def test_the_files_of_a_logs_invocation(args, files):
    assert early.logs_files(args) == files


def test_the_entry_point_begins_the_scan_before_the_cli_loads_and_reports_the_same(tmp_path, capsys, monkeypatch):
    from dflash_doctor.cli.entry import main

    monkeypatch.setattr(logscan, "PARALLEL_MIN", 1)
    monkeypatch.setattr(prefilter, "GREP_MIN", 1)
    big = tmp_path / "big.log"
    big.write_text(((FIX / "vllm-0.7.3-v0.log").read_text() + (FIX / "vllm-0.11.0.log").read_text()) * 30)
    began, left, early_run, serial = parallel_then_serial(main, big, capsys, monkeypatch)
    assert began == [True, False] and not left  # begun by the entry point, taken by the command
    assert_same_acceptance(early_run, serial)


def test_a_scan_begun_for_a_run_that_stops_early_is_stopped(tmp_path, capsys, monkeypatch):
    from dflash_doctor.cli.entry import main

    monkeypatch.setattr(logscan, "PARALLEL_MIN", 1)
    monkeypatch.setattr(prefilter, "GREP_MIN", 1)
    big = tmp_path / "big.log"
    big.write_text((FIX / "vllm-0.11.0.log").read_text() * 30)
    monkeypatch.setenv("DFLASH_DOCTOR_WORKERS", "2")
    with pytest.raises(SystemExit) as e:
        main(["logs", str(big), "--format", "yaml"])  # Typer refuses the format after the scan was begun
    assert e.value.code == 2
    assert str(big) in logscan._STARTED
    logscan._abandon_all()  # (what the atexit hook does)
    assert not logscan._STARTED


def test_grep_asked_its_version_ahead_answers_as_when_asked_then(monkeypatch):
    monkeypatch.setattr(prefilter, "_grep_path", False)
    monkeypatch.setattr(prefilter, "_probe", None)
    prefilter.probe_grep()  # (start_scan: while it splits and samples the file)
    ahead = prefilter.grep_command()
    assert prefilter._probe is None  # read, and the process reaped
    monkeypatch.setattr(prefilter, "_grep_path", False)
    assert prefilter.grep_command() == ahead
    assert prefilter.grep_command(enabled=False) is None
