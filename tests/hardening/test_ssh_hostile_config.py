"""SSH client configuration an attacker or an unusual setup supplies, against a real sshd: host names
that would inject a command through `Match exec "… %h …"`, `Match exec` itself, `Include`,
`@cert-authority` / `@revoked` lines in known_hosts (and real host certificates), a stalled banner.
Each test failed before its fix (the message or behaviour it names was the bug)."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dflash_doctor.hosts.interface import HostError
from tests.conftest import ROOT, run_cli
from tests.hardening import tally
from tests.hardening.faults import TcpProxy
from tests.sshd import keygen, sshd_available, start_sshd

pytestmark = pytest.mark.ssh

# Characters OpenSSH's ssh(1) refuses in a host name given on the command line (checked against
# the system's `ssh -G` where it exists: see test_our_rule_is_openssh_rule).
REFUSED = list("'`\"$\\;&<>|(){},") + [" ", "\t"]


def _ssh(spec, sshd, **kw):
    from dflash_doctor.hosts.ssh import SSHHost

    return SSHHost(spec, ssh_config=kw.pop("ssh_config", str(sshd.ssh_config)), **kw)


def _config_with(sshd, tmp_path, text: str) -> Path:
    cfg = tmp_path / "ssh_config"
    cfg.write_text(text + "\n" + sshd.ssh_config.read_text())
    return cfg


# -- host names -----------------------------------------------------------------------------------
@pytest.mark.parametrize("ch", REFUSED)
def test_a_host_name_with_a_shell_metacharacter_is_refused_before_any_config_is_read(ch):
    from dflash_doctor.hosts.ssh import parse_target

    tally.hostile_input("ssh: metacharacter in a host name")
    with pytest.raises(HostError) as err:
        parse_target(f"ssh://deploy@gpu{ch}box")
    assert "\n" not in err.value.message  # (whitespace was refused before too, by the spec's syntax)


@pytest.mark.parametrize(
    "spec", ["ssh://-oProxyCommand=x", "ssh://u;id@host", "gpu\u202ebox", "gpu\u200fbox", "ssh://us$(id)er@host"]
)
def test_option_like_bidi_and_metacharacter_names_are_refused(spec):
    from dflash_doctor.hosts.ssh import parse_target

    tally.hostile_input("ssh: option-like or bidi host/user name")
    with pytest.raises(HostError):
        parse_target(spec)


def test_our_rule_is_openssh_rule():
    """Our refusal list is what the installed OpenSSH client refuses (Debian backports the ≥ 9.6 check)."""
    if not shutil.which("ssh"):
        pytest.skip("no ssh client")
    probe = subprocess.run(["ssh", "-F", "/dev/null", "-G", "h;x"], capture_output=True, text=True)
    if "invalid characters" not in probe.stderr:
        pytest.skip("this OpenSSH predates the host name check")
    for ch in REFUSED:
        res = subprocess.run(["ssh", "-F", "/dev/null", "-G", f"h{ch}x"], capture_output=True, text=True)
        assert "invalid characters" in res.stderr, repr(ch)
    for ch in "-._":  # and what it accepts, we accept
        from dflash_doctor.hosts.ssh import parse_target

        assert parse_target(f"h{ch}x").alias == f"h{ch}x"


def test_a_host_name_cannot_inject_a_command_through_match_exec(sshd, tmp_path):
    """`Match exec "test %h = x"` with a host named `x;touch${IFS}pwned`: before, paramiko ran
    `test x;touch${IFS}pwned = x` through a shell and the file appeared."""
    tally.hostile_input("ssh: command injection through Match exec %h")
    cfg = _config_with(sshd, tmp_path, 'Match exec "test %h = never"\n  User nobody\n')
    for allow in ([], ["--allow-ssh-exec"]):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "dflash_doctor",
                "check",
                "host",
                "x;touch${IFS}pwned",
                "--ssh-config",
                str(cfg),
                *allow,
                "--timeout",
                "5",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert res.returncode == 3, res.stderr
        assert not (tmp_path / "pwned").exists(), "the host name ran a command"
        assert "not a valid SSH target" in res.stderr + res.stdout


# -- Match exec -----------------------------------------------------------------------------------
def test_match_exec_is_refused_unless_allowed(sshd, tmp_path):
    tally.hostile_input("ssh: Match exec in ssh_config")
    marker = tmp_path / "ran"
    cfg = _config_with(sshd, tmp_path, f'Match exec "touch {marker}"\n  ServerAliveInterval 30\n')
    with pytest.raises(HostError) as err:
        _ssh("testhost", sshd, ssh_config=str(cfg))
    assert "Match exec" in err.value.message and "--allow-ssh-exec" in (err.value.hint or "")
    assert not marker.exists()
    with _ssh("testhost", sshd, ssh_config=str(cfg), allow_exec=True) as h:  # the user's own choice: run it
        assert h.run(["true"], timeout=10).ok
    assert marker.exists()


def test_match_exec_behind_a_failing_criterion_never_runs_and_needs_no_flag(sshd, tmp_path):
    marker = tmp_path / "ran"
    cfg = _config_with(sshd, tmp_path, f'Match originalhost other-host exec "touch {marker}"\n  User nobody\n')
    with _ssh("testhost", sshd, ssh_config=str(cfg)) as h:
        assert h.run(["true"], timeout=10).ok
    assert not marker.exists()


def test_match_exec_refusal_is_one_line_from_the_cli(sshd, tmp_path):
    cfg = _config_with(sshd, tmp_path, 'Match exec "true"\n  User nobody\n')
    res = run_cli("check", "host", "testhost", "--ssh-config", str(cfg), "--format", "json", timeout=60)
    assert res.returncode == 3
    assert "Match exec" in res.stderr and "internal error" not in res.stderr


# -- Include ----------------------------------------------------------------------------------------
def test_include_is_honoured(sshd, tmp_path):
    """Before, paramiko skipped `Include`: the alias defined in the included file did not resolve."""
    tally.hostile_input("ssh: Include in ssh_config")
    inc = tmp_path / "conf.d"
    inc.mkdir()
    block = sshd.ssh_config.read_text().replace("Host testhost", "Host included-host")
    (inc / "20-gpu.conf").write_text(block)
    (inc / "10-first.conf").write_text("Host included-host\n  ConnectTimeout 7\n")
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Include {inc}/*.conf\n")
    with _ssh("included-host", sshd, ssh_config=str(cfg)) as h:
        assert h.run(["true"], timeout=10).ok
    from dflash_doctor.hosts.ssh_config import lookup

    assert lookup("included-host", str(cfg))["connecttimeout"] == "7"  # lexical order, first value wins


def test_include_inside_a_host_block_applies_only_to_that_block(sshd, tmp_path):
    from dflash_doctor.hosts.ssh_config import lookup

    (tmp_path / "inner.conf").write_text("Port 2201\nHost *\n  User inner\n")
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host gpu-*\n  Include {tmp_path}/inner.conf\n  Compression yes\nHost *\n  User outer\n")
    gpu, other = lookup("gpu-1", str(cfg)), lookup("web-1", str(cfg))
    assert gpu["port"] == "2201" and gpu["user"] == "inner" and gpu["compression"] == "yes"
    assert "port" not in other and other["user"] == "outer" and "compression" not in other


def test_an_include_loop_is_a_clear_error(tmp_path):
    from dflash_doctor.hosts.ssh_config import lookup

    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Include {cfg}\n")
    with pytest.raises(HostError) as err:
        lookup("x", str(cfg))
    assert "Include nested more than" in err.value.message


# -- known_hosts markers -----------------------------------------------------------------------------
def _pub(path: Path) -> tuple[str, str]:
    t, b64 = path.with_suffix(".pub").read_text().split()[:2]
    return t, b64


def test_cert_authority_and_revoked_lines_do_not_break_connections(sshd, tmp_path):
    """Before, paramiko's reader raised InvalidHostKey on them: every connection was an internal error."""
    tally.hostile_input("ssh: @cert-authority / @revoked in known_hosts")
    other = keygen(tmp_path / "other")
    t, b64 = _pub(other)
    original = sshd.known_hosts.read_text()
    try:
        sshd.known_hosts.write_text(
            f"@cert-authority *.example.com {t} {b64}\n@revoked * {t} {b64}\n# a comment\ngarbage line\n{original}"
        )
        with _ssh("testhost", sshd) as h:
            assert h.run(["true"], timeout=10).ok
    finally:
        sshd.known_hosts.write_text(original)


def test_a_revoked_host_key_is_refused_even_when_listed_and_with_accept_new(sshd):
    tally.hostile_input("ssh: @revoked host key")
    t, b64 = _pub(sshd.host_key)
    original = sshd.known_hosts.read_text()
    try:
        sshd.known_hosts.write_text(f"@revoked * {t} {b64}\n{original}")
        for accept in (False, True):
            with pytest.raises(HostError) as err:
                _ssh("testhost", sshd, accept_new_host_key=accept)
            assert "REVOKED" in err.value.message
    finally:
        sshd.known_hosts.write_text(original)


@pytest.fixture(scope="module")
def cert_sshd(tmp_path_factory):
    """An sshd presenting a host certificate signed by a test CA, for principal 127.0.0.1."""
    reason = sshd_available()
    if reason:
        pytest.skip(reason)
    d = tmp_path_factory.mktemp("certsshd")
    ca = keygen(d / "ca")
    hk = keygen(d / "host_ed25519")
    subprocess.run(
        [
            "ssh-keygen",
            "-q",
            "-s",
            str(ca),
            "-I",
            "gpu-box",
            "-h",
            "-n",
            "127.0.0.1",
            "-V",
            "-5m:+1h",
            str(hk.with_suffix(".pub")),
        ],
        check=True,
        capture_output=True,
    )
    cert = d / "host_ed25519-cert.pub"
    server = start_sshd(d, host_key=hk, extra_config=f"HostCertificate {cert}\n")
    server.ca = ca
    yield server
    server.stop()


def _trust_ca_only(server, ca: Path, pattern: str = "[127.0.0.1]:*") -> None:
    t, b64 = _pub(ca)
    server.known_hosts.write_text(f"@cert-authority {pattern} {t} {b64}\n")


def test_a_host_certificate_from_a_trusted_ca_is_accepted(cert_sshd):
    tally.hostile_input("ssh: host certificate (@cert-authority)")
    _trust_ca_only(cert_sshd, cert_sshd.ca)
    with _ssh("testhost", cert_sshd) as h:
        assert h.run(["true"], timeout=10).ok


def test_a_host_certificate_from_another_ca_is_refused(cert_sshd, tmp_path):
    tally.hostile_input("ssh: host certificate from an untrusted CA")
    _trust_ca_only(cert_sshd, keygen(tmp_path / "other-ca"))
    for accept in (False, True):
        with pytest.raises(HostError) as err:
            _ssh("testhost", cert_sshd, accept_new_host_key=accept)
        assert "@cert-authority" in err.value.message and "CA that known_hosts does not trust" in err.value.message


def test_a_revoked_ca_is_refused(cert_sshd):
    _trust_ca_only(cert_sshd, cert_sshd.ca)
    t, b64 = _pub(cert_sshd.ca)
    with open(cert_sshd.known_hosts, "a") as fh:
        fh.write(f"@revoked * {t} {b64}\n")
    with pytest.raises(HostError):
        _ssh("testhost", cert_sshd)


def test_a_ca_for_other_hosts_vouches_for_nothing_here(cert_sshd):
    _trust_ca_only(cert_sshd, cert_sshd.ca, pattern="*.example.com")
    with pytest.raises(HostError) as err:
        _ssh("testhost", cert_sshd)
    assert "unknown host key" in err.value.message


def test_certificate_checks_principal_validity_and_type(cert_sshd, tmp_path):
    """The certificate's own fields, checked on certificates made for each failure."""
    from paramiko import Ed25519Key
    from paramiko.message import Message

    from dflash_doctor.hosts import known_hosts as KH

    ca_key = Ed25519Key.from_private_key_file(str(cert_sshd.ca))
    cases = {
        "wrong principal": (["-h", "-n", "10.0.0.9"], "not valid for"),
        "expired": (["-h", "-n", "127.0.0.1", "-V", "20200101:20200102"], "validity period"),
        "user certificate": (["-n", "127.0.0.1"], "user certificate"),
    }
    for name, (opts, expect) in cases.items():
        k = keygen(tmp_path / name.replace(" ", "-"))
        subprocess.run(
            ["ssh-keygen", "-q", "-s", str(cert_sshd.ca), "-I", "x", *opts, str(k.with_suffix(".pub"))],
            check=True,
            capture_output=True,
        )
        cert_text = (tmp_path / f"{k.name}-cert.pub").read_text().split()
        key = Ed25519Key(msg=Message(base64.b64decode(cert_text[1])))
        with pytest.raises(KH.CertError) as err:
            KH.verify_host_cert(key, "127.0.0.1", [ca_key], set())
        assert expect in str(err.value), name


# -- a stalled banner ----------------------------------------------------------------------------------
def test_a_stalled_banner_says_what_happened(sshd):
    """Before: 'SSH failed: No existing session'."""
    tally.fault("ssh: banner never comes")
    proxy = TcpProxy(sshd.port)
    try:
        alias = proxy.alias(sshd, "stalled-banner")
        proxy.stall()
        start = time.monotonic()
        with pytest.raises(HostError) as err:
            _ssh(alias, sshd, connect_timeout=1.5)
        assert time.monotonic() - start < 20
        assert "no whole SSH banner came back" in err.value.message and "No existing session" not in err.value.message
    finally:
        proxy.close()
    tally.survived("ssh: banner never comes")


def test_an_included_file_that_starts_with_an_include_is_read(tmp_path):
    """Found by mypy: an Include at the top of a file included from a Host block (no block of its own yet)
    raised TypeError (list + None) — an internal error for a config OpenSSH reads."""
    from dflash_doctor.hosts.ssh_config import expand

    (tmp_path / "b.conf").write_text("User bob\n")
    (tmp_path / "a.conf").write_text(f"Include {tmp_path}/b.conf\nPort 2222\n")
    (tmp_path / "main").write_text(f"Host gpu\n  Include {tmp_path}/a.conf\n")
    lines = [ln.strip() for ln in expand(str(tmp_path / "main"))]
    assert "User bob" in lines and "Port 2222" in lines
    assert lines.index("User bob") < lines.index("Port 2222")
