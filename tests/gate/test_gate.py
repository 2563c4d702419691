"""`dflash-doctor gate`: exit codes, JUnit, GitHub Actions annotations and step summary, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import junitparser
import pytest
import xmlschema
from hypothesis import given, settings
from hypothesis import strategies as st

from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.render.github import annotations
from dflash_doctor.services.gate import GateResult, Outcome, PositionRate, ThresholdResult, Thresholds, evaluate

SCEN = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"
SEED = Path(__file__).resolve().parents[2] / "fixtures" / "seed" / "vllm-0.20.1.log"
HEALTHY = SCEN / "healthy" / "vllm.log"  # τ ≈ 6.40, position 1 ≈ 0.85
OFFSET = SCEN / "layer-offset" / "vllm.log"  # τ ≈ 5.4
DECIDED = SCEN / "few-drafts-decisive" / "vllm.log"  # ~120 drafts, position 1 at 0.29, nothing after
FEW = SCEN / "insufficient-data" / "vllm.log"  # ~65 drafts at τ 3.1
NO_SPEC = SCEN / "launch-config" / "vllm.log"  # no SpecDecoding lines at all
SCHEMA = xmlschema.XMLSchema(str(Path(__file__).with_name("junit.xsd")))


def _cases(path: Path) -> dict[str, junitparser.TestCase]:
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    return {c.name: c for s in suites for c in s}


def _props(case: junitparser.TestCase) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in case._elem.iter("property")}


def test_gate_passes_on_a_healthy_log_and_junit_carries_the_figures(cli, tmp_path):
    junit = tmp_path / "gate.xml"
    r = cli(
        "gate",
        "--log",
        str(HEALTHY),
        "--min-acceptance-length",
        "5",
        "--min-position-rate",
        "1:0.8",
        "--junit",
        str(junit),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "passed" in r.stdout
    SCHEMA.validate(str(junit))
    cases = _cases(junit)
    # (no min-drafts case: there is no draft floor unless the user sets one)
    assert set(cases) == {"min-acceptance-length", "min-position-rate[1]"}
    assert all(c.is_passed for c in cases.values())
    tau = float(_props(cases["min-acceptance-length"])["measured"])
    assert 6.2 < tau < 6.6
    assert _props(cases["min-acceptance-length"])["threshold"] == "5"
    assert float(_props(cases["min-position-rate[1]"])["rate"]) > 0.8


def test_gate_fails_below_threshold_with_one_failure_per_threshold(cli, tmp_path):
    junit = tmp_path / "gate.xml"
    r = cli(
        "gate",
        "--log",
        str(SEED),
        "--min-acceptance-length",
        "3",
        "--min-position-rate",
        "1:0.1",
        "--min-position-rate",
        "2:0.1",
        "--junit",
        str(junit),
    )
    assert r.returncode == 1, r.stdout + r.stderr
    SCHEMA.validate(str(junit))
    cases = _cases(junit)
    assert cases["min-acceptance-length"].is_failure
    assert cases["min-position-rate[1]"].is_passed  # 0.166 ≥ 0.1
    assert cases["min-position-rate[2]"].is_failure  # 0.017 < 0.1
    failure = cases["min-acceptance-length"].result[0]
    assert "1.18 [1.18–1.19, 95%] < 3" in failure.message  # the whole interval below the threshold
    assert float(_props(cases["min-acceptance-length"])["measured"]) == pytest.approx(1.18, abs=0.01)
    suite = next(iter(junitparser.JUnitXml.fromfile(str(junit))))
    assert suite.failures == 2 and suite.tests == 3
    # The failing gate names the most likely causes from the same evidence.
    assert "causes, by what fixing them buys" in r.stdout and "fix plan: upgrade vLLM" in r.stdout


@pytest.mark.parametrize(
    "log", [FEW, NO_SPEC, Path("/nonexistent/server.log")], ids=["few-drafts", "no-spec-lines", "missing-file"]
)
def test_gate_reports_no_data_with_exit_3(cli, tmp_path, log):
    junit = tmp_path / "gate.xml"
    # FEW: ~65 drafts at τ 3.1, whose 95 % interval (about 2.3–3.9) straddles 3
    r = cli("gate", "--log", str(log), "--min-acceptance-length", "3", "--junit", str(junit))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "no data" in r.stdout
    SCHEMA.validate(str(junit))
    cases = _cases(junit)
    assert cases["min-acceptance-length"].is_skipped


def test_counts_decide_not_a_cutoff_and_min_drafts_is_an_explicit_floor(cli):
    # ~65 drafts at τ 3.1: the interval is wholly above 1.1 (pass) and straddles 3 (no data) …
    assert cli("gate", "--log", str(FEW), "--min-acceptance-length", "1.1").returncode == 0
    assert cli("gate", "--log", str(FEW), "--min-acceptance-length", "3").returncode == 3
    # … ~120 drafts with position 1 at 0.29 and nothing after: τ 1.29, decisively below 3 (fail) …
    assert cli("gate", "--log", str(DECIDED), "--min-acceptance-length", "3").returncode == 1
    # … unless the user sets a floor of drafts
    assert cli("gate", "--log", str(DECIDED), "--min-acceptance-length", "3", "--min-drafts", "200").returncode == 3


def test_regression_against_a_saved_report(cli, tmp_path):
    base = tmp_path / "baseline.json"
    r = cli("diagnose", "--log", str(HEALTHY), "--format", "json", "--output", str(base))
    assert r.returncode == 0, r.stderr
    # layer-offset log: τ ≈ 5.4 vs 6.4 ≈ 16 % lower
    fail = cli("gate", "--log", str(OFFSET), "--max-regression", "5", "--baseline", str(base), "--format", "json")
    assert fail.returncode == 1, fail.stderr
    data = json.loads(fail.stdout)
    reg = next(t for t in data["thresholds"] if t["name"] == "max-regression")
    assert reg["outcome"] == "fail" and 10 < reg["measured"] < 22
    assert reg["properties"]["baseline_mean_acceptance_length"] == pytest.approx(6.40, abs=0.05)
    ok = cli("gate", "--log", str(OFFSET), "--max-regression", "25", "--baseline", str(base))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # A saved gate result works as a baseline too.
    saved = tmp_path / "gate.json"
    saved.write_text(fail.stdout)
    again = cli("gate", "--log", str(OFFSET), "--max-regression", "5", "--baseline", str(saved))
    assert again.returncode == 0, again.stdout + again.stderr  # same log: 0 % regression
    # 1 % of τ is within the interval of ~29k drafts: the counts cannot decide it (exit 3, not a pass)
    tight = cli("gate", "--log", str(OFFSET), "--max-regression", "1", "--baseline", str(saved))
    assert tight.returncode == 3, tight.stdout + tight.stderr


def test_github_actions_annotations_and_step_summary(cli, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step output\n")
    r = cli(
        "gate",
        "--log",
        str(SEED),
        "--min-acceptance-length",
        "3",
        "--min-position-rate",
        "1:0.1",
        env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert (
        "::error title=dflash-doctor gate%3A min-acceptance-length::mean acceptance length 1.18 [1.18–1.19, 95%25] < 3"
    ) in lines
    assert any(
        x.startswith("::notice title=dflash-doctor gate%3A min-position-rate[1]::position 1 acceptance rate 0.166 [")
        and x.endswith("≥ 0.1")
        for x in lines
    )
    assert any(ln.startswith("::notice title=dflash-doctor%3A most likely cause::") for ln in lines)
    text = summary.read_text()
    assert text.startswith("earlier step output\n")  # appended, never overwritten
    assert "### dflash-doctor gate: ❌ FAILED" in text
    assert "| ❌ | `min-acceptance-length` | 1.18 | 3 |" in text


def test_no_annotations_outside_github_actions(cli):
    r = cli("gate", "--log", str(SEED), "--min-acceptance-length", "3", env={"GITHUB_ACTIONS": ""})
    assert "::error" not in r.stdout and "::error" not in r.stderr


def test_json_output_stays_parseable_in_github_actions(cli, tmp_path):
    r = cli(
        "gate",
        "--log",
        str(SEED),
        "--min-acceptance-length",
        "3",
        "--format",
        "json",
        env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")},
    )
    data = json.loads(r.stdout)
    assert data["schema"] == "dflash-doctor/gate@1" and data["outcome"] == "fail" and data["exit_code"] == 1
    assert data["diagnosis"]["verdict"] == "problem"
    assert "::error" in r.stderr


def test_annotation_text_cannot_inject_workflow_commands():
    evil = ThresholdResult("min-acceptance-length", Outcome.FAIL, "50% lower\n::error::injected", 1.0, 2.0)
    out = annotations(GateResult(Outcome.FAIL, (evil,), "x", {}))
    assert out.count("\n") == 1
    assert "50%25 lower%0A::error::injected" in out


def test_probe_result_as_source(cli, tmp_path):
    saved = tmp_path / "probe.json"
    assert cli("diagnose", "--log", str(HEALTHY), "-f", "json", "-o", str(saved)).returncode == 0
    r = cli("gate", "--probe", str(saved), "--min-acceptance-length", "6")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--log", str(SEED)],  # no threshold
        ["--log", str(SEED), "--min-position-rate", "one:0.5"],
        ["--log", str(SEED), "--min-position-rate", "1:1.5"],
        ["--log", str(SEED), "--max-regression", "5"],  # no --baseline
        ["--min-acceptance-length", "2"],  # no source
        ["--log", str(SEED), "--probe", "x.json", "--min-acceptance-length", "2"],  # two sources
    ],
    ids=["no-threshold", "bad-pos", "bad-rate", "no-baseline", "no-source", "two-sources"],
)
def test_usage_errors_exit_2_with_one_line(cli, args):
    r = cli("gate", *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and r.stderr.startswith("error:")


def test_bad_baseline_file_is_a_usage_error(cli, tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text("{not json")
    r = cli("gate", "--log", str(SEED), "--max-regression", "5", "--baseline", str(bad))
    assert r.returncode == 2 and "not JSON" in r.stderr


def test_unreachable_metrics_endpoint_is_no_data(cli):
    r = cli("gate", "--metrics", "http://127.0.0.1:9/metrics", "--window", "1s", "--min-acceptance-length", "2")
    assert r.returncode == 3, r.stdout + r.stderr
    assert "no data" in r.stdout


@settings(max_examples=200, deadline=None)
@given(
    rates=st.lists(st.floats(0, 1), min_size=1, max_size=16).map(lambda r: sorted(r, reverse=True)),
    drafts=st.floats(0, 1e6),
    x=st.floats(1, 17),
    pos=st.integers(1, 16),
    rate=st.floats(0, 1),
    min_drafts=st.integers(1, 1000),
)
def test_gate_outcome_is_exactly_the_thresholds(rates, drafts, x, pos, rate, min_drafts):
    """Pass only when every threshold's interval is at or above it, fail when one lies wholly below, no data when
    one straddles — and never pass a point estimate below a threshold, never fail one above it."""
    from dflash_doctor import stats

    tau = 1 + sum(rates)
    acc = AcceptanceSummary(
        mean_acceptance_length=tau,
        per_position=tuple(rates),
        drafts=drafts,
        drafted=0,
        accepted=0,
        k=len(rates),
        draft_acceptance_rate=None,
        intervals=1,
        formats=("t",),
    )
    res = evaluate(
        acc,
        Thresholds(min_acceptance_length=x, min_position_rates=(PositionRate(pos, rate),), min_drafts=min_drafts),
        "t",
    )
    if drafts < min_drafts:
        assert res.outcome == Outcome.NO_DATA and int(res.exit_code) == 3
        return
    measured = rates[pos - 1] if pos <= len(rates) else 0.0
    tau_iv = stats.tau_interval(drafts, (tau - 1) * drafts, tuple(rates), len(rates))
    pos_iv = stats.wilson(measured * drafts, drafts) if pos <= len(rates) else stats.Interval(0.0, 0.0, 0.0, drafts)

    def judged(iv, t):
        if iv.estimate != iv.estimate or iv.n == 0:
            return Outcome.NO_DATA
        return Outcome.FAIL if iv.high < t else Outcome.PASS if iv.low >= t else Outcome.NO_DATA

    each = {
        judged(tau_iv, x),
        judged(pos_iv, rate) if pos <= len(rates) else (Outcome.PASS if rate <= 0.0 else Outcome.FAIL),
    }
    expected = Outcome.FAIL if Outcome.FAIL in each else Outcome.NO_DATA if Outcome.NO_DATA in each else Outcome.PASS
    assert res.outcome == expected
    assert int(res.exit_code) == {Outcome.PASS: 0, Outcome.FAIL: 1, Outcome.NO_DATA: 3}[expected]
    if res.outcome == Outcome.PASS:
        assert tau >= x and measured >= rate
    if res.outcome == Outcome.FAIL:
        assert tau < x or measured < rate
