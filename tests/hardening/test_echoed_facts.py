"""Facts (the engine release, the method, k) come only from the engine's startup lines in their own form, the
live process or the files — never from text inside a request (issue 24): an echoed prompt naming `vLLM API
server version 0.30.0 … eagle3 … k=3` once replaced the real release, method and k, and a 5000-digit version
in one turned a failing gate into exit 3. A disagreement between sources is reported, and a gate fails on it."""

from __future__ import annotations

import json

import pytest

from dflash_doctor.parse import logscan
from dflash_doctor.parse.logscan import ScanPlan
from tests.conftest import FIXTURES
from tests.hardening import tally

LOG = FIXTURES / "logs" / "vllm-0.11.0.log"  # vLLM 0.11.0, dflash, k = 15 (its startup lines)
# a request logger that ends its line with the user's text (the forms anchored at a line's end match there too)
PROMPT = "(APIServer pid=4242) INFO 03-02 08:00:01 [serving_chat.py:41] chat request chatcmpl-9, last message: {}"
ECHOES = {
    "version line": "vLLM API server version 0.30.0",
    "engine line": "Initializing a V1 LLM engine (v0.30.0) with config: model='x', "
    "speculative_config=SpeculativeConfig(method='eagle3', model='y', num_spec_tokens=3)",
    "arguments line": "non-default args: {'model': 'x', 'speculative_config': {'method': 'eagle3', "
    "'num_speculative_tokens': 3}}",
    "logo row": "█▄█▀ █     █     █     █  version 0.30.0",
    "JSON-string startup line": json.dumps({"prompt": "vLLM API server version 0.30.0"}),
}


def _with_echo(tmp_path, echo: str):
    """The fixture log with the echo in its head: after the real startup lines (a later line used to win)."""
    lines = LOG.read_text().splitlines()
    at = max(i for i, ln in enumerate(lines[:40]) if "version" in ln or "args" in ln or "Initializing" in ln) + 1
    lines.insert(at, PROMPT.format(echo))
    p = tmp_path / "served.log"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("plan", [ScanPlan(fast=False), ScanPlan(), ScanPlan(grep_from=0)], ids=str)
@pytest.mark.parametrize("echo", sorted(ECHOES))
def test_an_echoed_startup_line_sets_no_fact(tmp_path, echo, plan):
    tally.hostile_input(f"echoed facts: {echo}")
    st = logscan.scan(str(_with_echo(tmp_path, ECHOES[echo])), plan).startup
    assert (st.engine, st.version, st.method, st.num_speculative_tokens) == ("vllm", "0.11.0", "dflash", 15)


def test_the_report_keeps_the_real_release_and_its_known_issues(cli, tmp_path):
    """End to end: the known issue of the real release (0.11.0) still matches, the echoed one never shows."""
    tally.hostile_input("echoed facts: report")
    p = _with_echo(tmp_path, ECHOES["engine line"] + " " + ECHOES["version line"])
    rep = json.loads(cli("logs", str(p), "--format", "json").stdout)
    st = next(e["value"] for e in rep["evidence"] if e["kind"] == "startup")
    assert (st["version"], st["method"], st["num_speculative_tokens"]) == ("0.11.0", "dflash", 15)
    assert "27077" in json.dumps(rep["findings"])  # the 0.11.0 known issue


def test_a_5000_digit_version_in_an_echoed_prompt_leaves_a_failing_gate_failing(cli, tmp_path):
    tally.hostile_input("echoed facts: 5000-digit version")
    p = _with_echo(tmp_path, "vLLM API server version " + "9" * 5000)
    r = cli("gate", "--log", str(p), "--min-acceptance-length", "8", "--format", "json")
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr[-800:]
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["outcome"] == "fail"


def test_a_5000_digit_version_in_the_engine_s_own_form_is_no_release(tmp_path):
    """Even a whole line in the engine's form names no release of 5000 digits (a release is at most 40
    characters): the real one stays."""
    lines = LOG.read_text().splitlines()
    lines.insert(
        3, "(APIServer pid=4242) INFO 03-02 08:00:00 [api_server.py:1034] vLLM API server version " + "9" * 5000
    )
    p = tmp_path / "long-version.log"
    p.write_text("\n".join(lines) + "\n")
    assert logscan.scan(str(p)).startup.version == "0.11.0"


def test_a_process_whose_startup_lines_disagree_is_reported_and_fails_a_gate(cli, tmp_path):
    """A second, whole startup line of the same process naming another release and k (a prompt logged with
    its newlines, or a forged file): which one is the engine's cannot be told, so it is said, and a gate
    that would pass fails closed."""
    tally.hostile_input("echoed facts: a disagreeing startup line")
    lines = LOG.read_text().splitlines()
    lines.insert(
        5,
        "(APIServer pid=4242) INFO 03-02 08:00:00 [core.py:93] Initializing a V1 LLM engine (v0.30.0) with config: "
        "model='Qwen/Qwen3-8B', speculative_config=SpeculativeConfig(method='eagle3', num_spec_tokens=3)",
    )
    p = tmp_path / "two-releases.log"
    p.write_text("\n".join(lines) + "\n")
    scan = logscan.scan(str(p))
    assert any("0.11.0 and 0.30.0" in m.reason for m in scan.malformed if m.rejected), scan.malformed
    rep = json.loads(cli("logs", str(p), "--format", "json").stdout)
    parse = [f for f in rep["findings"] if f["check"] == "log-parse"]
    assert any("startup lines disagree" in d for f in parse for d in f["details"]), parse
    r = cli("gate", "--log", str(p), "--min-acceptance-length", "1.5", "--format", "json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["outcome"] == "fail"
    integrity = next(t for t in out["thresholds"] if t["name"] == "log-integrity")
    assert integrity["outcome"] == "fail" and "0.30.0" in integrity["message"]


def test_the_log_and_the_engine_flag_disagreeing_is_a_finding(cli):
    rep = json.loads(cli("logs", str(LOG), "--engine", "vllm==0.20.1", "--format", "json").stdout)
    found = [f for f in rep["findings"] if f["check"] == "log-parse" and "disagree" in f["message"]]
    assert found and any("0.11.0" in d and "0.20.1" in d for d in found[0]["details"]), rep["findings"]
