"""`monitor rules` / `monitor grafana` and every other numeric option: what the user types never becomes an
alert that cannot fire, one that always fires, or PromQL of its own (issue 24).

Generated rules are checked by the real `promtool check rules` (/usr/bin/promtool, installed by .ci/run); the
expressions' string literals are stripped as Prometheus' lexer reads them, and what is left must hold no
PromQL the user wrote.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import FIXTURES, run_cli
from tests.hardening import tally

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


def _one_line_usage_error(res) -> None:
    assert res.returncode == 2, (res.returncode, res.stdout[:300], res.stderr)
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert res.stdout == ""


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "-1e300", "NaN", "+inf", "1" + "0" * 400])
@pytest.mark.parametrize("flag", ["--min-acceptance-length", "--min-first-position", "--max-drop", "--min-drafts"])
def test_monitor_rules_refuses_non_finite_and_absurd_numbers(flag, value):
    """Before: `--min-acceptance-length nan` wrote `… < nan` (never fires) with exit 0, `inf` an alert that
    always fires."""
    tally.hostile_input("monitor: numeric option")
    _one_line_usage_error(run_cli("monitor", "rules", flag, value))


# Every numeric option of every command: a one-line usage error, no traceback, nothing on stdout.
NUMERIC = [
    ("fleet", "--prometheus", "http://127.0.0.1:9", "--timeout"),
    ("fleet", "--prometheus", "http://127.0.0.1:9", "--until"),
    ("fleet", "--prometheus", "http://127.0.0.1:9", "--since"),
    ("fleet", "--prometheus", "http://127.0.0.1:9", "--step"),
    ("diagnose", "--prometheus", "http://127.0.0.1:9", "--timeout"),
    ("diagnose", "--log", LOG, "--temperature"),
    ("gate", "--log", LOG, "--min-acceptance-length"),
    ("gate", "--log", LOG, "--max-regression"),
    ("gate", "--log", LOG, "--min-drafts"),
    ("monitor", "rules", "--window"),
    ("monitor", "rules", "--offset"),
    ("monitor", "rules", "--for"),
    ("monitor", "grafana", "--min-acceptance-length"),
    ("check", "host", "local", "--timeout"),
    ("check", "host", "local", "--pid"),
    ("probe", "--target", "t", "--drafter", "d", "--timeout"),
    ("probe", "--target", "t", "--drafter", "d", "--temperature"),
    ("probe", "--target", "t", "--drafter", "d", "--seed"),
    ("probe", "--target", "t", "--drafter", "d", "--max-new-tokens"),
]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "9" * 400])
@pytest.mark.parametrize("argv", NUMERIC, ids=lambda a: " ".join(a[:1] + a[-1:]))
def test_every_numeric_option_refuses_nan_inf_and_absurd_magnitudes(argv, value):
    """Before: `--timeout nan` was an internal error (ValueError from httpx), `--until nan` read Prometheus
    at no time, a 400-digit `--window` overflowed in the PromQL duration, `--temperature inf` was taken."""
    tally.hostile_input("cli: numeric option")
    _one_line_usage_error(run_cli(*argv, value, timeout=60))


def _strip_strings(expr: str) -> str:
    """PromQL with every string literal emptied, as Prometheus' lexer reads them: "…" and '…' with escapes,
    `…` raw (a backslash in it is a backslash)."""
    return re.sub(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`]*`', '""', expr)


HOSTILE_SELECTORS = [
    # the issue's: a backslash before a backtick ends the raw string for Prometheus, not for the old check
    'a=`x\\`}[10m])) or vector(1) or sum by (instance) (increase(up{b="`\\""',
    "a=`x\\`) or vector(1) or up{b=`",
    'job="a"}) or vector(1',
    "job='a\\'}) or vector(1) or up{b='",
    'job="vllm\\"} or vector(1) or up{x=\\"',
    'job="x" or vector(1)',
    "job=vllm) or vector(1",
    'job="\\`"',
    'job="\\u00e9\\x41\\101"',
    "job=`a\"b'c\\`",
    'job=~"vllm|sglang", namespace!="dev",',
    '{ job = "a" , x !~ "b" }',
]


def _rules(selector: str, tmp_path):
    out = tmp_path / "rules.yml"
    res = run_cli("monitor", "rules", "--selector", selector, "-o", str(out))
    return res, out


@pytest.mark.parametrize("selector", HOSTILE_SELECTORS)
def test_a_selector_cannot_inject_promql(tmp_path, selector):
    """Refused in one line, or written as rules promtool accepts whose expressions hold no PromQL outside
    their string literals but dflash-doctor's own. Before: the first two wrote `… or vector(1) or …` into
    every rule, and promtool accepted them."""
    tally.hostile_input("monitor: hostile selector")
    res, out = _rules(selector, tmp_path)
    if res.returncode == 2:
        _one_line_usage_error(res)
        return
    assert res.returncode == 0, res.stderr
    check = subprocess.run([PROMTOOL, "check", "rules", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    for rule in yaml.safe_load(out.read_text())["groups"][0]["rules"]:
        code = _strip_strings(rule["expr"])
        assert "vector(" not in code and " up{" not in code, rule["expr"]


def test_an_unquoted_value_is_quoted_not_written_as_invalid_promql(tmp_path):
    """`--selector 'job=vllm'`: before, `{job=vllm}` went into every rule (invalid PromQL) with exit 0."""
    tally.hostile_input("monitor: unquoted selector value")
    res, out = _rules("job=vllm", tmp_path)
    assert res.returncode == 0, res.stderr
    check = subprocess.run([PROMTOOL, "check", "rules", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    (tmp_path / "quoted").mkdir()
    res2, out2 = _rules('{job="vllm"}', tmp_path / "quoted")
    assert res2.returncode == 0 and out.read_text() == out2.read_text()


@pytest.mark.parametrize(
    "selector", ['job="a', "{job='a'", "job", "job=", 'a="x" b="y"', '{__name__="up"}', '"__name__"="up"', 'a="\\q"']
)
def test_a_malformed_selector_is_one_line(selector, tmp_path):
    tally.hostile_input("monitor: malformed selector")
    res, _ = _rules(selector, tmp_path)
    _one_line_usage_error(res)
