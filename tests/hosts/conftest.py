from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def seed_deployment(tmp_path_factory):
    """The seed scenario as a running fake server (stopped at the end of the module)."""
    from tests.hosts.fakedeploy import build, scenarios, start_server, stop_server

    dep = build(tmp_path_factory.mktemp("deploy"), scenarios()["seed"])
    start_server(dep)
    yield dep
    stop_server(dep)
