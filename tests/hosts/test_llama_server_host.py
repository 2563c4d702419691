"""`check host local --pid` finds llama.cpp's llama-server (a compiled binary, not a Python package): its command
line gives method, k and drafter, its stdout file is the log, its /metrics is scraped by the host's curl/wget.

The process here is a stand-in named `llama-server` (a Python script: argv as llama-server's, /metrics as
tools/server/server-task.cpp prints it, log lines as server-context.cpp's print_timings formats them in the
llama.cpp vendored by llama-cpp-python 0.3.36). The real server is exercised by tests/live/llamacpp/.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dflash_doctor.parse.launch import parse_launch_text
from tests.conftest import FIXTURES, run_cli

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")

# SLT_INF "slot %12.*s: id %2d | task %d | " + "draft acceptance = %0.5f (%5d accepted / %5d generated),
# mean len = %5.2f", with common/log.cpp's "%d.%02d.%03d.%03d %c " prefix. 200 steps, 270 accepted of 600 drafted.
_LOG = [
    "0.00.001.599 I srv  llama_server: initializing ...",
    "0.00.006.798 I srv    load_model: loading model '/m/target.gguf'",
    "0.00.094.812 I srv  llama_server: listening on http://127.0.0.1:PORT",
]
for _task, (_acc, _gen, _steps) in enumerate([(130, 300, 100), (140, 300, 100)]):
    _LOG.append(
        f"0.01.{185 + _task:03d}.639 I slot print_timing: id  0 | task {_task} | draft acceptance = "
        f"{_acc / _gen:0.5f} ({_acc:5d} accepted / {_gen:5d} generated), mean len = {1 + _acc / _steps:5.2f}"
    )

_SERVER = r"""import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
body = open(sys.argv[sys.argv.index("--metrics-file") + 1], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/metrics" else 404); self.end_headers()
        self.wfile.write(body if self.path == "/metrics" else b"")
    def log_message(self, *a): pass
print("0.00.094.900 I srv  llama_server: all slots are idle", flush=True)
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_llama_server_command_line_gives_method_k_and_drafter():
    lc = parse_launch_text(
        "/opt/llama/bin/llama-server -m /m/t.gguf -md /m/d.gguf --spec-type draft-simple --spec-draft-n-max 3 "
        "--host 127.0.0.1 --port 8123 --metrics -lv 4"
    )
    assert (lc.engine, lc.model, lc.method, lc.drafter, lc.num_speculative_tokens) == (
        "llama.cpp",
        "/m/t.gguf",
        "draft_model",
        "/m/d.gguf",
        3,
    )
    assert (lc.host, lc.port, lc.stray) == ("127.0.0.1", 8123, ())
    ng = parse_launch_text(
        "llama-server -m t.gguf --spec-type ngram-simple --spec-ngram-simple-size-n 2 --spec-ngram-simple-size-m 5"
    )
    assert (ng.method, ng.num_speculative_tokens, ng.drafter) == ("ngram", 5, None)
    assert ng.speculative["spec_type"] == "ngram-simple"
    old = parse_launch_text("llama-server -m t.gguf -md d.gguf --draft-max 8 -c -1")  # before --spec-draft-n-max
    assert (old.method, old.num_speculative_tokens, old.args["c"]) == ("draft_model", 8, "-1")
    plain = parse_launch_text("llama-server -m t.gguf --metrics")
    assert plain.engine == "llama.cpp" and plain.speculative is None and plain.method is None


@pytest.mark.skipif(shutil.which("curl") is None and shutil.which("wget") is None, reason="needs curl or wget")
def test_check_host_local_finds_a_llama_server_by_pid(tmp_path):
    port = _free_port()
    exe = tmp_path / "bin" / "llama-server"
    exe.parent.mkdir()
    exe.write_text(f"#!{sys.executable}\n" + _SERVER)
    exe.chmod(0o755)
    log = tmp_path / "server.log"
    log.write_text("\n".join(_LOG).replace("PORT", str(port)) + "\n")
    argv = [
        str(exe),
        "-m",
        str(tmp_path / "target.gguf"),
        "-md",
        str(tmp_path / "draft.gguf"),
        "--spec-type",
        "draft-simple",
        "--spec-draft-n-max",
        "3",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--metrics",
        "--metrics-file",
        str(FIXTURES / "logs" / "llamacpp-metrics-1.prom"),
    ]
    with open(log, "a") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        r = run_cli("check", "host", "local", "--pid", str(proc.pid), "--format", "json", timeout=120)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    assert r.returncode in (0, 1, 3), r.stderr  # the verdict is not the point here: what was collected is
    rep = json.loads(r.stdout)
    ev = {e["kind"]: e for e in rep["evidence"]}
    assert "llama.cpp" in ev["process"]["summary"] and str(proc.pid) in ev["process"]["summary"]
    assert "method draft_model" in ev["launch"]["summary"] and "k 3" in ev["launch"]["summary"]
    assert "draft.gguf" in ev["launch"]["summary"]
    # the log's print_timing lines (200 steps, 270 accepted) are read, but carry no per-position rates at the
    # default verbosity: the scrape's counters, which do, are the acceptance the checks read
    assert "2 intervals" in ev["log-scan"]["summary"]
    assert "metrics" in ev and "τ 2.35" in ev["metrics"]["summary"]
    acc = rep["acceptance"]
    assert acc["accepted"] == 270 and acc["mean_acceptance_length"] == pytest.approx(2.35, abs=0.01)
    assert acc["formats"] == ["llamacpp-metrics"] and acc["per_position"] == pytest.approx([0.7, 0.425, 0.225])
    assert any("without per-position rates" in n for n in rep["notes"])
    assert "Method: draft (from spec-type)." in rep["notes"]  # llama-server runs the --spec-type it is given
    missing = " ".join(str(m) for m in rep["missing_evidence"])
    assert "compiled binary" in missing
