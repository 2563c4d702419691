"""In CI the SSH and Prometheus tests must run against the real servers, never skip: `.ci/run` installs
them and sets DFLASH_DOCTOR_CI=1, so a missing package fails here instead of turning those suites into
skips that still read green."""

from __future__ import annotations

import os

import pytest

from tests.prometheus.promserver import prometheus_available
from tests.sshd import sshd_available


@pytest.mark.skipif(os.environ.get("DFLASH_DOCTOR_CI") != "1", reason="only where .ci/run says it is CI")
@pytest.mark.parametrize("what, reason", [("sshd", sshd_available), ("prometheus", prometheus_available)])
def test_the_real_servers_are_there_in_ci(what, reason):
    assert reason() is None, f"{what}: {reason()}"
