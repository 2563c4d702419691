from __future__ import annotations

import pytest

from tests.sshd import sshd_available, start_sshd


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    reason = sshd_available()
    if reason:
        pytest.skip(f"needs a real sshd: {reason}")
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def seed_deployment(tmp_path_factory):
    """The seed scenario as a running fake server (stopped at the end of the module)."""
    from tests.hosts.fakedeploy import build, scenarios, start_server, stop_server

    dep = build(tmp_path_factory.mktemp("deploy"), scenarios()["seed"])
    start_server(dep)
    yield dep
    stop_server(dep)
