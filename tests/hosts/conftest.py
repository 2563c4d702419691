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
