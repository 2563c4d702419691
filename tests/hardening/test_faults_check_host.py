"""Faults injected into whole collections (`check host`, in process and through the CLI): a host
whose tools are not GNU/Linux ones, missing tools, every command denied, a connection lost half
way, a stalled host, a log rotated during the scan, one dead host in a fleet, Ctrl-C. Each run
keeps what it could gather, says what it could not and why, and its JSON stays valid."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dflash_doctor.collect.host import HostOptions, collect_host
from dflash_doctor.hosts.local import LocalHost
from dflash_doctor.render import Format, render
from dflash_doctor.services.doctor import build_report
from tests.conftest import FIXTURES, ROOT, run_cli
from tests.hardening import tally
from tests.hardening.faults import FaultyHost, TcpProxy
from tests.procwatch import proc_available, read_offsets, wait_for_read

SEED_LOG = str(FIXTURES / "seed/vllm-0.20.1.log")
TOOLS = (
    "sh",
    "bash",
    "grep",
    "awk",
    "head",
    "tail",
    "cat",
    "find",
    "readlink",
    "printf",
    "timeout",
    "tr",
    "sed",
    "ls",
    "env",
    "sort",
    "wc",
    "dirname",
    "basename",
    "id",
    "cut",
    "xargs",
    "true",
    "false",
    "base64",
    "stat",
)


def _bin(tmp_path: Path, fakes: dict[str, str], drop: tuple[str, ...] = ()) -> str:
    """A PATH directory with the usual tools, minus `drop`, plus fake scripts."""
    import shutil

    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for t in TOOLS:
        real = shutil.which(t)
        if real and t not in drop and t not in fakes:
            (d / t).symlink_to(real)
    for name, body in fakes.items():
        (d / name).write_text("#!/bin/sh\n" + body + "\n")
        (d / name).chmod(0o755)
    return str(d)


def _collect(host, **opts):
    ev = collect_host(host, HostOptions(log=SEED_LOG, timeout=opts.pop("timeout", 10), **opts))
    report, _ = build_report(ev)
    data = json.loads(render(report, Format.JSON))  # the JSON is complete and valid
    for fmt in (Format.TERMINAL, Format.MARKDOWN):
        render(report, fmt)
    return ev, report, data


def _said(data) -> str:
    parts = [f["message"] for f in data["findings"] if f["status"] == "could-not-check"]
    parts += [m["reason"] for m in data["missing_evidence"]] + data["notes"]
    return "\n".join(parts)


FAULTS = {
    "a macOS-like host (BSD base64/stat, uname Darwin)": (
        {
            "base64": 'echo "base64: illegal option -- w" >&2; exit 64',
            "stat": 'echo "stat: illegal option -- c" >&2; exit 1',
            "uname": "echo Darwin",
        },
        (),
        "illegal option",
    ),
    "nvidia-smi and python3 missing": ({}, ("nvidia-smi", "python3"), None),
    "every tool denied": (
        {t: 'echo "$0: Permission denied" >&2; exit 126' for t in ("grep", "head", "tail", "awk")},
        (),
        None,
    ),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_broken_host_yields_partial_results_and_says_why(tmp_path, monkeypatch, name):
    fakes, drop, needle = FAULTS[name]
    monkeypatch.setenv("PATH", _bin(tmp_path, fakes, drop))
    tally.fault(f"check host: {name}")
    ev, report, data = _collect(LocalHost())
    said = _said(data)
    assert data["findings"] and any(f["status"] == "could-not-check" for f in data["findings"])
    if needle:
        assert needle in said, said
    # Never a claim made from silence: no process listing means no "no serving process" either.
    if name.startswith("a macOS"):
        assert "no vLLM or SGLang serving process is running" not in said
    tally.survived(f"check host: {name}")


def test_a_connection_lost_half_way_keeps_the_first_answers(tmp_path):
    tally.fault("check host: connection lost after the first command")
    host = FaultyHost(LocalHost(), drop_after=1)
    ev, report, data = _collect(host)
    assert "connection was lost" in _said(data) or "connection was lost" in json.dumps(data)
    tally.survived("check host: connection lost after the first command")


@pytest.mark.skipif(not proc_available(), reason="needs /proc/PID/fdinfo")
def test_a_log_rotated_during_the_scan_gives_a_valid_report(tmp_path):
    """copytruncate and rename+create while `diagnose` reads the log give a valid report. The rotation happens
    mid-read whatever the machine's speed: the reader is stopped (SIGSTOP) once its descriptor's offset shows it
    has read 2 MiB of the file (past the head read to sniff it), the log is rotated, and the reader resumed."""
    lines = [ln for ln in Path(SEED_LOG).read_text().splitlines(keepends=True) if "SpecDecoding" in ln]
    body = "".join(lines) * 600  # ~25 MB
    for how in ("copytruncate", "rename"):
        tally.fault(f"log rotated during the scan ({how})")
        log = tmp_path / f"{how}.log"
        log.write_text(body)
        size = log.stat().st_size
        proc = subprocess.Popen(
            [sys.executable, "-m", "dflash_doctor", "diagnose", "--log", str(log), "--format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1"),
        )
        try:
            wait_for_read(proc, str(log), 2 << 20)
            os.kill(proc.pid, signal.SIGSTOP)
            at = max(read_offsets(proc.pid, str(log)), default=size)
            assert at < size, "the reader had read the whole log before it could be stopped"
            if how == "copytruncate":
                with open(log, "r+") as fh:
                    fh.truncate(0)
            else:
                os.rename(log, str(log) + ".1")
                log.write_text(lines[0])
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, 1, 3), err.decode()[-1500:]
        data = json.loads(out)
        acc = data["acceptance"]  # (2 MiB of metrics lines were read before the rotation)
        assert acc is not None and acc["mean_acceptance_length"] >= 1.0, data.get("notes")
        tally.survived(f"log rotated during the scan ({how})")


@pytest.mark.ssh
def test_a_fleet_keeps_every_host_result_when_hosts_fail(sshd, tmp_path):
    from tests.sshd import free_port

    dead = sshd.add_alias("deadhost", free_port())  # nothing listens there
    proxy = TcpProxy(sshd.port)
    stalled = proxy.alias(sshd, "stalledhost")
    proxy.stall()
    tally.fault("fleet: one host refused, one stalled", 2)
    try:
        res = run_cli(
            "check",
            "host",
            "testhost",
            dead,
            stalled,
            "--ssh-config",
            str(sshd.ssh_config),
            "--log",
            SEED_LOG,
            "--timeout",
            "3",
            "--format",
            "json",
            timeout=120,
        )
    finally:
        proxy.close()
    assert "Traceback" not in res.stderr
    doc = json.loads(res.stdout)
    by = {h["host"]: h for h in doc["hosts"]}
    assert set(by) == {"testhost", dead, stalled}
    assert by["testhost"]["tau"] and by["testhost"]["report"]["acceptance"], by["testhost"]["status"]
    assert by[dead]["status"] == "unreachable" and "refused" in (by[dead]["error"] or "")
    assert by[stalled]["status"] in ("unreachable", "failed", "insufficient data"), by[stalled]
    assert res.returncode in (1, 3)
    tally.survived("fleet: one host refused, one stalled", 2)


@pytest.mark.ssh
def test_ctrl_c_during_check_host_prints_what_was_gathered(sshd):
    proxy = TcpProxy(sshd.port)
    alias = proxy.alias(sshd, "slowhost")
    # the connection and the first answers go through, then the host hangs: the proxy stalls by itself at
    # the mark (before, the test polled for the mark and stalled after it; on a loaded machine the check had
    # finished by then, and the SIGINT cut the report's write instead)
    proxy.stall_after(4000)
    tally.fault("SIGINT during check host")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dflash_doctor",
            "check",
            "host",
            alias,
            "--ssh-config",
            str(sshd.ssh_config),
            "--log",
            SEED_LOG,
            "--timeout",
            "8",
            "--format",
            "json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while not proxy.stalled() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proxy.stalled() and proc.poll() is None, "the check ended before the host stalled"
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proxy.close()
    assert proc.returncode == 130, (proc.returncode, err.decode()[-1500:])
    assert b"Traceback" not in err
    data = json.loads(out)
    assert "interrupted" in json.dumps(data).lower()
    assert data["evidence"], "nothing that was gathered before Ctrl-C was printed"
    tally.survived("SIGINT during check host")
