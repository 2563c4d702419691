"""Bounds on what an HTTP server hands dflash-doctor (issue 24): a whole-answer deadline, caps on the JSON it
answers, and answers whose numbers cannot be true.

The server is a hostile or broken "Prometheus" (a real one validates what it stores, so these answers can only
come from a server that lies or is not Prometheus): a socket server in this process that trickles a byte a
second, or answers with JSON built to hurt. Each situation ends in one line (or a could-not-check for the
engine concerned) and the rest of the report; RSS is measured by /usr/bin/time of the real command.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import ROOT, run_cli
from tests.hardening import tally
from tests.sshd import free_port

END = 1_780_000_000  # --until: a fixed window
BUILDINFO = {"status": "success", "data": {"version": "2.42.0"}}


class Trickle:
    """A server that answers every request with `answer` a byte a second: its headers (`stage="head"`) or,
    after prompt headers, its body (`stage="body"`)."""

    def __init__(self, stage: str):
        body = json.dumps(BUILDINFO).encode() + b" " * 40
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        self.slow, self.fast = (head + body, b"") if stage == "head" else (body, head)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        try:
            conn.recv(65536)
            conn.sendall(self.fast)
            for b in self.slow:
                if self.stop.is_set():
                    break
                conn.sendall(bytes([b]))
                time.sleep(1)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.sock.close()


@pytest.mark.parametrize("stage", ["head", "body"])
def test_fleet_timeout_is_for_the_whole_answer(stage):
    """`fleet --timeout 3` against a byte a second: before, 28 s and more (the timeout was per read: a
    221-byte answer took 221 s); now about 3 s."""
    tally.fault(f"http: a byte a second ({stage})")
    srv = Trickle(stage)
    try:
        t0 = time.monotonic()
        res = run_cli("fleet", "--prometheus", srv.url, "--timeout", "3", "--format", "json", timeout=120)
        took = time.monotonic() - t0
    finally:
        srv.close()
    assert res.returncode == 3, res.stderr
    assert took < 10, f"took {took:.1f} s"
    assert "within 3 s" in res.stderr and res.stderr.count("error:") == 1 and res.stdout == ""
    tally.survived(f"http: a byte a second ({stage})")


def test_a_metrics_url_has_the_same_deadline():
    """`gate --metrics URL`: urllib's timeout was per read too."""
    srv = Trickle("body")
    try:
        t0 = time.monotonic()
        res = run_cli("gate", "--metrics", srv.url + "/metrics", "--min-acceptance-length", "2", timeout=120)
        took = time.monotonic() - t0
    finally:
        srv.close()
    assert res.returncode == 3 and took < 25, (res.returncode, took, res.stderr)
    assert "Traceback" not in res.stderr


# -- a server that answers, with JSON built to hurt --------------------------------------------------------


def _vector(rows):
    return {"status": "success", "data": {"resultType": "vector", "result": rows}}


def _matrix(rows):
    return {"status": "success", "data": {"resultType": "matrix", "result": rows}}


def _engine(instance, drafts, accepted, per_pos, generation):
    labels = {"instance": instance, "model_name": "m"}
    rows = [
        {"metric": {**labels, "dflash_q": "drafts"}, "value": [END, str(drafts)]},
        {"metric": {**labels, "dflash_q": "accepted"}, "value": [END, str(accepted)]},
        {"metric": {**labels, "dflash_q": "draft_tokens"}, "value": [END, str(drafts * len(per_pos))]},
        {"metric": {**labels, "dflash_q": "generation"}, "value": [END, str(generation)]},
    ]
    rows += [
        {"metric": {**labels, "dflash_q": "pos", "position": str(i)}, "value": [END, str(int(r * drafts))]}
        for i, r in enumerate(per_pos)
    ]
    return rows


def _steps(instance, times, drafts, accepted):
    labels = {"instance": instance, "model_name": "m"}
    return [
        {"metric": {**labels, "dflash_q": "drafts"}, "values": [[t, str(drafts)] for t in times]},
        {"metric": {**labels, "dflash_q": "accepted"}, "values": [[t, str(accepted)] for t in times]},
    ]


class FakeProm:
    """A Prometheus HTTP API that answers buildinfo, query and query_range with what the test gives it
    (a dict, or raw bytes)."""

    def __init__(self, query, query_range):
        answers = {"/api/v1/status/buildinfo": BUILDINFO, "/api/v1/query": query, "/api/v1/query_range": query_range}

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                body = answers.get(self.path.split("?")[0], {"status": "error"})
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802
                self._answer()

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._answer()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


GOOD_PP = (0.8, 0.6, 0.45, 0.3)


def _fleet(prom, *extra, fmt="json"):
    return run_cli(
        "fleet",
        "--prometheus",
        prom.url,
        "--since",
        "1h",
        "--step",
        "5m",
        "--until",
        str(END),
        "--format",
        fmt,
        *extra,
        timeout=300,
    )


def _max_rss_kib(argv) -> int:
    time_bin = shutil.which("time") or "/usr/bin/time"
    res = subprocess.run(
        [time_bin, "-f", "MAXRSS %M", sys.executable, "-m", "dflash_doctor", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )
    line = next(ln for ln in res.stderr.splitlines() if ln.startswith("MAXRSS "))
    return int(line.split()[1])


def test_an_answer_nested_200k_deep_is_one_line():
    """Before: an internal error (RecursionError from the JSON decoder)."""
    tally.fault("prometheus: an answer nested 200 000 deep")
    deep = b'{"status":"success","data":{"resultType":"vector","result":' + b"[" * 200_000 + b"]" * 200_000 + b"}}"
    with FakeProm(deep, _matrix([])) as prom:
        res = _fleet(prom)
    assert res.returncode == 3, res.stderr
    assert res.stderr.count("error:") == 1 and "internal error" not in res.stderr and "nested" in res.stderr
    tally.survived("prometheus: an answer nested 200 000 deep")


@pytest.mark.skipif(not shutil.which("time") and not __import__("os").path.exists("/usr/bin/time"), reason="no time")
def test_a_24_mb_list_of_lists_is_refused_without_a_gigabyte():
    """`[[],[],…]` is ~60 bytes of memory per 3 bytes of text: before, 24 MB of it took 1.2 GB of RSS."""
    tally.fault("prometheus: a 24 MB list of empty lists")
    big = b'{"status":"success","data":{"resultType":"vector","result":[' + b"[]," * 8_000_000 + b"[]]}}"
    with FakeProm(big, _matrix([])) as prom:
        argv = ["fleet", "--prometheus", prom.url, "--until", str(END), "--format", "json"]
        rss = _max_rss_kib(argv)
        res = _fleet(prom)
    assert res.returncode == 3 and "JSON values" in res.stderr, res.stderr
    assert rss < 400 * 1024, f"max RSS {rss >> 10} MiB"
    tally.survived("prometheus: a 24 MB list of empty lists")


def test_nan_or_infinity_in_an_answer_is_one_line():
    tally.hostile_input("prometheus: NaN literal in the answer")
    raw = b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[NaN,"1"]}]}}'
    with FakeProm(raw, _matrix([])) as prom:
        res = _fleet(prom)
    assert res.returncode == 3 and res.stderr.count("error:") == 1, res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("bad_time", [1e20, -1e13, 1e308])
def test_timestamps_beyond_any_date_do_not_lose_the_report(bad_time):
    """Before: a step at t=1e20 made datetime fail ('year is out of range'): no fleet report at all."""
    tally.fault(f"prometheus: a timestamp of {bad_time:g}")
    times = [END - 3000 + 300 * i for i in range(10)]
    totals = _engine("a:8000", 10_000, 20_000, GOOD_PP, 40_000) + _engine("b:8000", 10_000, 19_000, GOOD_PP, 40_000)
    steps = _steps("a:8000", times + [bad_time], 1000, 2000) + _steps("b:8000", times, 1000, 1900)
    with FakeProm(_vector(totals), _matrix(steps)) as prom:
        res = _fleet(prom)
    assert res.returncode in (0, 1, 3) and "internal error" not in res.stderr, res.stderr
    doc = json.loads(res.stdout)
    assert len(doc["engines"]) == 2 and any("outside the window" in n for n in doc["notes"])
    tally.survived(f"prometheus: a timestamp of {bad_time:g}")


def test_a_negative_counter_is_could_not_check_for_that_engine():
    """Before: engine b printed τ −4.00 (1 + −50000/10000) and was judged on it."""
    tally.hostile_input("prometheus: a negative counter increase")
    times = [END - 3000 + 300 * i for i in range(10)]
    totals = _engine("a:8000", 10_000, 20_000, GOOD_PP, 40_000) + _engine("b:8000", 10_000, -50_000, GOOD_PP, 40_000)
    steps = _steps("a:8000", times, 1000, 2000) + _steps("b:8000", times, 1000, -5000)
    with FakeProm(_vector(totals), _matrix(steps)) as prom:
        res = _fleet(prom)
        text = _fleet(prom, fmt="terminal")
    doc = json.loads(res.stdout)
    b = next(e for e in doc["engines"] if e["labels"]["instance"] == "b:8000")
    a = next(e for e in doc["engines"] if e["labels"]["instance"] == "a:8000")
    assert b["verdict"] == "could-not-check" and b["mean_acceptance_length"] is None
    assert any("negative" in n for n in b["notes"])
    assert a["mean_acceptance_length"] == pytest.approx(3.0)
    assert "-4.0" not in text.stdout and "−4.0" not in text.stdout
