"""Faults injected into the hosts layer: the connection cut mid-transfer, a host that stalls, a
command printing 1 GB, non-zero exits, permission denied, missing tools. Every call returns (a
CommandResult that says what went wrong, or the OSError a file call promises) within its timeout,
keeps what arrived before the fault, and never buffers more than max_bytes."""

from __future__ import annotations

import os
import resource
import time

import pytest

from dflash_doctor.hosts.interface import HostError
from dflash_doctor.hosts.local import LocalHost
from tests.hardening import tally
from tests.hardening.faults import FaultyHost, TcpProxy

MiB = 1 << 20


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.fixture
def proxy(sshd):
    p = TcpProxy(sshd.port)
    yield p
    p.close()


def _ssh(sshd, proxy, name):
    from dflash_doctor.hosts.ssh import SSHHost

    return SSHHost(proxy.alias(sshd, name), ssh_config=str(sshd.ssh_config))


@pytest.mark.ssh
def test_connection_cut_mid_transfer_keeps_what_arrived_and_reports_the_drop(sshd, proxy):
    tally.fault("ssh: connection cut mid-transfer")
    h = _ssh(sshd, proxy, "cut1")
    try:
        proxy.cut_after(2 * MiB)
        start = time.monotonic()
        res = h.run(["head", "-c", str(64 * MiB), "/dev/zero"], timeout=20, max_bytes=8 * MiB)
        assert time.monotonic() - start < 15
        assert not res.ok and res.rc is None and res.error, res
        assert 0 < len(res.stdout) <= 8 * MiB  # partial output kept
        again = h.run(["true"], timeout=5)  # the next call says the connection is gone; no exception
        assert not again.ok and again.error
        with pytest.raises(OSError):
            h.read_file("/etc/hostname", timeout=5)
    finally:
        h.close()
    tally.survived("ssh: connection cut mid-transfer")


@pytest.mark.ssh
def test_a_stalled_host_times_out_every_call_instead_of_hanging(sshd, proxy):
    tally.fault("ssh: host stalls after connecting")
    h = _ssh(sshd, proxy, "stall1")
    try:
        assert h.run(["true"], timeout=10).ok
        proxy.stall()
        start = time.monotonic()
        res = h.run(["echo", "hi"], timeout=1.5)
        assert not res.ok and (res.timed_out or "timeout" in (res.error or "").lower()), res
        with pytest.raises(OSError):
            h.read_file("/etc/hostname", timeout=1.5)
        assert time.monotonic() - start < 40  # bounded by the per-call timeouts (+ channel open wait)
    finally:
        proxy.cut()
        h.close()
    tally.survived("ssh: host stalls after connecting")


@pytest.mark.ssh
def test_a_host_that_stalls_before_the_banner_is_a_one_line_timeout(sshd, proxy):
    from dflash_doctor.hosts.ssh import SSHHost

    tally.fault("ssh: host stalls before the banner")
    proxy.stall()
    alias = proxy.alias(sshd, "stall2")
    start = time.monotonic()
    with pytest.raises(HostError) as err:
        SSHHost(alias, ssh_config=str(sshd.ssh_config), connect_timeout=1.5)
    assert time.monotonic() - start < 20
    assert "\n" not in err.value.message
    tally.survived("ssh: host stalls before the banner")


@pytest.mark.ssh
def test_a_command_printing_a_gigabyte_over_ssh_is_capped_not_buffered(sshd):
    from dflash_doctor.hosts.ssh import SSHHost

    tally.fault("ssh: command prints 1 GB")
    before = _maxrss_mib()
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        res = h.run(["head", "-c", str(1 << 30), "/dev/zero"], timeout=4, max_bytes=MiB)
        assert len(res.stdout) == MiB and res.truncated
        # A flood far past the limit is no longer read (nor pulled over the network); a command that
        # ended or timed out first reports that instead.
        assert res.timed_out or res.rc == 0 or "passed the 1048576-byte limit" in (res.error or "")
        assert h.bytes_received < 64 << 20, "the flood was pulled over the network"
        assert h.run(["true"], timeout=10).ok  # and the connection is still usable
    assert _maxrss_mib() - before < 200, "output was buffered, not capped"
    tally.survived("ssh: command prints 1 GB")


def test_a_command_printing_a_gigabyte_locally_is_capped_not_buffered():
    tally.fault("local: command prints 1 GB")
    before = _maxrss_mib()
    start = time.monotonic()
    res = LocalHost().run(["head", "-c", str(1 << 30), "/dev/zero"], timeout=60, max_bytes=MiB)
    assert res.rc == 0 and res.truncated and len(res.stdout) == MiB
    assert time.monotonic() - start < 60
    assert _maxrss_mib() - before < 100, "output was buffered, not capped"
    tally.survived("local: command prints 1 GB")


def test_nonzero_exit_permission_denied_and_missing_tools_locally(tmp_path):
    h = LocalHost()
    tally.fault("local: non-zero exit")
    res = h.run(["sh", "-c", "echo partial; echo boom >&2; exit 3"])
    assert res.rc == 3 and not res.ok and res.stdout == b"partial\n" and b"boom" in res.stderr
    tally.survived("local: non-zero exit")

    tally.fault("local: permission denied (not executable)")
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    os.chmod(script, 0o644)
    res = h.run([str(script)])
    assert not res.ok and "permission denied" in (res.error or "")
    tally.survived("local: permission denied (not executable)")

    tally.fault("local: permission denied (unprivileged read)")
    secret = tmp_path / "secret"
    secret.write_text("x")
    os.chmod(secret, 0o600)
    res = h.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", str(secret)])
    assert not res.ok and res.rc != 0 and b"Permission denied" in res.stderr
    tally.survived("local: permission denied (unprivileged read)")

    for tool in ("nvidia-smi", "python3-definitely-missing"):
        tally.fault(f"local: {tool} missing")
        res = (
            h.run([tool, "--version"])
            if tool != "nvidia-smi"
            else h.run(["env", "PATH=/nonexistent", "nvidia-smi", "-L"])
        )
        assert not res.ok and (res.error or res.rc == 127), res
        tally.survived(f"local: {tool} missing")


@pytest.mark.ssh
def test_nonzero_exit_permission_denied_and_missing_tools_over_ssh(sshd, tmp_path):
    from dflash_doctor.hosts.ssh import SSHHost

    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    os.chmod(script, 0o644)
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        for name, argv, check in [
            (
                "ssh: non-zero exit",
                ["sh", "-c", "echo partial; exit 7"],
                lambda r: r.rc == 7 and r.stdout == b"partial\n",
            ),
            ("ssh: permission denied", [str(script)], lambda r: r.rc == 126 and b"ermission denied" in r.stderr),
            ("ssh: nvidia-smi missing", ["env", "PATH=/nonexistent", "nvidia-smi"], lambda r: r.rc == 127),
            ("ssh: python3 missing", ["env", "PATH=/nonexistent", "python3", "-c", "1"], lambda r: r.rc == 127),
        ]:
            tally.fault(name)
            res = h.run(argv, timeout=10)
            assert not res.ok and check(res), (name, res)
            tally.survived(name)
        tally.fault("ssh: permission denied (file read)")
        with pytest.raises(PermissionError):
            h.read_file("/proc/1/mem")  # unreadable even for root through head
        tally.survived("ssh: permission denied (file read)")


def test_faulty_wrapper_answers_like_a_broken_host(tmp_path):
    # The wrapper used by the collection tests: check it does what it says.
    f = FaultyHost(
        LocalHost(),
        missing=("nvidia-smi", "python3"),
        denied=(str(tmp_path),),
        uname="Darwin",
        fail={"ps": (1, "ps: permission denied")},
        drop_after=6,
    )
    assert f.run(["nvidia-smi"]).rc == 127
    assert f.run(["/usr/bin/python3", "-c", "1"]).rc == 127
    assert f.run(["uname", "-s"]).text() == "Darwin\n"
    assert f.run(["ps"]).rc == 1
    with pytest.raises(PermissionError):
        f.read_file(str(tmp_path / "x"))
    assert f.run(["true"]).ok
    assert not f.run(["true"]).ok  # the 7th call: connection lost
