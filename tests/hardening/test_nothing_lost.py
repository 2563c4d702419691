"""Nothing lost: a check that crashes (or misbehaves) becomes a could-not-check finding carrying the
error and the rest of the report still comes out; `--format json` is valid JSON in every failure
mode we can produce; a usage error is one line on stderr with nothing half-written on stdout."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from dflash_doctor.check import Check, run_checks
from dflash_doctor.evidence import EvidenceSet, Finding, Source, Status
from dflash_doctor.evidence.payloads import HostSummary, ProbeResult
from dflash_doctor.render import Format, render
from dflash_doctor.services.doctor import build_report
from tests.conftest import FIXTURES, run_cli
from tests.hardening import tally

SEED_LOG = FIXTURES / "seed/vllm-0.20.1.log"
DRAFTER = FIXTURES / "models/Qwen3.6-27B-DFlash"
TARGET = FIXTURES / "models/Qwen3.6-27B"


class Good(Check):
    id, area, title = "good", "host", "good"

    def run(self, evidence):
        return [self.finding(Status.OK, "fine")]


def _misbehaving():
    class Raises(Check):
        id, area, title = "raises", "host", "raises"

        def run(self, evidence):
            raise KeyError("layer_types")

    class Exits(Check):
        id, area, title = "exits", "host", "exits"

        def run(self, evidence):
            raise SystemExit(4)  # a plugin calling sys.exit() must not end the whole diagnosis

    class Recurses(Check):
        id, area, title = "recurses", "host", "recurses"

        def run(self, evidence):
            return self.run(evidence)

    class ReturnsNone(Check):
        id, area, title = "returns-none", "host", "returns none"

        def run(self, evidence):
            return None

    class ReturnsJunk(Check):
        id, area, title = "returns-junk", "host", "returns junk"

        def run(self, evidence):
            return ["not a finding", 42]

    class Empty(Check):
        id, area, title = "empty", "host", "empty"

        def run(self, evidence):
            return []

    class NeedsProbe(Check):
        id, area, title = "needs-probe", "probe", "needs a probe"
        needs = (ProbeResult,)

        def run(self, evidence):
            raise AssertionError("never called without its evidence")

    return [Raises(), Exits(), Recurses(), ReturnsNone(), ReturnsJunk(), Empty(), NeedsProbe()]


def test_every_misbehaving_check_becomes_could_not_check_with_its_reason():
    ev = EvidenceSet("local")
    ev.missing(ProbeResult, "no probe was run")
    bad = _misbehaving()
    findings = run_checks([Good(), *bad], ev)
    tally.fault("checks: misbehaving checks", len(bad))
    by = {f.check_id: f for f in findings}
    assert by["good"].status == Status.OK
    assert all(isinstance(f, Finding) for f in findings)
    for c in bad:
        assert by[c.id].status == Status.COULD_NOT_CHECK, (c.id, by[c.id])
    assert "KeyError" in by["raises"].message and "layer_types" in by["raises"].message
    assert "SystemExit" in by["exits"].message
    assert "RecursionError" in by["recurses"].message
    assert "no probe was run" in by["needs-probe"].message
    tally.survived("checks: misbehaving checks", len(bad))


def test_a_crashing_check_leaves_a_complete_report_in_every_format():
    ev = EvidenceSet("local")
    ev.add("linux", Source("command", "uname"), HostSummary(host="linux"))
    report, _ = build_report(ev, checks=[Good(), *_misbehaving()])
    for fmt in Format:
        out = render(report, fmt)
        assert "raises" in out and "could not check" in out.lower().replace("could-not-check", "could not check")
    data = json.loads(render(report, Format.JSON))
    assert {f["check"] for f in data["findings"]} >= {"good", "raises", "exits", "returns-junk"}


def test_a_check_that_crashes_inside_the_real_pipeline(monkeypatch):
    # Make one built-in check crash: the CLI still prints the full JSON report with the others.
    from dflash_doctor import registry
    from dflash_doctor.services import doctor

    real = registry.load_checks

    def load():
        reg = real()
        victim = reg.checks[0]
        victim.run = lambda evidence: (_ for _ in ()).throw(ZeroDivisionError("boom"))
        return reg

    monkeypatch.setattr(doctor, "load_checks", load)
    from dflash_doctor.collect.inputs import FileInputs, gather_files

    report, _ = doctor.build_report(
        gather_files(FileInputs(logs=[str(SEED_LOG)], drafter=str(DRAFTER), target=str(TARGET), engine="vllm==0.20.1"))
    )
    crashed = [f for f in report.findings if "ZeroDivisionError" in f.message]
    assert crashed and crashed[0].status == Status.COULD_NOT_CHECK
    assert len(report.findings) > 5 and report.causes  # the rest of the diagnosis is intact
    json.loads(render(report, Format.JSON))


# --- JSON stays valid in every failure mode, through the CLI ----------------------------------


def _scenarios(tmp: str) -> dict[str, list[str]]:
    def w(name, data: bytes) -> str:
        p = os.path.join(tmp, name)
        with open(p, "wb") as fh:
            fh.write(data)
        return p

    good = SEED_LOG.read_bytes()
    gz = gzip.compress(good)
    os.makedirs(os.path.join(tmp, "dir"), exist_ok=True)
    bad_cfg = os.path.join(tmp, "badcfg")
    os.makedirs(bad_cfg, exist_ok=True)
    w("badcfg/config.json", b"[1, 2")
    list_cfg = os.path.join(tmp, "listcfg")
    os.makedirs(list_cfg, exist_ok=True)
    w("listcfg/config.json", b"[]")
    huge_cfg = os.path.join(tmp, "hugecfg")
    os.makedirs(huge_cfg, exist_ok=True)
    w("hugecfg/config.json", b'{"a": "' + b"x" * (5 << 20) + b'"}')
    trunc = os.path.join(tmp, "trunc")
    os.makedirs(trunc, exist_ok=True)
    w("trunc/config.json", (DRAFTER / "config.json").read_bytes())
    w("trunc/model.safetensors", b"\xff" * 8 + b"{")
    nocfg = os.path.join(tmp, "nocfg")
    os.makedirs(nocfg, exist_ok=True)
    return {
        "nothing given": [],
        "missing log": ["--log", os.path.join(tmp, "nope.log")],
        "log is a directory": ["--log", os.path.join(tmp, "dir")],
        "empty log": ["--log", w("empty.log", b"")],
        "binary log": ["--log", w("bin.log", os.urandom(200_000))],
        "NUL-filled log": ["--log", w("nul.log", b"\0" * 100_000 + good[:5000])],
        "truncated gzip log": ["--log", w("cut.log.gz", gz[: len(gz) // 2])],
        "gzip header only": ["--log", w("hdr.log.gz", gz[:10])],
        "only malformed metrics lines": ["--log", w("bad.log", b"SpecDecoding metrics: garbage\n" * 50)],
        "one enormous line": ["--log", w("long.log", b"non-default args: {'model': '" + b"a" * (2 << 20) + b"'}\n")],
        "drafter missing": ["--log", str(SEED_LOG), "--drafter", os.path.join(tmp, "nodrafter")],
        "drafter without config": ["--drafter", nocfg],
        "drafter config invalid": ["--drafter", bad_cfg],
        "drafter config is a list": ["--drafter", list_cfg],
        "drafter config 5 MiB": ["--drafter", huge_cfg],
        "drafter weights truncated": ["--drafter", trunc],
        "target is the log": ["--target", str(SEED_LOG)],
        "metrics file missing": ["--log", str(SEED_LOG), "--metrics", os.path.join(tmp, "nope.prom")],
        "metrics URL unreachable": ["--metrics", "http://127.0.0.1:9/metrics"],
        "every input broken at once": [
            "--log",
            os.path.join(tmp, "nope.log"),
            "--drafter",
            bad_cfg,
            "--target",
            list_cfg,
            "--metrics",
            "http://127.0.0.1:9/metrics",
            "--engine",
            "vllm==99.0",
        ],
    }


NAMES = [
    "nothing given",
    "missing log",
    "log is a directory",
    "empty log",
    "binary log",
    "NUL-filled log",
    "truncated gzip log",
    "gzip header only",
    "only malformed metrics lines",
    "one enormous line",
    "drafter missing",
    "drafter without config",
    "drafter config invalid",
    "drafter config is a list",
    "drafter config 5 MiB",
    "drafter weights truncated",
    "target is the log",
    "metrics file missing",
    "metrics URL unreachable",
    "every input broken at once",
]


@pytest.mark.parametrize("name", NAMES)
def test_diagnose_json_is_valid_in_every_failure_mode(tmp_path, name):
    args = _scenarios(str(tmp_path))[name]
    tally.fault(f"cli diagnose: {name}")
    res = run_cli("diagnose", *args, "--format", "json", timeout=120)
    assert "Traceback" not in res.stderr, res.stderr
    if res.returncode == 2 or res.stdout == "":
        # a usage error (2), or nothing could be read at all (3): one line (+ hint) on stderr, nothing on stdout
        assert res.returncode in (2, 3) and res.stdout == "" and res.stderr.startswith("error: "), res
        assert len(res.stderr.strip().splitlines()) <= 2
    else:
        assert res.returncode in (0, 1, 3), res
        data = json.loads(res.stdout)
        assert data["schema"] == "dflash-doctor/report@1" and data["findings"]
        # whatever failed is said somewhere in the report, not dropped
        said = json.dumps(data).lower()
        assert "could" in said or "not" in said
    tally.survived(f"cli diagnose: {name}")


@pytest.mark.parametrize(
    "cmd",
    [
        ["inspect-model", "{tmp}/badcfg", "--format", "json"],
        ["inspect-model", "{tmp}/trunc", "--target", "{tmp}/listcfg", "--format", "json"],
        ["gate", "--log", "{tmp}/bin.log", "--min-acceptance-length", "2", "--format", "json"],
        ["gate", "--log", "{tmp}/cut.log.gz", "--min-acceptance-length", "2", "--format", "json"],
    ],
)
def test_other_commands_json_is_valid_or_a_one_line_usage_error(tmp_path, cmd):
    _scenarios(str(tmp_path))
    args = [a.format(tmp=tmp_path) for a in cmd]
    tally.fault(f"cli {cmd[0]}: broken input")
    res = run_cli(*args, timeout=120)
    assert "Traceback" not in res.stderr, res.stderr
    if res.returncode == 2:
        assert res.stdout == "" and res.stderr.startswith("error: ")
    else:
        json.loads(res.stdout)
    tally.survived(f"cli {cmd[0]}: broken input")


def test_a_truncated_gzip_log_keeps_the_intervals_read_before_the_cut(tmp_path):
    # A log copied while being rotated: gzip ends early. What was read must still count.
    gz = gzip.compress(SEED_LOG.read_bytes())
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gz[: int(len(gz) * 0.8)])
    tally.fault("log: gzip truncated mid-stream")
    res = run_cli("diagnose", "--log", str(cut), "--format", "json")
    data = json.loads(res.stdout)
    assert data["acceptance"] is not None, "every interval before the cut was thrown away"
    # and the damage is said, naming the file (a could-not-check finding or a report note)
    said = [f["message"] for f in data["findings"] if f["status"] == "could-not-check"] + data["notes"]
    assert any("cut.log.gz" in m and ("truncated" in m or "damaged" in m) for m in said), said
    tally.survived("log: gzip truncated mid-stream")


# --- Ctrl-C during a slow collection ------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        ["diagnose", "--format", "json"],
        ["logs", "--format", "json"],
        ["gate", "--min-acceptance-length", "1.5", "--format", "json"],
    ],
)
def test_ctrl_c_during_collection_prints_what_was_gathered(cmd):
    """A log streamed on stdin that never ends: Ctrl-C prints the report of what was read, exit 130."""
    import signal
    import subprocess
    import sys

    from tests.conftest import ROOT
    from tests.procwatch import wait_for_drained

    tally.fault(f"SIGINT during collection ({cmd[0]})")
    metrics = [line for line in SEED_LOG.read_text().splitlines(keepends=True) if "SpecDecoding" in line]
    chunk = "".join(metrics) * 40  # ~1.6 MB: several of the scanner's 256 KiB reads
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    args = [cmd[0], "-" if cmd[0] == "logs" else "--log", *([] if cmd[0] == "logs" else ["-"]), *cmd[1:]]
    proc = subprocess.Popen(
        [sys.executable, "-m", "dflash_doctor", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        proc.stdin.write(chunk.encode())
        proc.stdin.flush()
        wait_for_drained(proc)  # the scanner has read what was written and now waits for more
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (proc.returncode, err.decode()[-2000:])
    assert b"Traceback" not in err
    data = json.loads(out)
    said = json.dumps(data)
    assert "interrupted" in said.lower()
    measured = data.get("acceptance") or data.get("measured")
    assert measured and measured["mean_acceptance_length"] > 1.0, "what was read before Ctrl-C was lost"
    tally.survived(f"SIGINT during collection ({cmd[0]})")


# A Ctrl-C while a module loads, at each stage of a run: the console entry importing the CLI (typer), the CLI
# importing its common options, the command importing its services (inside Typer, which turned a Ctrl-C there
# into exit 130 without a word), the report importing numpy.
_CTRL_C_AT = """
import importlib.abc, os, signal, sys
target = sys.argv[1]
class CtrlC(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target_module=None):
        if name == target:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, CtrlC())
sys.argv = ["dflash-doctor", "logs", sys.argv[2], "--format", "json"]
from dflash_doctor.cli.entry import main
main()
"""


@pytest.mark.parametrize(
    "module",
    ["typer", "dflash_doctor.cli.common", "dflash_doctor.collect.builder", "dflash_doctor.services.doctor", "numpy"],
)
def test_a_ctrl_c_while_a_module_loads_says_interrupted_without_a_traceback(module):
    """Exit 130, 'interrupted' said, never a traceback — whichever import the Ctrl-C lands in."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    tally.fault(f"SIGINT while {module} loads")
    proc = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AT, module, str(SEED_LOG)],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-2000:]
    assert proc.returncode == 130 and b"interrupted" in proc.stderr, (proc.returncode, proc.stderr[-500:])
    tally.survived(f"SIGINT while {module} loads")
