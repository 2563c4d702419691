"""Prometheus text: vLLM V1 counters (one scrape = since start, two = the interval), V0 and SGLang
gauges, several engine labels kept apart and summed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.parse.metrics_text import MetricsError, intervals_from_scrapes, parse_text

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def scrape(name):
    return parse_text((LOGS / name).read_text(), name)


def test_one_scrape_is_since_start_and_engines_are_summed():
    rows, notes, table = intervals_from_scrapes([scrape("vllm-metrics-1.prom")])
    assert set(table) == {"engine 0", "engine 1"}
    # engine 0: 1000 drafts, 700+490+343 accepted; engine 1: 500 drafts, 300+180+108
    from dflash_doctor.parse.frame import summarize

    s = summarize(rows)
    assert s.drafts == 1500
    assert s.mean_acceptance_length == pytest.approx(1 + (1533 + 588) / 1500)
    assert s.per_position[0] == pytest.approx((700 + 300) / 1500)
    by = {e["engine"]: e["tau"] for e in s.per_engine}
    assert by["metrics engine 0"] == pytest.approx(2.533, abs=1e-3)
    assert any("since the server started" in n for n in notes)


def test_two_scrapes_give_the_interval_between_them():
    rows, notes, _ = intervals_from_scrapes([scrape("vllm-metrics-1.prom"), scrape("vllm-metrics-2.prom")])
    from dflash_doctor.parse.frame import summarize

    s = summarize(rows)
    assert s.drafts == 3000  # (3x - 1x) of 1500
    assert s.mean_acceptance_length == pytest.approx(1 + 2 * (1533 + 588) / 3000)


def test_counter_reset_between_scrapes_is_noted():
    rows, notes, _ = intervals_from_scrapes([scrape("vllm-metrics-2.prom"), scrape("vllm-metrics-1.prom")])
    assert any("went down" in n for n in notes)
    assert rows


def test_v0_gauges_and_sglang_gauges():
    rows, notes, table = intervals_from_scrapes([scrape("vllm-v0-metrics.prom")], k_hint=4)
    assert table["engine"]["tau"] == pytest.approx(0.598 * 5)
    rows, notes, table = intervals_from_scrapes([scrape("sglang-metrics.prom")])
    assert table["engine"]["accept_length"] == 3.25 and table["engine"]["verify_calls"] == 5000
    assert any("gauge" in n for n in notes)


def test_junk_is_not_prometheus_text():
    with pytest.raises(MetricsError):
        parse_text("this is { not prometheus\n\x01\x02", "junk")


def test_diagnose_with_metrics_files(cli):
    r = cli(
        "diagnose",
        "--metrics",
        str(LOGS / "vllm-metrics-1.prom"),
        "--metrics",
        str(LOGS / "vllm-metrics-2.prom"),
        "--format",
        "json",
    )
    rep = json.loads(r.stdout)
    assert rep["acceptance"]["mean_acceptance_length"] == pytest.approx(1 + 2 * 2121 / 3000, abs=1e-4)
    assert any(e["kind"] == "metrics" for e in rep["evidence"])


def test_diagnose_with_an_unreadable_metrics_source(cli, tmp_path):
    p = tmp_path / "m.prom"
    p.write_bytes(b"\x00\x01binary")
    r = cli("diagnose", "--metrics", str(p), "--format", "json")
    assert "Traceback" not in r.stderr
    assert r.stdout == "" and "binary" in r.stderr.splitlines()[0]  # nothing read: one line, not a report
    assert r.returncode == 3


def test_window_scrapes_a_url_twice(tmp_path):
    import http.server
    import threading

    from dflash_doctor.collect.inputs import gather_metrics
    from dflash_doctor.evidence import EvidenceSet

    pages = [(LOGS / "vllm-metrics-1.prom").read_bytes(), (LOGS / "vllm-metrics-2.prom").read_bytes()]

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = pages.pop(0)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        ev = EvidenceSet()
        gather_metrics(ev, [f"http://127.0.0.1:{srv.server_port}/metrics"], "0.2s")
    finally:
        srv.shutdown()
    assert not pages
    assert ev.get(AcceptanceSummary).drafts == 3000


def test_llama_server_counters_are_read():
    """llama-server's `llamacpp:spec_decode_*` counters (tools/server/server-task.cpp in the llama.cpp vendored by
    llama-cpp-python 0.3.36): drafts are verification steps, the per-position counter's length is the n-max."""
    from dflash_doctor.parse.frame import summarize

    rows, notes, table = intervals_from_scrapes([scrape("llamacpp-metrics-1.prom")])
    s = summarize(rows)
    assert s.drafts == 200
    assert s.mean_acceptance_length == pytest.approx(1 + 270 / 200)
    assert s.per_position == pytest.approx((0.70, 0.425, 0.225))
    assert rows[0][0] == "llamacpp-metrics" and rows[0][8] == 3  # k from the per-position series
    assert table["engine"]["engine_kind"] == "llama.cpp"
    assert any("llama.cpp counters cover everything since the server started" in n for n in notes)
    rows, _, _ = intervals_from_scrapes([scrape("llamacpp-metrics-1.prom"), scrape("llamacpp-metrics-2.prom")])
    s = summarize(rows)
    assert s.drafts == 400 and s.mean_acceptance_length == pytest.approx(1 + 540 / 400)


def test_llama_server_gauges_alone_are_not_spec_series():
    scrape_ = parse_text("# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n", "m")
    assert scrape_.engines == {}


def test_diagnose_reads_a_llama_server_scrape(cli):
    r = cli("diagnose", "--metrics", str(LOGS / "llamacpp-metrics-1.prom"), "--format", "json")
    assert "no spec-decode series" not in r.stdout + r.stderr
    rep = json.loads(r.stdout)
    assert rep["acceptance"]["mean_acceptance_length"] == pytest.approx(2.35, abs=1e-4)
    assert rep["acceptance"]["drafts"] == 200


def _pasted(text: str) -> str:
    """A scrape as users paste it into a thread: the command, a Markdown quote and fence around the samples."""
    lines = ["```", "$ curl -s localhost:8000/metrics | grep spec_decode"]
    lines += ["> " + x for x in text.splitlines()]
    return "\n".join([*lines, "```", "so acceptance looks low?"]) + "\n"


def test_a_pasted_scrape_is_read_from_its_exposition_lines(tmp_path):
    text = (LOGS / "vllm-metrics-1.prom").read_text()
    pasted = parse_text(_pasted(text), "pasted")
    exact = scrape("vllm-metrics-1.prom")
    assert pasted.engines == exact.engines and pasted.dropped == 4  # two fences, the command, the question
    assert exact.dropped == 0
    with pytest.raises(MetricsError):  # nothing of it is exposition text
        parse_text("$ curl -s localhost:8000/metrics\ncurl: (7) Failed to connect\n", "refused")


@pytest.mark.parametrize("how", ["logs", "diagnose"])
def test_a_scrape_given_as_a_log_is_read_as_metrics(cli, tmp_path, how):
    """Users paste `curl …/metrics | grep spec_decode` where a log is asked for: the counters since start, not
    'not an engine log'."""
    p = tmp_path / "engine.log"
    p.write_text(_pasted((LOGS / "vllm-metrics-1.prom").read_text()))
    argv = ("logs", str(p)) if how == "logs" else ("diagnose", "--log", str(p))
    r = cli(*argv, "--format", "json")
    rep = json.loads(r.stdout)
    assert rep["acceptance"]["mean_acceptance_length"] == pytest.approx(1 + (1533 + 588) / 1500, abs=1e-4)
    assert any("read as --metrics" in n for n in rep["notes"])


def test_two_scrapes_pasted_in_one_file_give_the_interval(tmp_path):
    """`curl …/metrics` before and after a run, pasted one after the other: the same series twice are two scrapes
    (differenced), not one engine's counters to add up."""
    one = (LOGS / "vllm-metrics-1.prom").read_text()
    two = (LOGS / "vllm-metrics-2.prom").read_text()
    from dflash_doctor.parse.metrics_text import parse_scrapes

    got = parse_scrapes(one + "\n" + two, "pasted")
    assert len(got) == 2 and got[0].engines == scrape("vllm-metrics-1.prom").engines
    p = tmp_path / "before-after.log"
    p.write_text(_pasted(one + "\n" + two))
    from dflash_doctor.collect.inputs import FileInputs, gather_files

    s = gather_files(FileInputs(logs=[str(p)])).get(AcceptanceSummary)
    assert s is not None and s.drafts == 3000  # (3x - 1x) of 1500, as two --metrics files give
