"""SSH hosts on paramiko, behaving the way OpenSSH users expect.

~/.ssh/config (HostName, User, Port, IdentityFile, IdentitiesOnly, ProxyJump, ConnectTimeout,
UserKnownHostsFile), the agent and key files, and known_hosts *verified*: an unknown or changed
host key refuses the connection with its SHA256 fingerprint and the command that trusts it.
Passwords are never asked for nor accepted. Every remote command is an argv list joined with
shlex.quote, so no word the user or a remote file supplied is ever interpreted by the remote shell.
"""

from __future__ import annotations

import base64
import contextlib
import getpass
import hashlib
import logging
import os
import re
import select
import shlex
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..textsafe import command as pasteable
from . import known_hosts as KH
from .interface import CommandResult, Host, HostError, _os_error
from .ssh_config import _safe as safe
from .ssh_config import check_host_name, lookup

DEFAULT_CONNECT_TIMEOUT = 10.0
# How much output past a command's limit is still drained (and dropped) to collect its exit status.
DRAIN_SLACK = 16 << 20

# paramiko's transport thread logs failures (a stalled banner, a reset) with a traceback; without a
# handler Python prints them on stderr. Every such failure already reaches the user as one HostError line.
logging.getLogger("paramiko").addHandler(logging.NullHandler())


@dataclass(frozen=True)
class SSHTarget:
    alias: str  # what the user typed (an ssh_config Host alias or a hostname)
    user: str | None = None
    port: int | None = None


_SPEC = re.compile(
    r"^(?:ssh://)?(?:(?P<user>[^@/:\s]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^@/:\s\[\]]+)(?::(?P<port>\d{1,5}))?/?$"
)


def parse_target(spec: str) -> SSHTarget:
    """`ssh://[user@]host[:port]`, `user@host`, or an ssh_config alias. Passwords in the URL are refused."""
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in spec.strip()):  # would forge known_hosts lines or escapes
        raise HostError(f"{_safe(spec)!r} is not a host: it holds control characters")
    m = _SPEC.match(spec.strip())
    if not m:
        if re.match(r"^(?:ssh://)?[^@/\s]+:[^@/\s]*@", spec):
            raise HostError(
                f"{_safe(spec)}: passwords are not accepted on the command line",
                hint="use an SSH key or the agent (ssh-add), configured in ~/.ssh/config",
            )
        raise HostError(f"{_safe(spec)} is not a host (expected ssh://[user@]host[:port])")
    port = int(m["port"]) if m["port"] else None
    if port is not None and not 0 < port < 65536:
        raise HostError(f"{_safe(spec)}: port {port} is out of range")

    check_host_name("host name", m["host"], spec)
    if m["user"]:
        check_host_name("user name", m["user"], spec)
    return SSHTarget(alias=m["host"].strip("[]"), user=m["user"], port=port)


def _safe(spec: str) -> str:
    return safe(spec)


def fingerprint(key) -> str:
    """OpenSSH's SHA256 fingerprint of a public key (`ssh-keygen -lf` prints the same)."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")


def _revoked(host: SSHHost, key) -> str:
    return (
        f"{host.name}: the host key {key.get_name()} {fingerprint(key)} is REVOKED in known_hosts (@revoked) — "
        f"refusing to connect"
    )


# One remote shell for many commands. Every channel's command starts the user's login shell, which
# runs its rc files (pyenv/conda init: often 0.1-0.4 s of CPU each); a host checked with one
# command per channel pays that per command. The driver below is started once per connection and
# runs, in order, the argv lists it receives on stdin (each word base64-encoded: values are never
# parsed by the shell, `"$@"` runs them as they are), each with stdin from /dev/null. A command's
# stdout comes back raw on the channel's stdout, followed by `KEY R rc` and `KEY E b64(stderr)`;
# KEY is a random per-connection token sent on stdin (never in argv), so no output can forge a
# frame. Its stderr is capped at 64 KiB on the host (the rest is read and dropped, never fatal).
# One "bulk" command (the log filter) may run alongside, in the background, framed the same way on
# the channel's stderr. The driver checks that base64 works (GNU coreutils) and says OK (on both
# streams: what the login shell printed before it is dropped) or NO.
SESSION_DRIVER = r"""exec 3>&1 4>&2 2>/dev/null
IFS= read -r k || exit 0
if [ "$(printf eA== | base64 -d)" = x ] && [ "$(printf x | base64 -w0)" = eA== ]; then printf '%s OK\n' "$k"; printf '%s OK\n' "$k" >&4
else printf '%s NO\n' "$k"; exit 0; fi
job() {
  o=$1; shift
  e=$( { "$@" </dev/null 2>&1 >&"$o" 3>&- 4>&-; printf '%s R %s\n' "$k" "$?" >&"$o"; } | { head -c 65536; cat >/dev/null; } | base64 -w0 )
  printf '%s E %s\n' "$k" "$e" >&"$o"
}
while IFS=' ' read -r m n; do
  case $n in ''|*[!0-9]*) exit 0 ;; esac
  set --
  while [ "$n" -gt 0 ]; do IFS= read -r w || exit 0; x=$(printf '%s' "$w" | base64 -d; echo .); set -- "$@" "${x%.}"; n=$((n-1)); done
  case $m in B) job 4 "$@" & ;; *) job 3 "$@" ;; esac
done"""  # noqa: E501 -- shell text sent verbatim; its long lines are single commands
SESSION_STDERR_CAP = 65536


class _Job:
    def __init__(self, argv: tuple[str, ...], max_bytes: int):
        self.argv, self.max_bytes = argv, max_bytes
        self.out = bytearray()
        self.err = b""
        self.rc: int | None = None
        self.received = 0
        self.truncated = False
        self.error: str | None = None
        self.retry = False  # not run by the session: run it on a channel of its own
        self.abandoned = False  # its caller stopped waiting (timeout); its output is still parsed and dropped
        self.done = threading.Event()

    def add(self, data: bytes) -> bool:
        """Keep up to max_bytes; False when the output floods far past its limit."""
        self.received += len(data)
        room = self.max_bytes - len(self.out)
        if room > 0:
            self.out += data[:room]
        if len(data) > room:
            self.truncated = True
        return not (self.truncated and self.received > 2 * self.max_bytes + DRAIN_SLACK)


class _Session:
    """The SESSION_DRIVER on one channel, with a reader thread that hands each frame to its command."""

    def __init__(self, host: SSHHost, chan):
        self.host, self.chan = host, chan
        self.key = os.urandom(16).hex().encode()
        self.lock = threading.Lock()
        self.fg: list[_Job] = []  # in the order sent; the driver runs them in that order
        self.bulk: _Job | None = None
        self.fg_ok = self.bulk_ok = True  # False once a command there timed out (the slot stays busy)
        self.dead = False
        self.ready = {"out": False, "err": False}  # each stream is read from its own "KEY OK" line on
        self._buf = {"out": bytearray(), "err": bytearray()}
        self._trailer = re.compile(
            re.escape(self.key) + rb" R (-?\d+)\n" + re.escape(self.key) + rb" E ([A-Za-z0-9+/=]*)\n"
        )
        chan.sendall(self.key + b"\n")
        host.bytes_sent += len(self.key) + 1
        threading.Thread(target=self._read, name="ssh-session", daemon=True).start()

    def submit(self, argv: tuple[str, ...], max_bytes: int, bulk: bool) -> _Job | None:
        job = _Job(argv, max_bytes)
        words = "".join(base64.b64encode(a.encode("utf-8", "surrogateescape")).decode("ascii") + "\n" for a in argv)
        req = f"{'B' if bulk else 'F'} {len(argv)}\n{words}".encode("ascii")
        with self.lock:
            if self.dead or not (self.bulk_ok and self.bulk is None if bulk else self.fg_ok):
                return None
            # registered before it is sent: its answer can arrive before sendall returns
            if bulk:
                self.bulk = job
            else:
                self.fg.append(job)
            try:
                self.chan.sendall(req)
            except Exception:  # the channel is gone: this command goes on a channel of its own
                if bulk:
                    self.bulk = None
                else:
                    self.fg.remove(job)
                return None
            self.host.bytes_sent += len(req)
        return job

    def gave_up(self, job: _Job, bulk: bool) -> None:
        """The caller stopped waiting: the driver is still busy with it, so send nothing more there."""
        with self.lock:
            job.abandoned = True
            if bulk:
                self.bulk_ok = False
                return
            self.fg_ok = False
            behind = self.fg[self.fg.index(job) + 1 :] if job in self.fg else []
        for j in behind:  # sent, but queued behind a stuck command: their callers use a channel of their own
            j.abandoned = j.retry = True
            j.done.set()

    def _fail(self, error: str | None, retry: bool) -> None:
        with self.lock:
            self.dead = True
            jobs = self.fg + ([self.bulk] if self.bulk else [])
            self.fg, self.bulk = [], None
        for j in jobs:
            if not j.done.is_set():
                j.retry = retry and not j.received  # nothing of it arrived: safe to run again elsewhere
                j.error = None if j.retry else error
                j.done.set()

    def _feed(self, which: str) -> bool:
        """Hand the stream's buffered bytes to its command(s). False on a protocol error or a flood."""
        buf = self._buf[which]
        while True:
            with self.lock:
                job = (self.fg[0] if self.fg else None) if which == "out" else self.bulk
            if job is None:
                return not buf  # output nobody asked for: the driver is not speaking the protocol
            idx = buf.find(self.key)
            # without the key in sight, keep its possible first bytes back for the next read
            take = idx if idx >= 0 else len(buf) - (len(self.key) - 1)
            if take > 0:
                ok = job.add(bytes(buf[:take]))
                del buf[:take]
                if not ok:
                    job.error = f"stopped reading: its output passed the {job.max_bytes}-byte limit"
                    job.done.set()
                    return False
            if idx < 0:
                return True
            m = self._trailer.match(buf)
            if m is None:
                # wait for the two trailer lines; anything else after the key is a broken frame
                return buf.count(b"\n") < 2 and len(buf) < 4 * SESSION_STDERR_CAP
            job.rc = int(m.group(1))
            job.err = base64.b64decode(m.group(2))
            if len(job.err) >= SESSION_STDERR_CAP or len(job.err) > job.max_bytes:
                job.truncated = True
                job.err = job.err[: job.max_bytes]
            del buf[: m.end()]
            with self.lock:
                if which == "out":
                    self.fg.pop(0)
                else:
                    self.bulk = None
            job.done.set()

    def _greet(self, which: str) -> bool:
        """Read the stream's "KEY OK" line once: what came before it is the login shell's own chatter, what
        comes after it (in the same read, however much) the first command's. False when the driver said NO
        (no GNU base64) or when more than 1 MiB came without the greeting (an rc file flooding its output)."""
        buf = self._buf[which]
        if self.ready[which]:
            return True
        i = buf.find(self.key + b" OK\n")
        if i >= 0:
            del buf[: i + len(self.key) + 4]
            self.ready[which] = True
            return True
        return not ((which == "out" and self.key + b" NO\n" in buf) or len(buf) > (1 << 20))

    def _read(self) -> None:
        chan = self.chan
        try:
            while True:
                got = False
                for ready, recv, which in (
                    (chan.recv_ready, chan.recv, "out"),
                    (chan.recv_stderr_ready, chan.recv_stderr, "err"),
                ):
                    while ready():
                        data = recv(1 << 16)
                        if not data:
                            break
                        got = True
                        self.host.bytes_received += len(data)
                        self._buf[which] += data
                if not (self._greet("out") and self._greet("err")):
                    self._fail(None, retry=True)  # no GNU base64, or an rc file that floods its output
                    return
                if not ((not self.ready["out"] or self._feed("out")) and (not self.ready["err"] or self._feed("err"))):
                    self._fail("the remote shell session broke off", retry=True)
                    self.host._abandoned.append(chan)
                    return
                if (chan.closed or chan.eof_received) and not chan.recv_ready() and not chan.recv_stderr_ready():
                    self._fail("the connection dropped before the command finished", retry=not self.ready["out"])
                    return
                if not got:
                    select.select([chan], [], [], 0.02)
        except Exception as exc:  # paramiko's SSHException, EOFError, socket errors
            # what arrived before the drop is the command's: handed over first (it was read into the
            # buffer on this pass, the hand-over comes after the reads; the greeting may be in that read too)
            for which in ("out", "err"):
                try:
                    if self._greet(which) and self.ready[which]:
                        self._feed(which)
                except Exception:  # noqa: BLE001 - the drop is what gets reported
                    pass
            self._fail(f"the connection dropped: {exc}", retry=False)

    def close(self) -> None:
        self._fail("the connection was closed", retry=False)
        _close_quietly(self.chan)


class SSHHost(Host):
    """One SSH connection, opened on construction; reused for every command of a collection."""

    _client: Any  # the paramiko.SSHClient, set once connected (paramiko ships no type information)

    def __init__(  # noqa: C901 -- SSH connect: config, agent, keys, known_hosts and proxy each refuse in their own words
        self,
        spec: str,
        *,
        accept_new_host_key: bool = False,
        ssh_config: str | None = None,
        known_hosts: str | None = None,
        identity_files: Sequence[str] = (),
        connect_timeout: float | None = None,
        allow_exec: bool = False,
        _depth: int = 0,
        _proxy_jump: str | None = None,
    ):
        import paramiko  # imported here so the CLI stays fast when SSH is not used

        self._paramiko = paramiko
        target = parse_target(spec)
        cfg = lookup(target.alias, ssh_config, allow_exec)
        self.hostname = cfg.get("hostname", target.alias)
        self.user = target.user or cfg.get("user") or _local_user()
        self.port = target.port or int(cfg.get("port", 22))
        self.name = f"ssh://{self.user}@{self.hostname}" + (f":{self.port}" if self.port != 22 else "")
        if target.alias != self.hostname:
            self.name = f"ssh://{self.user}@{target.alias}"
        self.bytes_received = 0
        self.bytes_sent = 0
        self.commands: list[tuple[str, ...]] = []
        self._lock = threading.Lock()
        self._abandoned: list = []  # channels stopped at their output limit; closed with the connection
        self._session: _Session | None = None
        self._session_lock = threading.Lock()
        self._session_tried = False
        self.shells_started = 0  # remote login shells started: one per channel command, one per session
        self._jump: SSHHost | None = None
        timeout = connect_timeout or _float(cfg.get("connecttimeout")) or DEFAULT_CONNECT_TIMEOUT
        kh_files = [
            os.path.expanduser(p)
            for p in ([known_hosts] if known_hosts else (cfg.get("userknownhostsfile", "~/.ssh/known_hosts").split()))
        ]
        self.known_hosts = kh_files[0]
        keys = [os.path.expanduser(k) for k in (list(identity_files) or cfg.get("identityfile", []))]
        keys = [k for k in keys if os.path.exists(k)]
        identities_only = str(cfg.get("identitiesonly", "no")).lower() == "yes"

        sock = None
        jump = _proxy_jump if _proxy_jump is not None else cfg.get("proxyjump")
        if jump and jump.lower() != "none":
            if _depth > 4:
                raise HostError(f"{self.name}: ProxyJump chain too long")
            # "a,b,c": c is the hop next to us, reached through a then b (as OpenSSH does)
            hops = [h.strip() for h in jump.split(",") if h.strip()]
            first = hops[-1]
            self._jump = SSHHost(
                first,
                accept_new_host_key=accept_new_host_key,
                ssh_config=ssh_config,
                known_hosts=known_hosts,
                connect_timeout=timeout,
                allow_exec=allow_exec,
                _depth=_depth + 1,
                _proxy_jump=",".join(hops[:-1]) if len(hops) > 1 else None,
            )
            try:
                sock = self._jump._client.get_transport().open_channel(
                    "direct-tcpip", (self.hostname, self.port), ("127.0.0.1", 0), timeout=timeout
                )
            except Exception as exc:
                self._jump.close()
                raise HostError(
                    f"{self.name}: the jump host {first} could not reach {self.hostname}:{self.port} ({exc})"
                ) from None

        client = paramiko.SSHClient()
        # known_hosts read line by line (paramiko's reader fails on @cert-authority / @revoked lines and on
        # any damaged line); the keys for this host, wildcards and hashed names resolved, go to paramiko.
        self._known = KH.load([*KH.system_paths(), *kh_files[1:], self.known_hosts])
        known = KH.known_name(self.hostname, self.port)
        for key in self._known.keys_for(known):
            client.get_host_keys().add(known, key.get_name(), key)

        def cert_first(sock_, **kw):  # a CA vouches for this host: ask for its certificate first
            t = paramiko.Transport(sock_, **kw)
            t.get_security_options().key_types = KH.cert_key_types()
            return t

        vouched = self._known.authorities_for(known) and not self._known.keys_for(known)
        transport_factory = cert_first if vouched else None
        client.set_missing_host_key_policy(_Policy(self, accept_new_host_key))
        try:
            client.connect(
                self.hostname,
                port=self.port,
                username=self.user,
                password=None,
                key_filename=keys or None,
                allow_agent=not identities_only,
                look_for_keys=not identities_only and not keys,
                timeout=timeout,
                banner_timeout=timeout,
                auth_timeout=timeout,
                sock=sock,
                transport_factory=transport_factory,
            )
        except HostError:
            self._close_partial(client)
            raise
        except paramiko.BadHostKeyException as exc:
            self._close_partial(client)
            if self._known.is_revoked(exc.key):
                raise HostError(_revoked(self, exc.key)) from None
            raise HostError(
                f"{self.name}: the host key CHANGED — refusing to connect. It now presents {exc.key.get_name()} "
                f"{fingerprint(exc.key)}; {self.known_hosts} expects {fingerprint(exc.expected_key)}",
                hint=f"this can be an attack. If the host was really reinstalled, verify the new fingerprint with its "
                f"administrator, then run: {pasteable('ssh-keygen', '-R', known, '-f', self.known_hosts)}",
            ) from None
        except paramiko.AuthenticationException:
            self._close_partial(client)
            raise HostError(
                f"{self.name}: authentication failed for user {self.user}",
                hint="dflash-doctor uses SSH keys only: load one into the agent (ssh-add) or set "
                "IdentityFile for this host in ~/.ssh/config",
            ) from None
        except paramiko.SSHException as exc:
            transport = client.get_transport()
            self._close_partial(client)
            if transport is None or not getattr(transport, "remote_version", ""):
                # No SSH banner came back: paramiko's own words for it ("No existing session", "Error reading
                # SSH protocol banner") do not say what happened.
                raise HostError(
                    f"{self.name}: no SSH server answered within {timeout:g} s (the connect timeout): the TCP "
                    f"connection to {self.hostname}:{self.port} opened, but no whole SSH banner came back",
                    hint="is sshd (and not another service) listening on that port, and is the host "
                    "not overloaded? Raise ConnectTimeout in ~/.ssh/config for a slow host",
                ) from exc
            raise HostError(f"{self.name}: SSH failed: {exc}") from None
        except TimeoutError:
            self._close_partial(client)
            raise HostError(
                f"{self.name}: timed out connecting after {timeout:g}s",
                hint="check the address and port, or raise ConnectTimeout in ~/.ssh/config",
            ) from None
        except paramiko.ssh_exception.NoValidConnectionsError as exc:
            self._close_partial(client)
            errs = list(exc.errors.values())
            if errs and all(isinstance(e, ConnectionRefusedError) or getattr(e, "errno", None) == 111 for e in errs):
                raise HostError(
                    f"{self.name}: connection refused on port {self.port}",
                    hint="is sshd running there, and is the port right?",
                ) from exc
            raise HostError(f"{self.name}: cannot connect ({'; '.join(str(e) for e in errs) or exc})") from None
        except ConnectionRefusedError:
            self._close_partial(client)
            raise HostError(
                f"{self.name}: connection refused on port {self.port}",
                hint="is sshd running there, and is the port right?",
            ) from None
        except socket.gaierror as exc:
            self._close_partial(client)
            raise HostError(f"{self.name}: cannot resolve {self.hostname} ({exc.strerror or exc})") from None
        except OSError as exc:
            self._close_partial(client)
            raise HostError(f"{self.name}: cannot connect ({exc.strerror or exc})") from None
        self._client = client

    # -- connection ---------------------------------------------------------------------------
    def _close_partial(self, client) -> None:
        try:
            client.close()
        finally:
            if self._jump:
                self._jump.close()

    def close(self) -> None:
        session = getattr(self, "_session", None)
        if session is not None:
            session.close()
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()
        if self._jump is not None:
            self._jump.close()

    # -- commands -----------------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        timeout: float = 30.0,
        max_bytes: int = 16 << 20,
        stdin: bytes | None = None,
        on_stderr=None,
        bulk: bool = False,
    ) -> CommandResult:
        argv = tuple(str(a) for a in argv)
        self.commands.append(argv)
        if stdin is None and on_stderr is None:
            t0 = time.monotonic()
            res = self._run_in_session(argv, timeout, max_bytes, bulk)
            if res is not None:
                return res
            timeout = max(0.1, timeout - (time.monotonic() - t0))
        return self._run_channel(argv, timeout, max_bytes, stdin, on_stderr)

    def _get_session(self) -> _Session | None:
        with self._session_lock:
            if self._session is None and not self._session_tried:
                self._session_tried = True
                transport = self._client.get_transport()
                if transport is None or not transport.is_active():
                    return None
                try:
                    chan = transport.open_session(timeout=30.0)
                    chan.settimeout(None)
                    command = "sh -c " + shlex.quote(SESSION_DRIVER)
                    chan.exec_command(command)
                    self.bytes_sent += len(command)
                    self.shells_started += 1
                    self._session = _Session(self, chan)
                except (self._paramiko.SSHException, EOFError, OSError):
                    return None
            return self._session

    def _run_in_session(
        self, argv: tuple[str, ...], timeout: float, max_bytes: int, bulk: bool
    ) -> CommandResult | None:
        """The command's result through the shared remote shell, or None: run it on a channel of its own."""
        session = self._get_session()
        if session is None:
            return None
        job = session.submit(argv, max_bytes, bulk)
        if job is None:
            return None
        if not job.done.wait(timeout):
            session.gave_up(job, bulk)
            return CommandResult(
                argv,
                None,
                bytes(job.out),
                b"",
                timed_out=True,
                truncated=job.truncated,
                error=f"timed out after {timeout:g}s",
            )
        if job.retry:
            return None
        if job.error is not None:
            return CommandResult(argv, None, bytes(job.out), job.err, truncated=job.truncated, error=job.error)
        return CommandResult(argv, job.rc, bytes(job.out), job.err, truncated=job.truncated)

    def _run_channel(  # noqa: C901 -- one-channel run: stdin, streamed stderr, caps and timeout in one select loop
        self, argv: tuple[str, ...], timeout: float, max_bytes: int, stdin: bytes | None, on_stderr
    ) -> CommandResult:
        """One channel, one login shell, for this command alone (stdin, streamed stderr, or no session)."""
        command = " ".join(shlex.quote(a) for a in argv)
        transport = self._client.get_transport()
        if transport is None or not transport.is_active():
            return CommandResult(argv, None, b"", b"", error="the SSH connection was lost")
        try:
            chan = transport.open_session(timeout=min(timeout, 30.0))
            chan.settimeout(None)
            chan.exec_command(command)
            self.shells_started += 1
            self.bytes_sent += len(command)
            if stdin:
                chan.sendall(stdin)
                self.bytes_sent += len(stdin)
            chan.shutdown_write()
        except (self._paramiko.SSHException, EOFError, OSError) as exc:
            return CommandResult(argv, None, b"", b"", error=f"could not start the command: {exc}")
        out, err = bytearray(), bytearray()
        truncated = timed_out = flooded = False
        deadline = time.monotonic() + timeout
        received_at_start = self.bytes_received
        try:
            while True:
                got = False
                # The deadline is checked inside the drain loops too: a command that prints faster than
                # we read would otherwise keep these loops busy past its timeout.
                while chan.recv_ready() and time.monotonic() <= deadline:
                    data = chan.recv(1 << 16)
                    if not data:
                        break
                    got = True
                    self.bytes_received += len(data)
                    room = max_bytes - len(out)
                    out += data[:room] if room > 0 else b""
                    truncated |= len(data) > room
                while chan.recv_stderr_ready() and time.monotonic() <= deadline:
                    data = chan.recv_stderr(1 << 16)
                    if not data:
                        break
                    got = True
                    if on_stderr is not None:
                        on_stderr(data)
                    self.bytes_received += len(data)
                    room = max_bytes - len(err)
                    err += data[:room] if room > 0 else b""
                    truncated |= len(data) > room
                if (
                    chan.exit_status_ready()
                    and (chan.eof_received or chan.closed)
                    and not chan.recv_ready()
                    and not chan.recv_stderr_ready()
                ):
                    break
                if truncated and self.bytes_received - received_at_start > 2 * max_bytes + DRAIN_SLACK:
                    flooded = True
                    break
                if time.monotonic() > deadline:
                    timed_out = True
                    break
                if not got:
                    # stdout wakes select(); stderr is polled on the same short tick.
                    select.select([chan], [], [], 0.02)
        except (self._paramiko.SSHException, EOFError, OSError) as exc:
            _close_quietly(chan)
            return CommandResult(
                argv, None, bytes(out), bytes(err), truncated=truncated, error=f"the connection dropped: {exc}"
            )
        if flooded:
            # Output far past the limit: nothing more is kept, so stop reading. The channel is left
            # alone (its window fills and the command blocks) and goes when the connection closes:
            # pulling hundreds of MB more would make paramiko re-key mid-stream, which can stall, and
            # closing a channel with data in flight has broken the connection in our tests.
            self._abandoned.append(chan)
            return CommandResult(
                argv,
                None,
                bytes(out),
                bytes(err),
                truncated=True,
                error=f"stopped reading: its output passed the {max_bytes}-byte limit",
            )
        rc = None if timed_out else chan.recv_exit_status()
        _close_quietly(chan)
        if rc == -1:  # paramiko's answer when the channel closed without an exit status: the connection dropped
            return CommandResult(
                argv,
                None,
                bytes(out),
                bytes(err),
                truncated=truncated,
                error="the connection dropped before the command finished",
            )
        return CommandResult(
            argv,
            rc,
            bytes(out),
            bytes(err),
            timed_out=timed_out,
            truncated=truncated,
            error=f"timed out after {timeout:g}s" if timed_out else None,
        )

    def read_file(self, path: str, max_bytes: int = 16 << 20, timeout: float = 30.0) -> bytes:
        _absolute(path)
        res = self.run(["head", "-c", str(max_bytes), "--", path], timeout=timeout, max_bytes=max_bytes)
        if not res.ok:
            raise _os_error(res, path)
        return res.stdout

    def list_dir(self, path: str, timeout: float = 30.0) -> list[str]:
        _absolute(path)
        res = self.run(["find", path, "-mindepth", "1", "-maxdepth", "1", "-printf", "%f\\0"], timeout=timeout)
        if not res.ok:
            raise _os_error(res, path)
        return sorted(n.decode("utf-8", "surrogateescape") for n in res.stdout.split(b"\0") if n)


def _close_quietly(chan) -> None:
    # Closing sends a message; on a dead connection that raises EOFError, which must not escape run().
    with contextlib.suppress(Exception):  # EOFError, socket errors, paramiko's SSHException
        chan.close()


def _absolute(path: str) -> None:
    # An absolute path can never be mistaken for an option by head/find.
    if not path.startswith("/"):
        raise ValueError(f"remote paths must be absolute: {path!r}")


def _float(v) -> float | None:
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


def _local_user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "root"


class _Policy:
    """Unknown host keys: refuse with the fingerprint (default), or record them when the user opted in."""

    def __init__(self, host: SSHHost, accept_new: bool):
        self.host, self.accept_new = host, accept_new

    def missing_host_key(self, client, hostname, key) -> None:
        known = self.host._known
        if known.is_revoked(key):
            raise HostError(_revoked(self.host, key))
        authorities = known.authorities_for(hostname)
        cert = str(getattr(getattr(key, "public_blob", None), "key_type", "")).endswith(KH.CERT_SUFFIX)
        if authorities and cert:
            # known_hosts trusts certificates signed by these CAs for this host (@cert-authority)
            try:
                KH.verify_host_cert(key, self.host.hostname, authorities, known.revoked)
                return
            except KH.CertError as exc:
                raise HostError(
                    f"{self.host.name}: host key {key.get_name()} {fingerprint(key)} refused — known_hosts trusts "
                    f"host certificates signed by a CA for {hostname} (@cert-authority), but {exc}",
                    hint="check the host's HostCertificate with its administrator (ssh-keygen -L -f CERT)",
                ) from None
        fp = fingerprint(key)
        if not self.accept_new:
            port_opt = ["-p", str(self.host.port)] if self.host.port != 22 else []
            ca = " and it presented no certificate from the CA that known_hosts trusts for it" if authorities else ""
            raise HostError(
                f"{self.host.name}: unknown host key {key.get_name()} {fp} — refusing to connect "
                f"({hostname} is not in {self.host.known_hosts}{ca})",
                hint=f"verify the fingerprint with the host's administrator, then trust it: "
                f"{pasteable('ssh-keyscan', *port_opt, self.host.hostname)} >> {pasteable(self.host.known_hosts)}"
                f"  (or rerun with --accept-new-host-key)",
            )
        # Opt-in, like OpenSSH's StrictHostKeyChecking=accept-new: new keys are recorded, changed keys still refuse.
        client.get_host_keys().add(hostname, key.get_name(), key)
        try:
            os.makedirs(os.path.dirname(self.host.known_hosts) or ".", mode=0o700, exist_ok=True)
            with open(self.host.known_hosts, "a", encoding="ascii") as fh:
                fh.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")
        except OSError as exc:
            raise HostError(
                f"cannot record the new host key in {self.host.known_hosts}: {exc.strerror or exc}"
            ) from None
