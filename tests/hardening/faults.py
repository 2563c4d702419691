"""Fault injectors for hosts: a TCP proxy in front of a real sshd that can stall or cut the
connection (mid-transfer, after N bytes), and a Host wrapper that makes commands go missing,
fail, deny permission or answer like another OS.

    proxy = TcpProxy(sshd.port); alias = proxy.alias(sshd)   # ssh_config alias through the proxy
    proxy.cut_after(1 << 20)     # drop every connection once 1 MiB went server -> client
    proxy.stall()                # stop forwarding, keep the sockets open (a hung host)
    proxy.stall_after(4000)      # the same, by itself, once 4000 bytes went server -> client
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from dflash_doctor.hosts.interface import CommandResult, Host


def has_open(pid: int, path) -> bool:
    """Whether process `pid` has `path` open (its /proc/PID/fd links): a test that must act while a scan reads
    a file waits for this, not for a fixed time (on a loaded machine the process may still be importing)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                return True
        except OSError:
            continue
    return False


class TcpProxy:
    def __init__(self, target_port: int, host: str = "127.0.0.1"):
        self.target = (host, target_port)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self._stalled = threading.Event()
        self._cut_after: int | None = None
        self._stall_after: int | None = None
        self.down_bytes = 0  # server -> client, over all connections
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def alias(self, sshd, name: str = "proxied") -> str:
        """An ssh_config alias for the sshd through this proxy (its host key registered for our port)."""
        pub = sshd.host_key.with_suffix(".pub").read_text().split()
        with open(sshd.known_hosts, "a") as fh:
            fh.write(f"[127.0.0.1]:{self.port} {pub[0]} {pub[1]}\n")
        return sshd.add_alias(name, self.port)

    def stall(self) -> None:
        self._stalled.set()

    def resume(self) -> None:
        self._stalled.clear()

    def stall_after(self, n: int) -> None:
        """Stall by itself once `n` more bytes went server -> client: the chunk that crosses the mark is held
        too. (A test that polled the byte count and then stalled lost the race on a loaded machine, where the
        whole exchange could end between two polls.)"""
        with self._lock:
            self._stall_after = self.down_bytes + n

    def stalled(self) -> bool:
        return self._stalled.is_set()

    def cut_after(self, n: int) -> None:
        with self._lock:
            self._cut_after = self.down_bytes + n

    def cut(self) -> None:
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self._closed = True
        self.cut()
        self.listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._socks += [client, server]
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, down: bool) -> None:
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                if down:
                    with self._lock:
                        self.down_bytes += len(data)
                        over = self._cut_after is not None and self.down_bytes >= self._cut_after
                        if self._stall_after is not None and self.down_bytes >= self._stall_after:
                            self._stall_after = None
                            self._stalled.set()
                    if over:
                        self.cut()
                        return
                while self._stalled.is_set() and not self._closed:
                    time.sleep(0.05)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.close()


@dataclass
class FaultyHost(Host):
    """Wraps a live host and answers some calls as a broken one would.

    missing: commands that are not installed (exit 127, "command not found");
    fail: command -> (rc, stderr); denied: path prefixes whose reads raise PermissionError;
    uname: what `uname …` prints (e.g. "Darwin"); drop_after: after this many calls every call
    fails as a lost connection would.
    """

    inner: Host
    missing: Sequence[str] = ()
    fail: dict = field(default_factory=dict)
    denied: Sequence[str] = ()
    uname: str | None = None
    drop_after: int | None = None
    calls: list = field(default_factory=list)

    def __post_init__(self):
        self.name = getattr(self.inner, "name", "faulty")

    def __getattr__(self, item):  # byte counters, command log of the live host
        if item == "inner":
            raise AttributeError(item)
        return getattr(self.inner, item)

    def _dropped(self) -> bool:
        return self.drop_after is not None and len(self.calls) > self.drop_after

    def run(self, argv, timeout=30.0, max_bytes=16 << 20, stdin=None, **kw) -> CommandResult:
        argv = tuple(str(a) for a in argv)
        self.calls.append(("run", argv))
        if self._dropped():
            return CommandResult(argv, None, b"", b"", error="the SSH connection was lost")
        words = " ".join(argv)
        for cmd in self.missing:
            if argv and (argv[0].rsplit("/", 1)[-1] == cmd or f"{cmd} " in words or words.endswith(cmd)):
                return CommandResult(argv, 127, b"", f"sh: 1: {cmd}: not found\n".encode())
        if argv and argv[0] == "uname" and self.uname is not None:
            return CommandResult(argv, 0, (self.uname + "\n").encode(), b"")
        for cmd, (rc, err) in self.fail.items():
            if argv and argv[0] == cmd:
                return CommandResult(argv, rc, b"", err.encode())
        return self.inner.run(argv, timeout=timeout, max_bytes=max_bytes, stdin=stdin, **kw)

    def read_file(self, path, max_bytes=16 << 20, timeout=30.0) -> bytes:
        self.calls.append(("read_file", path))
        if self._dropped():
            raise OSError(f"{path}: the SSH connection was lost")
        if any(path.startswith(p) for p in self.denied):
            raise PermissionError(13, "Permission denied", path)
        return self.inner.read_file(path, max_bytes=max_bytes, timeout=timeout)

    def list_dir(self, path, timeout=30.0) -> list[str]:
        self.calls.append(("list_dir", path))
        if self._dropped():
            raise OSError(f"{path}: the SSH connection was lost")
        if any(path.startswith(p) for p in self.denied):
            raise PermissionError(13, "Permission denied", path)
        return self.inner.list_dir(path, timeout=timeout)

    def readlink(self, path, timeout=30.0) -> str:
        self.calls.append(("readlink", path))
        if self._dropped():
            raise OSError(f"{path}: the SSH connection was lost")
        return self.inner.readlink(path, timeout=timeout)

    def close(self) -> None:
        self.inner.close()
