"""Shared test helpers. Tests run against the source tree (PYTHONPATH=repo root) or an install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def run_cli(*args: str, input: str | None = None, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `python -m dflash_doctor ARGS` in a subprocess, as a user would."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("NO_COLOR", "1")
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-m", "dflash_doctor", *args], input=input, capture_output=True,
                          text=True, env=e, timeout=timeout)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
