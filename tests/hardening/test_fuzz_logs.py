"""Property tests for the log scanner: whatever the lines, it never raises, what it reports stays
physically possible (0 <= rates <= 1, τ >= 1, counts >= 0) and a broken metrics line is counted as
malformed rather than silently dropped."""

from __future__ import annotations

import json
import math

from hypothesis import example, given
from hypothesis import strategies as st

from dflash_doctor.evidence.serialise import to_jsonable
from dflash_doctor.parse import logscan
from dflash_doctor.parse.logscan import aggregate
from dflash_doctor.textsafe import strip_ansi
from tests.hardening import tally
from tests.hardening.strategies import (
    FORMATS,
    PREFIXES,
    hostile_fields_line,
    mutated_line,
    nasty_text,
    non_default_args,
    valid_line,
)

EPS = 1e-9


def assert_interval_sane(iv) -> None:
    # drafts/drafted/accepted may be None (a format that does not print them), never negative or infinite
    assert iv.drafts is None or (iv.drafts >= 0 and math.isfinite(iv.drafts))
    assert iv.drafted is None or iv.drafted >= 0
    assert iv.accepted is None or iv.accepted >= 0
    assert iv.k is None or iv.k >= 1
    assert all(0.0 <= r <= 1.0 for r in iv.per_position), iv.per_position
    if iv.drafted and iv.accepted is not None and not iv.fmt.startswith("vllm-v0"):
        assert iv.accepted <= iv.drafted, "more tokens accepted than drafted"
    if iv.printed_mean is not None:
        assert iv.printed_mean >= 1.0 - EPS


def assert_summary_sane(s, intervals) -> None:
    json.dumps(to_jsonable(s), allow_nan=False)  # the report's JSON stays valid, whatever the numbers
    if not s.drafts:
        return  # no drafts: τ is undefined and the collectors record "no data" instead (checked below)
    assert s.mean_acceptance_length >= 1.0 - EPS and math.isfinite(s.mean_acceptance_length)
    ks = [iv.k for iv in intervals if iv.drafts]
    if ks and None not in ks:  # k may change between intervals (a restart); τ can never exceed the largest k + 1
        assert s.mean_acceptance_length <= max(ks) + 1 + 1e-6, "τ above k+1 is impossible"
    assert s.drafts >= 0 and s.drafted >= 0 and s.accepted >= 0 and s.intervals >= 0
    assert s.draft_acceptance_rate is None or 0.0 <= s.draft_acceptance_rate <= 1.0 + EPS
    assert all(0.0 <= r <= 1.0 + EPS for r in s.per_position)
    for third in (s.tau_first_third, s.tau_last_third):
        assert third is None or third >= 1.0 - EPS


def _scan(lines):
    scan = logscan.scan(logscan.Lines(lines, "fuzz.log"))
    for iv in scan.intervals:
        assert_interval_sane(iv)
    summary = aggregate(scan.intervals)
    if summary is not None:
        assert_summary_sane(summary, scan.intervals)
    json.dumps(to_jsonable(scan.startup), allow_nan=False)
    return scan, summary


@given(st.lists(st.one_of(st.text(max_size=200), nasty_text), max_size=30))
def test_arbitrary_text_never_raises(lines):
    tally.example("log-lines:arbitrary")
    _scan(lines)


@given(st.lists(st.one_of(mutated_line(), valid_line().map(lambda t: t[2])), min_size=1, max_size=20))
@example(
    [
        "SpecDecoding metrics: Mean acceptance length: .5, Accepted throughput: 0.00 tokens/s, Drafted throughput: "
        "0.10 tokens/s, Accepted: 0 tokens, Drafted: 1 tokens, Per-position acceptance rate: 0.000, Avg Draft "
        "acceptance rate: 0.0%"
    ]
)  # found by the long profile: a printed mean below 1 kept as is
def test_mangled_metrics_lines_keep_invariants_and_are_counted(lines):
    tally.example("log-lines:mutated")
    lines = [line.replace("\n", " ") for line in lines]  # one list item = one line, so line numbers match
    scan, _ = _scan(lines)
    seen = (
        {iv.line_no for iv in scan.intervals}
        | {m.line_no for m in scan.malformed}
        | {m.line_no for m in scan.foreign}
        | {s.line_no for s in scan.salvaged}
    )
    for no, line in enumerate(lines, 1):
        # A line the pre-filter treats as a metrics line must come out as an interval, as malformed, or as
        # reported text that is not the engine's own metrics line (other words before the literal).
        # (an escape sequence inside or glued to the literal — ESC S is one — makes it another line: reported)
        if "SpecDecoding metrics" in line and "SpecDecoding metrics" in strip_ansi(line):
            assert no in seen, f"metrics line {no} vanished: {line[:120]!r}"


@given(st.lists(hostile_fields_line(), min_size=1, max_size=8))
def test_hostile_numbers_in_every_field_are_malformed_not_fatal(lines):
    tally.example("log-lines:hostile-numbers")
    scan, _ = _scan(lines)
    assert len(scan.intervals) + len(scan.malformed) == len(lines)


@given(st.lists(valid_line(formats=("vllm-v1-0.10.2",)), min_size=1, max_size=12))
def test_well_formed_lines_aggregate_to_the_counts_they_print(items):
    tally.example("log-lines:vllm-v1-0.10.2")
    lines = [line for _, _, line in items]
    scan, summary = _scan(lines)
    assert len(scan.intervals) == len(lines) and not scan.malformed
    drafts = sum(d for _, (_, d, _), _ in items)
    accepted = sum(sum(c) for _, (_, _, c), _ in items)
    if drafts == 0:
        assert summary is None
        return
    assert summary.accepted == accepted
    assert abs(summary.mean_acceptance_length - (1 + accepted / drafts)) < 0.02


@given(st.lists(valid_line(), min_size=1, max_size=12))
def test_lines_of_every_documented_format_keep_invariants(items):
    tally.example("log-lines:all-formats")
    _scan([line for _, _, line in items])


@given(non_default_args(), st.sampled_from(PREFIXES))
def test_non_default_args_repr_never_raises_and_is_redacted(text, prefix):
    tally.example("non-default-args")
    scan, _ = _scan([prefix + "non-default args: " + text])
    assert isinstance(scan.startup.args, dict)
    k = scan.startup.num_speculative_tokens
    assert k is None or isinstance(k, int)


@given(st.lists(st.sampled_from(sorted(FORMATS)), min_size=1, max_size=3), st.integers(1, 3000))
def test_a_single_huge_line_is_handled(fmts, n):
    tally.example("log-lines:huge")
    line = "SpecDecoding metrics: " + "Per-position acceptance rate: " + ", ".join(["0.5"] * n) + "x" * n
    _scan([line, "non-default args: {'model': '" + "a" * (n * 50) + "'}"])
