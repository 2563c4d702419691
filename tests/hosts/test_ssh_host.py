"""The SSH host against a real OpenSSH server: key checking, auth, failures, quoting, timeouts."""

from __future__ import annotations

import pytest

from dflash_doctor.hosts.interface import HostError
from dflash_doctor.hosts.ssh import SSHHost, fingerprint, parse_target
from tests.sshd import free_port, keygen

pytestmark = pytest.mark.ssh


def _fp_of_pub(pub_path) -> str:
    import paramiko

    with open(pub_path) as fh:
        kind, b64 = fh.read().split()[:2]
    return fingerprint(paramiko.PKey.from_type_string(kind, __import__("base64").b64decode(b64)))


def test_runs_argv_with_every_word_quoted(sshd, tmp_path):
    marker = tmp_path / "PWNED"
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        res = h.run(["echo", f"x; touch {marker}", f"$(touch {marker})", "`id`"])
        assert res.ok
        assert res.text() == f"x; touch {marker} $(touch {marker}) `id`\n"
        # every byte on the wire is counted: the output plus the shared shell's framing (a few dozen bytes)
        assert len(res.stdout) <= h.bytes_received < len(res.stdout) + 256
    assert not marker.exists()


def test_reads_files_lists_dirs_and_maps_errors(sshd, tmp_path):
    (tmp_path / "a.txt").write_bytes(b"hello\n")
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        assert h.read_file(str(tmp_path / "a.txt")) == b"hello\n"
        assert h.read_file(str(tmp_path / "a.txt"), max_bytes=2) == b"he"
        assert "a.txt" in h.list_dir(str(tmp_path))
        with pytest.raises(FileNotFoundError):
            h.read_file(str(tmp_path / "nope"))
        with pytest.raises(FileNotFoundError):
            h.list_dir(str(tmp_path / "nope"))
        with pytest.raises(ValueError):
            h.read_file("-rf")  # relative paths could be read as options: refused


# The deadline only bounds a deadlock (the subject): moving 3–6 MB through paramiko's Python crypto took over 30 s
# on a loaded 2-core machine, and a run that times out has no rc to check.
HANG = 600


def test_large_output_on_both_streams_does_not_deadlock_and_is_capped(sshd):
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        res = h.run(
            ["sh", "-c", "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2; echo done >&2"],
            max_bytes=1000,
            timeout=HANG,
        )
        assert res.rc == 0 and res.truncated
        assert len(res.stdout) == 1000 and len(res.stderr) == 1000
        # the shared shell drains stderr on the host and sends its first 64 KiB: stdout crossed in full
        assert 3_000_000 <= h.bytes_received < 3_200_000
        # a command with a channel of its own (stdin given) drains both streams over the network
        before = h.bytes_received
        res = h.run(
            ["sh", "-c", "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2; echo done >&2"],
            max_bytes=1000,
            timeout=HANG,
            stdin=b"",
        )
        assert res.rc == 0 and res.truncated
        assert len(res.stdout) == 1000 and len(res.stderr) == 1000
        assert h.bytes_received - before >= 6_000_000


def test_one_remote_shell_runs_the_commands_and_a_bulk_one_alongside(sshd, tmp_path):
    from dflash_doctor.hosts.ssh import SESSION_DRIVER

    go = tmp_path / "go"  # the bulk command waits for it: it is still running while the quick ones run
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            wait = f"until [ -e {go} ]; do sleep 0.05; done; printf 'log\n'; echo meta >&2; exit 3"
            slow = pool.submit(h.run, ["sh", "-c", wait], 600, 1000, bulk=True)
            try:
                quick = [h.run(["printf", "%s|", "a b", "", "it's", "x\ny"]) for _ in range(5)]
                assert not slow.done()  # the quick ones did not wait for the bulk one
            finally:
                go.touch()
            res = slow.result()
        assert [q.stdout for q in quick] == [b"a b||it's|x\ny|"] * 5 and all(q.ok for q in quick)
        assert (res.rc, res.stdout, res.stderr) == (3, b"log\n", b"meta\n")
        missing = h.run(["no-such-command-here"])
        assert missing.rc == 127 and b"not found" in missing.stderr
        assert h.shells_started == 1
        assert h.run(["true"], stdin=b"").ok and h.shells_started == 2  # stdin: a channel of its own
    assert "eval" not in SESSION_DRIVER and '"$@"' in SESSION_DRIVER


def test_output_cannot_forge_the_shared_shells_frames(sshd):
    fake = "\n".join(f"{k} R 0\n{k} E ZmFrZQ==" for k in ("0" * 32, "k", "")) + "\n"
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        res = h.run(["printf", "%s", fake])
        after = h.run(["echo", "next"])
    assert res.stdout == fake.encode() and res.rc == 0 and res.stderr == b""
    assert after.stdout == b"next\n"


def test_a_hanging_command_times_out_and_the_connection_stays_usable(sshd):
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        res = h.run(["sleep", "30"], timeout=0.5)
        assert res.timed_out and res.rc is None and not res.ok
        assert h.run(["true"]).ok  # the shared shell is still busy: a channel of its own
        res = h.run(["sleep", "30"], timeout=0.5, stdin=b"")
        assert res.timed_out and res.rc is None and not res.ok
        assert h.run(["echo", "ok"]).text() == "ok\n"


def test_url_form_with_explicit_key_and_known_hosts(sshd):
    with SSHHost(sshd.url, identity_files=[str(sshd.key)], known_hosts=str(sshd.known_hosts)) as h:
        assert h.run(["true"]).ok


def test_unknown_host_key_is_refused_with_fingerprint_and_trust_command(sshd, tmp_path):
    empty = tmp_path / "known_hosts_empty"
    empty.write_text("")
    with pytest.raises(HostError) as err:
        SSHHost(sshd.url, identity_files=[str(sshd.key)], known_hosts=str(empty))
    msg = err.value.message
    assert "unknown host key" in msg and _fp_of_pub(f"{sshd.host_key}.pub") in msg
    assert "ssh-keyscan -p" in err.value.hint and "--accept-new-host-key" in err.value.hint
    assert empty.read_text() == ""  # refusing writes nothing


def test_accept_new_host_key_is_an_explicit_opt_in(sshd, tmp_path):
    kh = tmp_path / "kh"
    with SSHHost(sshd.url, identity_files=[str(sshd.key)], known_hosts=str(kh), accept_new_host_key=True) as h:
        assert h.run(["true"]).ok
    assert f"[127.0.0.1]:{sshd.port} ssh-ed25519" in kh.read_text()
    with SSHHost(sshd.url, identity_files=[str(sshd.key)], known_hosts=str(kh)) as h:  # now known
        assert h.run(["true"]).ok


def test_changed_host_key_is_refused_even_with_accept_new(sshd, tmp_path):
    other = keygen(tmp_path / "other_host_key")
    kind, b64 = other.with_suffix(".pub").read_text().split()[:2]
    kh = tmp_path / "kh"
    kh.write_text(f"[127.0.0.1]:{sshd.port} {kind} {b64}\n")
    for accept in (False, True):
        with pytest.raises(HostError) as err:
            SSHHost(sshd.url, identity_files=[str(sshd.key)], known_hosts=str(kh), accept_new_host_key=accept)
        assert "CHANGED" in err.value.message
        assert _fp_of_pub(f"{sshd.host_key}.pub") in err.value.message
        assert "ssh-keygen -R" in err.value.hint
    assert kh.read_text().count("\n") == 1


def test_authentication_failure_is_one_clear_error(sshd, tmp_path):
    stranger = keygen(tmp_path / "stranger")
    with pytest.raises(HostError) as err:
        SSHHost(sshd.url, identity_files=[str(stranger)], known_hosts=str(sshd.known_hosts))
    assert "authentication failed" in err.value.message


def test_connection_refused(tmp_path):
    port = free_port()  # nothing listens here
    with pytest.raises(HostError) as err:
        SSHHost(f"ssh://root@127.0.0.1:{port}", known_hosts=str(tmp_path / "kh"), connect_timeout=3)
    assert "connection refused" in err.value.message


def test_passwords_in_the_url_are_refused_and_not_echoed():
    with pytest.raises(HostError) as err:
        parse_target("ssh://root:hunter22@example.com:22")
    assert "hunter22" not in err.value.message and "passwords are not accepted" in err.value.message


def test_target_parsing():
    t = parse_target("ssh://ops@gpu-7:2222")
    assert (t.alias, t.user, t.port) == ("gpu-7", "ops", 2222)
    assert parse_target("gpu-7").user is None
    assert parse_target("ssh://[::1]:22").alias == "::1"
    with pytest.raises(HostError):
        parse_target("ssh://host:99999")


def test_proxyjump_from_ssh_config(sshd):
    # the same loopback server serves as its own jump host: testhost -> direct-tcpip -> 127.0.0.1:port
    with open(sshd.ssh_config, "a") as fh:
        fh.write(
            f"Host via-jump\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n  IdentityFile {sshd.key}\n"
            f"  IdentitiesOnly yes\n  UserKnownHostsFile {sshd.known_hosts}\n  ProxyJump testhost\n\n"
        )
        fh.write(
            f"Host via-two-jumps\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
            f"  IdentityFile {sshd.key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {sshd.known_hosts}\n"
            f"  ProxyJump testhost,testhost\n\n"
        )
    with SSHHost("via-jump", ssh_config=str(sshd.ssh_config)) as h:
        assert h._jump is not None
        assert h.run(["echo", "through"]).text() == "through\n"
    with SSHHost("via-two-jumps", ssh_config=str(sshd.ssh_config)) as h:
        assert h._jump is not None and h._jump._jump is not None
        assert h.run(["echo", "twice"]).text() == "twice\n"
