"""Untrusted text never controls the terminal: hostile strings placed in every field a report can
carry (log lines, config values, model cards, host output, check messages, evidence summaries,
collection errors) come out of the terminal, Markdown and JSON renderers inert."""

from __future__ import annotations

import json

import pytest
from hypothesis import given

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Source, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.evidence.payloads import GpuInventory, HostSummary
from dflash_doctor.render import Format, render
from dflash_doctor.services.doctor import build_report
from tests.conftest import FIXTURES, run_cli
from tests.hardening import tally
from tests.hardening.hostile import HOSTILE_STRINGS, json_violations, markdown_violations, terminal_violations
from tests.hardening.strategies import nasty_text


class EchoCheck(Check):
    """A check that repeats untrusted text everywhere a finding can hold it (as a plugin might)."""

    id = "echo"
    area = "host"
    title = "echo"
    observations = ("card:under-training", "pairing:mismatch")

    def __init__(self, text: str):
        self.text = text

    def run(self, evidence):
        t = self.text
        return [
            self.finding(
                Status.FAIL,
                f"saw {t}",
                details=(t, f"detail {t}"),
                remedy=f"fix {t}",
                observations=(Observation("card:under-training", f"card says {t}"), Observation("pairing:mismatch", t)),
            )
        ]


class Crasher(Check):
    id = "crasher"
    area = "host"
    title = "crasher"

    def __init__(self, text: str):
        self.text = text

    def run(self, evidence):
        raise RuntimeError(self.text)


def hostile_report(text: str):
    ev = EvidenceSet(label=f"host {text}")
    ev.add(
        f"uname {text}",
        Source("command", f"uname -a {text}", host=text),
        HostSummary(host=text, hostname=text, log=text, metrics=text),
    )
    ev.could_not_collect(f"log {text}", f"permission denied: {text}", AcceptanceSummary)
    ev.missing(GpuInventory, f"nvidia-smi said {text}")
    ev.notes.append(f"note {text}")
    report, _ = build_report(ev, checks=[EchoCheck(text), Crasher(text)])
    return report


def _assert_inert(report) -> None:
    for color in (False, True):
        out = render(report, Format.TERMINAL, color=color)
        assert not terminal_violations(out, color), terminal_violations(out, color)
        assert "\n[✓] spoofed-check" not in out
    md = render(report, Format.MARKDOWN)
    assert not markdown_violations(md), markdown_violations(md)
    js = render(report, Format.JSON)
    assert not json_violations(js), json_violations(js)


@pytest.mark.parametrize("text", HOSTILE_STRINGS, ids=range(len(HOSTILE_STRINGS)))
def test_hostile_text_in_every_report_field_is_inert_in_every_format(text):
    tally.hostile_input("report-fields x3 formats")
    report = hostile_report(text)
    _assert_inert(report)
    # JSON keeps the data faithfully (escaped, not lost): the check's message round-trips.
    data = json.loads(render(report, Format.JSON))
    echo = next(f for f in data["findings"] if f["check"] == "echo")
    assert echo["message"] == f"saw {text}" or "REDACTED" in echo["message"]


@given(nasty_text)
def test_generated_hostile_text_is_inert_in_every_format(text):
    tally.example("renderers:hostile-text")
    tally.hostile_input("generated report text")
    _assert_inert(hostile_report(text))


def _hostile_files(tmp_path, text: str):
    log = tmp_path / "hostile.log"
    metrics = (
        "INFO 05-14 09:13:47 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 1.19, Accepted "
        "throughput: 33.70 tokens/s, Drafted throughput: 2626.50 tokens/s, Accepted: 337 tokens, Drafted: "
        "26265 tokens, Per-position acceptance rate: 0.172, 0.020, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, "
        "0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 1.3%\n"
    )
    log.write_text(
        f"INFO vLLM API server version 0.20.1{text}\n"
        f"INFO non-default args: {{'model': {text!r}, 'speculative_config': {{'method': {text!r}, 'model': "
        f"{text!r}}}}}\n"
        f"INFO Resolved architecture: X{text}\n" + metrics * 3 + f"INFO SpecDecoding metrics: broken {text}\n",
        errors="surrogatepass",
    )
    drafter = tmp_path / "drafter"
    drafter.mkdir()
    cfg = json.loads((FIXTURES / "models/Qwen3.6-27B-DFlash/config.json").read_text())
    cfg["architectures"] = ["DFlashDraftModel", text]
    cfg["model_type"] = text
    cfg["layer_types"] = [text] * 5
    (drafter / "config.json").write_text(json.dumps(cfg))
    (drafter / "README.md").write_text(f"# card\nThis drafter is still under training {text}\n", errors="surrogatepass")
    return log, drafter


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "json"])
def test_hostile_log_and_config_through_the_cli(tmp_path, fmt):
    text = "".join(s for s in HOSTILE_STRINGS if "\n" not in s and "\r" not in s)
    log, drafter = _hostile_files(tmp_path, text)
    res = run_cli(
        "diagnose",
        "--log",
        str(log),
        "--drafter",
        str(drafter),
        "--target",
        str(FIXTURES / "models/Qwen3.6-27B"),
        "--engine",
        "vllm==0.20.1",
        "--format",
        fmt,
        env={"NO_COLOR": "", "FORCE_COLOR": "1"},
    )
    tally.hostile_input(f"cli diagnose ({fmt})", len(HOSTILE_STRINGS))
    assert res.returncode in (0, 1, 3), res.stderr
    assert "Traceback" not in res.stderr
    check = {
        "terminal": lambda s: terminal_violations(s, True),
        "markdown": markdown_violations,
        "json": json_violations,
    }[fmt]
    assert not check(res.stdout), check(res.stdout)
    assert not terminal_violations(res.stderr, False)


def test_hostile_host_output_through_check_host_is_inert(tmp_path):
    """A host's log (read by the collector's remote scripts) full of escapes, markup and bidi."""
    from dflash_doctor.collect.host import HostOptions, collect_host
    from dflash_doctor.hosts.local import LocalHost

    text = "".join(s for s in HOSTILE_STRINGS if "\n" not in s and "\r" not in s)
    log, _ = _hostile_files(tmp_path, text)
    ev = collect_host(LocalHost(), HostOptions(log=str(log), timeout=20))
    report, _ = build_report(ev)
    tally.hostile_input("check host: hostile log through the collector", len(HOSTILE_STRINGS))
    _assert_inert(report)
