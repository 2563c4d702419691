"""A real OpenSSH server for tests: per-run host key, user key, known_hosts, on a free loopback port.

    sshd = start_sshd(tmp_path)          # SSHD(host, port, user, key, known_hosts, ssh_config, …)
    ...                                  # connect with ssh_config=sshd.ssh_config (alias "testhost")
    sshd.stop()

Reusable by any area that needs a remote host (hosts, probe). Skips cleanly without /usr/sbin/sshd.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD_BIN = "/usr/sbin/sshd"


def stop_process(proc: subprocess.Popen | None) -> None:
    """Terminate a helper process the tests started, killing it after 5 s."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def sshd_available() -> str | None:
    """None when a test sshd can run here, else the reason it cannot."""
    if not os.path.exists(SSHD_BIN):
        return f"{SSHD_BIN} is not installed (Debian package openssh-server)"
    if not shutil.which("ssh-keygen"):
        return "ssh-keygen is not installed"
    # Debian's sshd refuses to start without its (normally boot-created) privilege-separation dir.
    if not os.path.isdir("/run/sshd"):
        try:
            os.makedirs("/run/sshd", mode=0o755)
        except OSError as exc:
            return f"/run/sshd is missing and cannot be created ({exc.strerror})"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(path: Path, kind: str = "ed25519") -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", "dflash-doctor-test", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


@dataclass
class SSHD:
    host: str
    port: int
    user: str
    key: Path  # the user's private key
    known_hosts: Path  # holds this server's host key
    ssh_config: Path  # `Host testhost` -> this server, with IdentityFile and UserKnownHostsFile
    host_key: Path
    dir: Path
    proc: subprocess.Popen | None = None
    aliases: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"ssh://{self.user}@{self.host}:{self.port}"

    def add_alias(self, alias: str, port: int | None = None) -> str:
        """Another ssh_config alias for this server (or for `port`, e.g. a closed one)."""
        with open(self.ssh_config, "a") as fh:
            fh.write(_host_block(alias, self.host, port or self.port, self.user, self.key, self.known_hosts))
        self.aliases.append(alias)
        return alias

    def stop(self) -> None:
        stop_process(self.proc)


def _host_block(alias: str, host: str, port: int, user: str, key: Path, known_hosts: Path) -> str:
    return (
        f"Host {alias}\n  HostName {host}\n  Port {port}\n  User {user}\n  IdentityFile {key}\n"
        f"  IdentitiesOnly yes\n  UserKnownHostsFile {known_hosts}\n  ConnectTimeout 5\n\n"
    )


def start_sshd(tmp_path: Path, host_key: Path | None = None, port: int | None = None, extra_config: str = "") -> SSHD:
    """Start `sshd -D -e` on 127.0.0.1 for the current user; returns once it accepts connections.
    `extra_config`: more sshd_config lines (e.g. a HostCertificate)."""
    reason = sshd_available()
    if reason:
        raise RuntimeError(reason)
    d = Path(tmp_path) / "sshd"
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    host_key = host_key or keygen(d / "host_ed25519")
    user_key = d / "id_ed25519"
    if not user_key.exists():
        keygen(user_key)
    auth = d / "authorized_keys"
    auth.write_text(user_key.with_suffix(".pub").read_text())
    os.chmod(auth, 0o600)
    port = port or free_port()
    user = getpass.getuser()
    cfg = d / "sshd_config"
    cfg.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nPidFile {d / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {auth}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nStrictModes no\nUsePAM no\n"
        "MaxSessions 64\nMaxStartups 64:30:128\nLogLevel ERROR\nSubsystem sftp internal-sftp\n"
        f"AcceptEnv NONE\n{extra_config}"
    )
    pub = host_key.with_suffix(".pub").read_text().split()
    known = d / "known_hosts"
    known.write_text(f"[127.0.0.1]:{port} {pub[0]} {pub[1]}\n")
    ssh_config = d / "ssh_config"
    ssh_config.write_text(_host_block("testhost", "127.0.0.1", port, user, user_key, known))
    with open(d / "sshd.log", "ab") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen([SSHD_BIN, "-D", "-e", "-f", str(cfg)], stdout=log, stderr=log)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited: {(d / 'sshd.log').read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.settimeout(1)
                if s.recv(4).startswith(b"SSH-"):
                    break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError("sshd did not start within 10 s")
    return SSHD("127.0.0.1", port, user, user_key, known, ssh_config, host_key, d, proc, ["testhost"])
