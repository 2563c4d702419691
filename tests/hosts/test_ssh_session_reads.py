"""The shared remote shell's reader (hosts/ssh.py `_Session`) on a scripted channel: what arrives in one read
is judged by where the greeting is, whatever the timing of the reader thread."""

from __future__ import annotations

import base64
import os
import threading
import time
from types import SimpleNamespace

from dflash_doctor.hosts.ssh import _Session


class ScriptedChannel:
    """Answers the driver's protocol: the greeting on both streams, then, once a command is sent, its whole
    output and trailer at once — as a reader thread that was late finds them (greeting and output in one read)."""

    def __init__(self, output: bytes, rc: int = 0):
        self.output, self.rc = output, rc
        self.key = b""
        self.out: list[bytes] = []
        self.err: list[bytes] = []
        self.lock = threading.Lock()
        self.closed = self.eof_received = False
        self._idle = os.pipe()  # what the reader's select() waits on between reads (never readable)

    def fileno(self) -> int:
        return self._idle[0]

    def sendall(self, data: bytes) -> None:
        with self.lock:
            if not self.key:
                self.key = data.strip()
                return
            k = self.key
            trailer = k + b" R %d\n" % self.rc + k + b" E " + base64.b64encode(b"") + b"\n"
            self.out.append(k + b" OK\n" + self.output + trailer)
            self.err.append(k + b" OK\n")

    def _recv(self, queue: list[bytes], n: int) -> bytes:
        with self.lock:
            data = queue[0][:n]
            queue[0] = queue[0][n:]
            if not queue[0]:
                queue.pop(0)
            return data

    def recv_ready(self) -> bool:
        return bool(self.out)

    def recv_stderr_ready(self) -> bool:
        return bool(self.err)

    def recv(self, n: int) -> bytes:
        return self._recv(self.out, n)

    def recv_stderr(self, n: int) -> bytes:
        return self._recv(self.err, n)


def test_a_greeting_read_with_megabytes_of_output_is_no_flood():
    """Before: the greeting and 3 MB of the first command's output in one read were taken for an rc file
    flooding its output (more than 1 MiB before the session was ready); the command then ran again on a
    channel of its own and every byte crossed twice (the SSH large-output test failed under load)."""
    out = b"\0" * 3_000_000
    chan = ScriptedChannel(out)
    host = SimpleNamespace(bytes_received=0, bytes_sent=0, _abandoned=[])
    session = _Session(host, chan)
    job = session.submit(("sh", "-c", "head -c 3000000 /dev/zero"), 1000, False)
    assert job is not None and job.done.wait(60)
    assert not job.retry and job.error is None
    assert job.rc == 0 and job.truncated and bytes(job.out) == out[:1000]
    assert not session.dead


def test_chatter_past_1_mib_before_the_greeting_is_a_flood():
    """An rc file printing more than 1 MiB before the greeting: the session gives up and the command runs on a
    channel of its own (retry), as before."""
    chan = ScriptedChannel(b"ok\n")
    host = SimpleNamespace(bytes_received=0, bytes_sent=0, _abandoned=[])
    session = _Session(host, chan)
    with chan.lock:
        chan.out.append(b"motd " * ((1 << 20) // 5 + 10))  # the login shell's chatter, before any greeting
    deadline = time.monotonic() + 60  # (bounds a hang)
    while not session.dead and time.monotonic() < deadline:
        time.sleep(0.01)
    assert session.dead
    assert session.submit(("true",), 1000, False) is None  # the caller runs it on a channel of its own
