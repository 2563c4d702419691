"""A large log's scan begun early (`logscan.start_scan`, the `logs` command's first step): its workers'
results are what `scan_file` would have read, a begun scan that does not fit the later call is stopped
and the file scanned again, and one nobody takes is stopped at exit — no worker or grep is left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dflash_doctor.parse import logscan, prefilter
from tests.parse.scan_runs import assert_same_acceptance, parallel_then_serial

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


@pytest.fixture
def big(tmp_path, monkeypatch):
    """A log the parallel grep route takes (its thresholds lowered)."""
    monkeypatch.setattr(logscan, "PARALLEL_MIN", 1)
    monkeypatch.setattr(prefilter, "GREP_MIN", 1)
    text = (FIX / "vllm-0.7.3-v0.log").read_text() + (FIX / "vllm-0.11.0.log").read_text()
    p = tmp_path / "big.log"
    p.write_text(text * 30)
    return p


def _children() -> list[int]:
    """This process's live child processes (zombies included)."""
    try:
        with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        pytest.skip("no /proc children list")


def _summary(scan):
    s = logscan.aggregate(scan)
    return s.intervals, s.drafts, s.accepted, s.mean_acceptance_length, s.per_position, s.series


def test_a_scan_begun_early_reads_what_scan_file_reads(big):
    serial = _summary(logscan.scan_file(str(big), workers=1, grep=False))
    assert logscan.start_scan(str(big), workers=2)
    assert str(big) in logscan._STARTED
    got = logscan.scan_file(str(big), workers=2)
    assert str(big) not in logscan._STARTED  # taken, not started again
    assert _summary(got) == serial
    assert _children() == []


def test_a_begun_scan_that_does_not_fit_is_stopped_and_the_file_scanned_again(big):
    serial = _summary(logscan.scan_file(str(big), workers=1, grep=False))
    assert logscan.start_scan(str(big), workers=2)
    got = logscan.scan_file(str(big), workers=3)  # other switches: the begun scan is not theirs
    assert _summary(got) == serial
    assert not logscan._STARTED and _children() == []


def test_a_file_that_grew_is_read_as_it_was_when_the_scan_began(big):
    before = _summary(logscan.scan_file(str(big), workers=1, grep=False))
    assert logscan.start_scan(str(big), workers=2)
    with open(big, "a") as fh:  # a live server appends meanwhile
        fh.write((FIX / "vllm-0.11.0.log").read_text())
    assert _summary(logscan.scan_file(str(big), workers=2)) == before
    assert _children() == []


def test_a_begun_scan_nobody_takes_is_stopped_at_exit(big):
    assert logscan.start_scan(str(big), workers=2)
    assert _children()
    logscan._abandon_all()  # (what the atexit hook does)
    assert not logscan._STARTED and _children() == []


def test_small_compressed_and_missing_files_are_left_to_scan_file(tmp_path, monkeypatch):
    import gzip

    p = tmp_path / "small.log"
    p.write_text((FIX / "vllm-0.11.0.log").read_text())
    assert not logscan.start_scan(str(p))  # below PARALLEL_MIN
    monkeypatch.setattr(logscan, "PARALLEL_MIN", 1)
    gz = tmp_path / "a.log.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    assert not logscan.start_scan(str(gz))
    assert not logscan.start_scan(str(tmp_path / "missing.log"))
    assert not logscan.start_scan("-")
    assert not logscan.start_scan(str(p), workers=1)
    assert not logscan._STARTED and _children() == []


def test_the_logs_command_starts_the_scan_before_its_imports_and_reports_the_same(big, capsys, monkeypatch):
    from dflash_doctor.cli.app import main

    began, left, early, serial = parallel_then_serial(main, big, capsys, monkeypatch)
    assert began == [True] and not left
    assert_same_acceptance(early, serial)
    assert _children() == []
