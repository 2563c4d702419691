"""Files that are not what they claim, plugins that throw what no one expects, and a host that never says
hello (issue 24). Every situation ends in one line, a warning or a could-not-check finding — never a hang, a
MemoryError or a traceback — and the rest of the report still comes out.

FIFOs are real named pipes nobody writes to (an open() of one blocks until a writer comes: forever); /dev/zero
is the real device (a read of it never ends), read under an address-space limit so a failure cannot take the
machine's memory with it.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import FIXTURES, ROOT, run_cli
from tests.hardening import tally
from tests.hardening.test_extensions import _plugin_site

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")


def _one_line(res, rc: int = 2) -> str:
    assert res.returncode == rc, (res.returncode, res.stderr)
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr
    return errors[0]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return str(path)


# -- a FIFO (or a device) where a file is expected ----------------------------------------------------------

FILE_FLAGS = {
    "gate --baseline": lambda f: ["gate", "--log", LOG, "--baseline", f, "--max-regression", "5"],
    "gate --probe": lambda f: ["gate", "--probe", f, "--min-acceptance-length", "2"],
    "--knowledge": lambda f: ["diagnose", "--log", LOG, "--knowledge", f],
    "--launch @FILE": lambda f: ["diagnose", "--log", LOG, "--launch", "@" + f],
    "--hosts-file": lambda f: ["check", "host", "--hosts-file", f],
    "--probe-result": lambda f: ["diagnose", "--log", LOG, "--probe-result", f],
    "--bearer-token-file": lambda f: ["fleet", "--prometheus", "http://127.0.0.1:9", "--bearer-token-file", f],
}


@pytest.mark.parametrize("flag", list(FILE_FLAGS))
def test_a_fifo_where_a_file_is_expected_is_refused_in_one_line(fifo, flag):
    """Before: each of these hung on open() (rc 124 under `timeout 15`)."""
    tally.fault(f"files: a FIFO as {flag}")
    res = run_cli(*FILE_FLAGS[flag](fifo), timeout=60)
    assert "not a regular file" in _one_line(res), res.stderr
    tally.survived(f"files: a FIFO as {flag}")


def test_a_fifo_as_a_metrics_file_is_could_not_check(fifo):
    res = run_cli("diagnose", "--log", LOG, "--metrics", fifo, "--format", "json", timeout=60)
    assert res.returncode in (0, 1, 3), res.stderr
    assert "not a regular file" in res.stdout + res.stderr
    json.loads(res.stdout)


def test_a_fifo_as_known_hosts_does_not_hang_check_host(fifo, tmp_path):
    """`UserKnownHostsFile` (or --known-hosts) a FIFO: before, `check host` hung reading it before connecting."""
    tally.fault("files: UserKnownHostsFile a FIFO")
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host fifo-kh\n  HostName 127.0.0.1\n  Port 1\n  UserKnownHostsFile {fifo}\n")
    for argv in (
        ["check", "host", "ssh://u@127.0.0.1:1", "--known-hosts", fifo],
        ["check", "host", "ssh://u@fifo-kh", "--ssh-config", str(cfg)],
    ):
        res = run_cli(*argv, timeout=60)
        assert "refused" in _one_line(res, rc=3), res.stderr
    tally.survived("files: UserKnownHostsFile a FIFO")


def _limited(argv, env) -> subprocess.CompletedProcess:
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run(
        [sys.executable, "-m", "dflash_doctor", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", **env},
        preexec_fn=limit,
    )


@pytest.mark.parametrize("what", ["fifo", "/dev/zero"])
def test_an_entry_points_file_that_is_a_fifo_or_dev_zero(tmp_path, what):
    """Plugin discovery reads every installed distribution's entry_points.txt. Before: a FIFO hung every
    command, /dev/zero read until a MemoryError (an internal error)."""
    tally.fault(f"plugins: entry_points.txt is {what}")
    env = _plugin_site(tmp_path, "X = 1\n", name="odd_plugin")
    ep = tmp_path / "site" / "odd_plugin-0.0.1.dist-info" / "entry_points.txt"
    ep.unlink()
    if what == "fifo":
        os.mkfifo(ep)
    else:
        ep.symlink_to("/dev/zero")
    env["PYTHONPATH"] = f"{tmp_path / 'site'}{os.pathsep}{ROOT}"
    for argv in (["diagnose", "--log", LOG, "--format", "json"], ["checks", "list"], ["logs", LOG]):
        try:
            res = _limited(argv, env)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{' '.join(argv[:1])} hung on entry_points.txt ({what})")
        assert res.returncode in (0, 1, 3), res.stderr
        assert "Traceback" not in res.stderr and "MemoryError" not in res.stderr
        if argv[0] != "logs":  # (`logs` runs the built-in acceptance checks only: no plugin discovery)
            assert "plugins not loaded" in res.stderr and "not a regular file" in res.stderr, res.stderr
    tally.survived(f"plugins: entry_points.txt is {what}")


# -- plugins raising what is no Exception ----------------------------------------------------------------------

BASE_IN_RUN = """
from dflash_doctor.check import Check

class Boom(BaseException):
    pass

class Raises(Check):
    id = "raises-base-exception"
    area = "acceptance"
    title = "raises a BaseException subclass"

    def run(self, evidence):
        raise Boom("not an Exception")
"""
BASE_AT_IMPORT = "class Boom(BaseException):\n    pass\n\nraise Boom('at import')\n"
BASE_IN_STR = """
from dflash_doctor.check import Check

class Nasty(BaseException):
    def __str__(self):
        raise Nasty()

class Raises(Check):
    id = "raises-nasty"
    area = "acceptance"
    title = "raises an exception whose message raises"

    def run(self, evidence):
        raise Nasty()
"""


@pytest.mark.parametrize("body", [BASE_IN_RUN, BASE_AT_IMPORT, BASE_IN_STR], ids=["run", "import", "str"])
def test_a_plugin_raising_a_base_exception_is_a_crashed_check(tmp_path, body):
    """Before: a traceback, no report and no JUnit file (a CI gate with nothing to show)."""
    tally.hostile_input("plugin: raises a BaseException subclass")
    env = _plugin_site(tmp_path, body, name="base_exc_plugin")
    junit = tmp_path / "gate.xml"
    res = run_cli("gate", "--log", LOG, "--min-acceptance-length", "5", "--junit", str(junit), env=env)
    assert res.returncode == 1, res.stderr  # τ 1.18 < 5: the gate fails, with its report
    assert "Traceback" not in res.stderr and "mean acceptance length 1.18" in res.stdout
    assert junit.is_file() and "<failure" in junit.read_text()
    res = run_cli("diagnose", "--log", LOG, "--format", "json", env=env)
    assert res.returncode in (0, 1, 3) and "Traceback" not in res.stderr, res.stderr
    text = json.dumps(json.loads(res.stdout))
    if body is BASE_AT_IMPORT:
        assert "base_exc_plugin" in res.stderr and "Boom" in res.stderr
    else:
        assert "the check crashed" in text, text[:2000]


# -- a --knowledge file that is not text ----------------------------------------------------------------------


def test_a_knowledge_file_that_is_not_utf8_is_one_line(tmp_path):
    """Before: an internal error (UnicodeDecodeError from tomllib)."""
    tally.hostile_input("knowledge: not UTF-8")
    k = tmp_path / "k.toml"
    k.write_bytes(b'[[cause]]\nid = "x"\ntitle = "\xff\xfe"\n')
    assert "UTF-8" in _one_line(run_cli("diagnose", "--log", LOG, "--knowledge", str(k)))


# -- NaN where a number is expected: the drafter config layer-offset reads ----------------------------------


@pytest.mark.parametrize(
    "where,value", [("target_layer_ids", ["@@", 2]), ("rope_theta", "@@"), ("hidden_size", "@@inf")]
)
def test_nan_in_the_layer_offset_drafter_config_is_one_line(tmp_path, where, value):
    """Before: an internal error (`cannot convert float NaN to integer`, OverflowError for 1e999), or a NaN
    RoPE base the probe would have run on."""
    pytest.importorskip("torch")
    tally.hostile_input("layer-offset: NaN in the drafter config")
    cfg = json.loads((FIXTURES / "models/Qwen3.6-27B-DFlash/config.json").read_text())
    (cfg["dflash_config"] if where in cfg.get("dflash_config", {}) else cfg)[where] = value
    text = json.dumps(cfg).replace('"@@inf"', "1e999").replace('"@@"', "NaN")
    d = tmp_path / "drafter"
    d.mkdir()
    (d / "config.json").write_text(text)
    res = run_cli(
        "layer-offset", "--target", str(tmp_path / "nope"), "--dump", str(tmp_path / "d.st"), "--drafter", str(d)
    )
    line = _one_line(res)
    assert "drafter config" in line and ("NaN" in line or "float" in line), line


# -- a host that opens the connection and never says hello -------------------------------------------------------


def test_a_stalled_ssh_banner_is_one_clear_line(tmp_path):
    """A TCP server that sends half a banner and stalls. Before: the host named twice ('ssh://u@h:p: ssh://u@h:p:
    no SSH server answered within 10s …'), and `--timeout 5` (per command) looked ignored."""
    tally.fault("ssh: a banner that stalls half-way")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    port = srv.getsockname()[1]
    held = []

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            held.append(c)
            c.sendall(b"SSH-2.0-Open")  # no end of line: a banner that never completes

    threading.Thread(target=serve, daemon=True).start()
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host stalled\n  HostName 127.0.0.1\n  Port {port}\n  ConnectTimeout 2\n")
    try:
        t0 = time.monotonic()
        res = run_cli("check", "host", "ssh://u@stalled", "--ssh-config", str(cfg), "--timeout", "5", timeout=120)
        took = time.monotonic() - t0
    finally:
        srv.close()
        for c in held:
            c.close()
    line = _one_line(res, rc=3)
    assert took < 30, took
    assert line.count("ssh://u@stalled") == 1, line
    assert "connect timeout" in line and "banner" in line, line
    tally.survived("ssh: a banner that stalls half-way")
