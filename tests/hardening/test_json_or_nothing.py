"""`--format json | jq`: stdout is one whole JSON document or nothing (SECURITY.md, "stdout is one whole JSON
document or nothing"). When a report can be made, it is on stdout whatever went wrong; when none can (a usage
error, exit 2; nothing readable at all, exit 3), stdout is empty and stderr holds one `error:` line (and a `hint:`
line where there is one) — click's own usage errors included, which printed four lines.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, run_cli
from tests.hardening import tally

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")

NO_REPORT = {
    "an unknown option (click)": (["diagnose", "--log", LOG, "--format", "json", "--no-such-flag"], 2),
    "a missing argument (click)": (["logs", "--format", "json"], 2),
    "a bad choice (click)": (["diagnose", "--log", LOG, "--format", "xml"], 2),
    "a value out of range (click)": (["check", "host", "local", "--parallel", "999", "--format", "json"], 2),
    "a non-finite number": (["gate", "--log", LOG, "--min-acceptance-length", "nan", "--format", "json"], 2),
    "a log that is not there": (["diagnose", "--log", "/nonexistent.log", "--format", "json"], 2),
    "a bad selector": (["fleet", "--prometheus", "http://127.0.0.1:9", "--selector", "job", "--format", "json"], 2),
    "Prometheus unreachable": (["fleet", "--prometheus", "http://127.0.0.1:9", "--format", "json"], 3),
}


@pytest.mark.parametrize("case", list(NO_REPORT))
def test_no_report_means_empty_stdout_and_one_error_line(case):
    tally.hostile_input("json: no report, no stdout")
    argv, rc = NO_REPORT[case]
    res = run_cli(*argv)
    assert res.returncode == rc, (res.returncode, res.stderr)
    assert res.stdout == "", res.stdout[:300]
    lines = res.stderr.splitlines()
    assert [ln for ln in lines if ln.startswith("error:")] and len(lines) <= 2, res.stderr
    assert lines[0].startswith("error:") and all(ln.startswith(("error:", "hint:")) for ln in lines), res.stderr


REPORT = {
    "an unreachable Prometheus beside a log": ["diagnose", "--log", LOG, "--prometheus", "http://127.0.0.1:9"],
    "one host of two unreachable": ["check", "host", "local", "ssh://u@127.0.0.1:9"],
    "a failing gate": ["gate", "--log", LOG, "--min-acceptance-length", "5"],
}


@pytest.mark.parametrize("case", list(REPORT))
def test_a_report_is_whole_json_whatever_failed(case):
    tally.hostile_input("json: a report despite failures")
    res = run_cli(*REPORT[case], "--format", "json", timeout=300)
    assert res.returncode in (0, 1, 3), res.stderr
    json.loads(res.stdout)
    assert "Traceback" not in res.stderr
