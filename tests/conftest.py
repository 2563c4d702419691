"""Shared test helpers. Tests run against the source tree (PYTHONPATH=repo root) or an install."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# A suite started with SIGINT ignored (backgrounded by a non-interactive shell: `pytest … &` in a script)
# hands the ignored disposition to every child across exec, and the CLI's Ctrl-C tests then saw exit 1 where
# a user's Ctrl-C gives 130. The children get what a terminal gives them: the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_cli(
    *args: str, input: str | None = None, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run `python -m dflash_doctor ARGS` in a subprocess, as a user would."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("NO_COLOR", "1")
    if env:
        e.update(env)
    return subprocess.run(
        [sys.executable, "-m", "dflash_doctor", *args],
        input=input,
        capture_output=True,
        text=True,
        env=e,
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


# Hypothesis profiles. "ci" (the default) keeps every property test CI-sized and reproducible (the same
# examples every run: derandomized, no example database);
# `pytest --hypothesis-profile=long` runs the same properties with many more random examples.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is a test extra; tests that need it import it themselves
    pass
else:
    settings.register_profile(
        "ci",
        max_examples=100,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.register_profile(
        "long",
        max_examples=3000,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """A real OpenSSH server on a free loopback port (tests/sshd.py), one per test module."""
    from tests.sshd import sshd_available, start_sshd

    reason = sshd_available()
    if reason:
        pytest.skip(f"needs a real sshd: {reason}")
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()
