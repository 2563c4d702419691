"""One evidence builder: `diagnose` on files, `check host` (its log filter run on the host) and `check bundle`
build the same acceptance, startup and engine evidence from the same bytes, over every fixture log and bundle.

Before the builder, the two collectors each turned a scan into evidence, differently: a vLLM 0.8.3 log without
k gave `diagnose` "no drafts count" but gave the host path τ = NaN over 0 drafts, and the host path fetched
/metrics and never read it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dflash_doctor.collect.host import HostCollector, HostOptions, collect_host
from dflash_doctor.collect.inputs import FileInputs, gather_files
from dflash_doctor.evidence.acceptance import AcceptanceSummary, StartupFacts
from dflash_doctor.evidence.payloads import EngineId, MetricsScrape, ScanStats
from dflash_doctor.evidence.serialise import to_jsonable
from dflash_doctor.hosts.bundle import BundleHost, _dec
from dflash_doctor.hosts.local import LocalHost
from dflash_doctor.parse import formats as F
from dflash_doctor.parse.fast.routes import MAIN_PASS, route
from tests.conftest import FIXTURES

# Server logs. The client tools' summaries (`vllm bench serve`, the offline example, trtllm-bench) are not in a
# server's log, and the host's log filter (one grep on the host) carries only the server formats of the main grep
# pass (parse/fast/routes.py: SERVER_LITERALS; not llama.cpp's or SGLang's request-log lines), so only the fixtures
# of those formats can read the same both ways.
_HOST_FORMATS = {f.id for f in F.FORMATS if route(f).server and route(f).grep_pass == MAIN_PASS}
_EXPECTED = json.loads((FIXTURES / "logs" / "EXPECTED.json").read_text())
LOGS = sorted(
    p
    for p in (FIXTURES / "logs").iterdir()
    if p.is_file()
    and p.suffix in (".log", ".jsonl")
    and set(_EXPECTED.get(p.name, {}).get("formats", ["?"])) <= _HOST_FORMATS
)
BUNDLES = sorted(p for p in (FIXTURES / "hosts").iterdir() if (p / "manifest.json").exists())


def _picture(ev) -> dict:
    """What both paths must agree on, without where it came from."""
    acc = ev.get(AcceptanceSummary)
    st = ev.get(StartupFacts)
    eng = ev.get(EngineId)
    d = to_jsonable(acc)
    if d is not None:
        d["series"] = [{k: v for k, v in s.items() if k != "source"} for s in d["series"]]
        d["per_engine"] = [{k: v for k, v in e.items() if k != "source"} for e in d["per_engine"]]
    return {
        "acceptance": d,
        "acceptance_missing": None if acc is not None else ev.why_missing(AcceptanceSummary),
        "startup": None if st is None else {k: v for k, v in to_jsonable(st).items() if k != "lines"},
        "engine": None if eng is None else (eng.name, eng.version),
        "intervals": ev.get(ScanStats).intervals if ev.get(ScanStats) else None,
        "formats": dict(ev.get(ScanStats).formats) if ev.get(ScanStats) else None,
    }


def _host_path(path: Path):
    """The collector's own log step: its fixed filter script run by a real shell here, then the builder."""
    c = HostCollector(LocalHost(), HostOptions(log=str(path)))
    c._run_log(*c._log_command(None))
    c.build.engine_from_startup("no engine")
    return c.ev


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_diagnose_and_check_host_read_a_log_the_same_way(path):
    files = _picture(gather_files(FileInputs(logs=[str(path)])))
    host = _picture(_host_path(path))
    assert host == files


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name)
def test_check_bundle_and_diagnose_on_its_log_lines_agree(bundle, tmp_path):
    host = BundleHost(str(bundle))
    opts = host.manifest.options
    replay = collect_host(host, HostOptions(log=opts.log, pid=opts.pid))
    # the bytes the bundle's log filter returned, as a file `diagnose` reads
    calls = [json.loads(x) for x in (bundle / "calls.jsonl").read_text().splitlines()]
    logs = [_dec(c["stdout"]) for c in calls if c.get("op") == "run" and "SpecDecoding metrics" in " ".join(c["argv"])]
    assert len(logs) == 1
    log = tmp_path / "filtered.log"
    log.write_bytes(logs[0])
    files = _picture(gather_files(FileInputs(logs=[str(log)])))
    host = _picture(replay)
    host["engine"] = files["engine"] = None  # the host path reads the installed package's version instead
    assert host == files


def test_a_log_without_k_is_missing_acceptance_on_every_path_never_nan(tmp_path):
    """vLLM 0.8.3 prints Drafted but neither drafts nor k: without k from its startup lines, no τ can be had."""
    src = (FIXTURES / "logs" / "vllm-0.8.3.log").read_text().splitlines()
    lines = [x for x in src if "SpecDecoding metrics" in x]
    assert lines and len(lines) < len(src)
    log = tmp_path / "no-k.log"
    log.write_text("\n".join(lines) + "\n")
    for ev in (gather_files(FileInputs(logs=[str(log)])), _host_path(log)):
        acc = ev.get(AcceptanceSummary)
        assert acc is None or (acc.drafts > 0 and not math.isnan(acc.mean_acceptance_length))
        if acc is None:
            assert "drafts" in ev.why_missing(AcceptanceSummary)


@pytest.mark.ssh
def test_check_host_uses_the_metrics_it_scraped_when_the_log_has_no_numbers(tmp_path):
    """The host path stored /metrics as raw text that no code read; now the builder reads its counters."""
    from tests.hosts.fakedeploy import build, scenarios, start_server, stop_server

    dep = build(tmp_path / "deploy", scenarios()["seed"])
    dep.log.write_text("(APIServer pid=1) INFO 05-14 09:11:52 [api_server.py:1] starting, no metrics yet\n")
    start_server(dep)
    try:
        ev = collect_host(LocalHost(), HostOptions(pid=dep.proc.pid))
    finally:
        stop_server(dep)
    acc = ev.get(AcceptanceSummary)
    assert ev.get(MetricsScrape) is not None and ev.get(MetricsScrape).scraped_on_host
    assert acc is not None and acc.formats == ("vllm-metrics",)
    assert acc.mean_acceptance_length == pytest.approx(1.18, abs=0.01)
    assert ev.item(AcceptanceSummary).source.kind == "url"


def test_the_launch_commands_k_settles_a_log_that_prints_none(tmp_path):
    """Issue 13 item 5: 0.8.3 lines print Drafted but not k; the launch command's k turns them into drafts."""
    src = (FIXTURES / "logs" / "vllm-0.8.3.log").read_text().splitlines()
    log = tmp_path / "no-k.log"
    log.write_text("\n".join(x for x in src if "SpecDecoding metrics" in x) + "\n")
    startup_k = gather_files(FileInputs(logs=[str(FIXTURES / "logs" / "vllm-0.8.3.log")])).get(AcceptanceSummary)
    k = startup_k.k
    launch = (
        f'vllm serve Q --speculative-config \'{{"method": "eagle3", "model": "D", "num_speculative_tokens": {k}}}\''
    )
    ev = gather_files(FileInputs(logs=[str(log)], launch=launch))
    acc = ev.get(AcceptanceSummary)
    assert acc is not None and acc.k == k
    assert acc.mean_acceptance_length == pytest.approx(startup_k.mean_acceptance_length, abs=1e-9)
