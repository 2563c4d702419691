"""The gate reads saved reports (--probe, --baseline) that may be anything, and writes JUnit XML and
GitHub workflow commands that CI systems act on. Saved files of any shape are a usage error or a
result; a threshold never passes on a number that is not one; no JUnit/annotation output can be
broken out of, and no secret reaches any of them."""

from __future__ import annotations

import json
import math
import os
import tempfile
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from dflash_doctor.errors import UsageError
from dflash_doctor.render.github import annotations
from dflash_doctor.render.junit import render_junit
from dflash_doctor.services.gate import Outcome, PositionRate, Thresholds, evaluate, load_baseline_tau
from tests.conftest import run_cli
from tests.hardening import tally
from tests.hardening.hostile import HOSTILE_STRINGS, terminal_violations
from tests.hardening.strategies import json_value, nasty_text
from tests.hardening.test_secrets import ALL_SECRETS, CORPUS, leaks

number = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10**6), json_value)
acceptance_block = st.fixed_dictionaries(
    {},
    optional={
        "mean_acceptance_length": number,
        "drafts": number,
        "per_position": st.one_of(st.lists(number, max_size=6), json_value),
        "k": number,
        "drafted": number,
        "accepted": number,
        "intervals": number,
        "formats": json_value,
        "min_drafts": number,
        "draft_acceptance_rate": number,
    },
)
saved = st.one_of(
    st.fixed_dictionaries(
        {"schema": st.sampled_from(["dflash-doctor/report@1", "dflash-doctor/gate@1", "x"])},
        optional={
            "acceptance": st.one_of(acceptance_block, json_value),
            "measured": st.one_of(acceptance_block, json_value),
        },
    ),
    json_value,
)
RAW = [
    b"",
    b"{",
    b"\xff\xfe",
    b"[" * 50000 + b"]" * 50000,
    b'{"acceptance": {"mean_acceptance_length": ' + b"9" * 5000 + b"}}",
    b'{"schema": "dflash-doctor/report@1", "acceptance": {"mean_acceptance_length": NaN, "drafts": Infinity}}',
]


def _write(data) -> str:
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data if isinstance(data, bytes) else json.dumps(data).encode())
    return path


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


@given(st.one_of(saved, st.sampled_from(RAW)), st.floats(1.0, 16.0), st.floats(0.0, 1.0))
def test_saved_reports_of_any_shape_gate_honestly_or_are_a_usage_error(data, min_tau, min_rate):
    from dflash_doctor.cli.gate_cmd import _acceptance_from_saved

    tally.example("gate:saved-report")
    path = _write(data)
    try:
        try:
            acc, _ = _acceptance_from_saved(path)
        except UsageError as exc:
            assert exc.message and "\n" not in exc.message
            acc = None
        th = Thresholds(min_acceptance_length=min_tau, min_position_rates=(PositionRate(1, min_rate),))
        result = evaluate(acc, th, "saved")
        json.dumps(result.to_dict(), allow_nan=False)
        ET.fromstring(render_junit(result).split("\n", 1)[1])
        for r in result.results:
            # A threshold never passes on a value that is not a finite number.
            if r.outcome == Outcome.PASS and r.name != "min-drafts":
                assert _finite(r.measured), (r.name, r.measured)
        try:
            base, _ = load_baseline_tau(path)
            assert _finite(base) and base >= 1.0
        except UsageError:
            pass
    finally:
        os.unlink(path)


@given(nasty_text)
def test_a_hostile_source_name_cannot_inject_workflow_commands_or_break_junit(text):
    tally.example("gate:junit+annotations")
    tally.hostile_input("gate outputs (junit, annotations)")
    from dflash_doctor.evidence.acceptance import AcceptanceSummary

    acc = AcceptanceSummary(1.5, (0.3,), 1000.0, 1000, 500, 1, 0.5, 5, ("x",), notes=(text,))
    result = evaluate(acc, Thresholds(min_acceptance_length=2.0), f"log {text}")
    for line in annotations(result).splitlines():
        assert line.startswith("::") and line.count("::") == 2, line  # one command per line, no smuggled ones
    xml = render_junit(result)
    ET.fromstring(xml.split("\n", 1)[1])
    assert not terminal_violations(xml, False)


def test_no_secret_or_escape_reaches_gate_outputs(tmp_path):
    log = tmp_path / "gate.log"
    metrics = (
        "INFO 05-14 09:13:47 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 1.19, Accepted "
        "throughput: 33.70 tokens/s, Drafted throughput: 2626.50 tokens/s, Accepted: 337 tokens, Drafted: "
        "26265 tokens, Per-position acceptance rate: 0.172, 0.020, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, "
        "0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 1.3%\n"
    )
    lines = [f"INFO version x {ctx}\n" for ctx, _ in CORPUS] + [
        f"SpecDecoding metrics: bad {ctx} {h}\n" for ctx, _ in CORPUS for h in HOSTILE_STRINGS[:3]
    ]
    log.write_text("".join(lines) + metrics * 20)
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    outputs = []
    for fmt in ("terminal", "json", "markdown"):
        res = run_cli(
            "gate",
            "--log",
            str(log),
            "--min-acceptance-length",
            "2",
            "--min-position-rate",
            "1:0.5",
            "--junit",
            str(junit),
            "--format",
            fmt,
            env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)},
        )
        assert res.returncode == 1, res.stderr
        outputs += [res.stdout, res.stderr, junit.read_text()]
    outputs.append(summary.read_text())
    text = "\n".join(outputs)
    leaked = leaks(text)
    tally.secrets("gate (text/json/md, junit, annotations, step summary)", len(ALL_SECRETS), len(leaked))
    assert not leaked
    assert not terminal_violations(text, False)
