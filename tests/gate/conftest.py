"""Gate tests run as if outside GitHub Actions unless a test says otherwise, so running this suite
inside a GitHub job never writes to that job's real step summary."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli


@pytest.fixture
def cli():
    def run(*args, env=None, **kw):
        return run_cli(*args, env={"GITHUB_ACTIONS": "", "GITHUB_STEP_SUMMARY": "", **(env or {})}, **kw)

    return run
