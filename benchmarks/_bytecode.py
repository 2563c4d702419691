"""Benchmarks time the package as an install runs it: with its bytecode compiled.

An installed wheel has its .pyc files written at install time. A checkout run with
PYTHONDONTWRITEBYTECODE=1 (some shells and CI images set it) never writes them, so every timed
run compiles every module again in memory: ~0.3 s of a `logs` run here, more than the figure being
measured. Compile once, before timing, whatever the environment says.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ensure_compiled() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    dirs = [str(ROOT / d) for d in ("dflash_doctor", "checks") if (ROOT / d).is_dir()]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *dirs],
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
