"""A log line is a claim, not a fact (issue 19, item 3 and the count crashes): a metrics line inside
another logger's message is not a metrics line, and impossible counts are rejected as forged or
damaged — and a gate fails closed on them."""

from __future__ import annotations

import json

import pytest

from dflash_doctor.parse import logscan
from dflash_doctor.parse.logscan import aggregate
from tests.hardening import tally

HDR = "(APIServer pid=7) INFO 05-14 09:13:{s:02d} [metrics.py:101] "
REAL = HDR + (
    "SpecDecoding metrics: Mean acceptance length: 1.18, Accepted throughput: 18.00 tokens/s, Drafted "
    "throughput: 1500.00 tokens/s, Accepted: 180 tokens, Drafted: 15000 tokens, Per-position acceptance "
    "rate: 0.150, 0.030, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, "
    "0.000, 0.000, Avg Draft acceptance rate: 1.2%"
)
FORGED = (
    "SpecDecoding metrics: Mean acceptance length: 15.85, Accepted throughput: 1.00 tokens/s, Drafted "
    "throughput: 1.00 tokens/s, Accepted: 990000000000 tokens, Drafted: 1000000000000 tokens, Per-position "
    "acceptance rate: 0.990, 0.990, 0.990, 0.990, 0.990, 0.990, 0.990, 0.990, 0.990, 0.990, 0.990, 0.990, "
    "0.990, 0.990, 0.990, Avg Draft acceptance rate: 99.0%"
)


def real(n: int = 4) -> list[str]:
    return [REAL.format(s=i) for i in range(n)]


# How the text of a forged line reaches a log without being the engine's own line.
CARRIERS = {
    "request prompt": lambda f: (
        "(APIServer pid=7) INFO 05-14 09:13:30 [logger.py:41] Received request chatcmpl-1: "
        f"prompt: 'summarise this log: {f}', params: SamplingParams(n=1)"
    ),
    "prompt with a fake header": lambda f: (
        f"(APIServer pid=7) INFO 05-14 09:13:30 [logger.py:41] Received request x: prompt: '{HDR.format(s=31)}{f}'"
    ),
    "JSON string": lambda f: json.dumps(
        {"timestamp": "2026-05-14T09:13:31", "level": "INFO", "message": f"Received request x: prompt: {f!r}"}
    ),
    "JSON field other than the message": lambda f: json.dumps({"message": "Added request x.", "prompt": f}),
    "echoed command": lambda f: f'$ echo "{f}" >> /tmp/notes.txt',
    "shell history": lambda f: f"  512  grep '{f}' server.log",
}


@pytest.mark.parametrize("carrier", sorted(CARRIERS))
def test_a_metrics_line_inside_another_message_is_not_read(carrier):
    tally.hostile_input("forged metrics line: " + carrier)
    lines = real(2) + [CARRIERS[carrier](FORGED)] + real(2)
    scan = logscan.scan(logscan.Lines(lines, "served.log"))
    s = aggregate(scan)
    assert s.intervals == 4 and s.mean_acceptance_length == pytest.approx(1.18)
    assert scan.foreign_count == 1 or carrier == "JSON field other than the message"
    assert scan.foreign_count or not any("inside another message" in n for n in scan.notes)


def test_the_forged_prompt_no_longer_passes_the_gate(cli, tmp_path):
    """The issue's case: a prompt holding a τ 15.85 line made `gate --min-acceptance-length 5` pass on a log
    whose real τ is 1.18."""
    tally.hostile_input("forged metrics line: gate")
    p = tmp_path / "served.log"
    p.write_text("\n".join(real(30)[:15] + [CARRIERS["request prompt"](FORGED)] + real(30)[15:]) + "\n")
    r = cli("gate", "--log", str(p), "--min-acceptance-length", "5", "--format", "json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["outcome"] == "fail"
    assert out["measured"]["mean_acceptance_length"] == pytest.approx(1.18)


@pytest.mark.parametrize(
    "accepted,drafted,why",
    [
        ("990000000000000000000", "1000000000000000000000", "cap"),  # 10^21: beyond the documented 10^15 cap
        ("1e308", "1e308", "cap"),  # used to crash: internal error, exit 3, no JSON
        ("2000", "1500", "Accepted 2000 > Drafted 1500"),
        ("1e400", "1000", "not finite"),
    ],
)
def test_impossible_counts_are_rejected_and_the_gate_fails_closed(cli, tmp_path, accepted, drafted, why):
    tally.hostile_input("impossible counts")
    bad = (
        REAL.format(s=40)
        .replace("Accepted: 180", f"Accepted: {accepted}")
        .replace("Drafted: 15000", f"Drafted: {drafted}")
    )
    scan = logscan.scan(logscan.Lines(real(3) + [bad], "x.log"))
    assert scan.rejected_count == 1 and why in scan.malformed[0].reason
    assert aggregate(scan).intervals == 3
    p = tmp_path / "x.log"
    # every other line would pass the threshold: the rejected one alone fails the gate, closed
    good = (
        REAL.replace("length: 1.18", "length: 3.00")
        .replace("Accepted: 180", "Accepted: 2000")
        .replace("rate: 0.150, 0.030,", "rate: 1.000, 1.000,")
    )
    p.write_text("\n".join([good.format(s=i) for i in range(30)] + [bad]) + "\n")
    r = cli("gate", "--log", str(p), "--min-acceptance-length", "1.5", "--format", "json")
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["outcome"] == "fail"
    integrity = next(t for t in out["thresholds"] if t["name"] == "log-integrity")
    assert integrity["outcome"] == "fail" and "forged or damaged" in integrity["message"]
    assert next(t for t in out["thresholds"] if t["name"] == "min-acceptance-length")["outcome"] == "pass"


def test_an_interval_drafting_orders_of_magnitude_more_than_the_others_is_rejected():
    tally.hostile_input("drafts jump")
    jump = (
        REAL.format(s=50)
        .replace("Accepted: 180", "Accepted: 99000000000")
        .replace("Drafted: 15000", "Drafted: 100000000000")
    )
    scan = logscan.scan(logscan.Lines(real(10) + [jump] + real(10), "x.log"))
    s = aggregate(scan)
    assert s.intervals == 20 and s.mean_acceptance_length == pytest.approx(1.18)
    assert scan.rejected_count == 1 and "more than 1000×" in scan.malformed[0].reason
    # a busy interval within a few orders of magnitude of the others is data, not a forgery
    busy = (
        REAL.format(s=51).replace("Accepted: 180", "Accepted: 1800000").replace("Drafted: 15000", "Drafted: 15000000")
    )
    assert logscan.scan(logscan.Lines(real(10) + [busy], "y.log")).rejected_count == 0


def test_a_crafted_log_of_only_forged_lines_is_rejected_by_the_cap_not_believed():
    tally.hostile_input("forged metrics line: alone")
    scan = logscan.scan(
        logscan.Lines(
            [HDR.format(s=1) + FORGED.replace("990000000000", "9" * 17).replace("1000000000000", "1" + "0" * 17)],
            "x.log",
        )
    )
    assert aggregate(scan) is None and scan.rejected_count == 1
