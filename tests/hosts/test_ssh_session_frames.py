"""The SSH session reader (hosts/ssh.py `_Session`) on a scripted channel: what the remote shell sends, in the
reads a real connection may cut it into, and a drop where paramiko raises it (its `recv` sends the window
adjustment, which fails on a dead connection).

Two cases a real sshd gives only by chance (under load, `test_connection_cut_mid_transfer` failed 1 run in
5-20): the greeting and the first command's whole output in one read, then a recv that raises — the output
was lost, the drop handler fed only streams already greeted; and more than 1 MiB of that output in the
greeting's read — taken for an rc file flooding the shell, and the command run again elsewhere.
"""

from __future__ import annotations

import os
import threading
from types import SimpleNamespace

from dflash_doctor.hosts.ssh import _Session


class ScriptedChannel:
    """Enough of paramiko's Channel for the session: nothing to read until the first request arrives, then
    `script(key)` gives the stdout reads (bytes, or an exception to raise) and the stderr bytes."""

    def __init__(self, script):
        self.script = script
        self.sent: list[bytes] = []
        self.out: list[bytes | BaseException] = []
        self.err: list[bytes] = []
        self.closed = self.eof_received = False
        self._lock = threading.Lock()
        self._r, self._w = os.pipe()  # select() on the channel: never readable, so it waits its 20 ms

    def fileno(self) -> int:
        return self._r

    def sendall(self, data: bytes) -> None:
        with self._lock:
            self.sent.append(data)
            if len(self.sent) == 2:  # the key line, then the first request: the answers are due now
                key = self.sent[0].strip()
                self.out, self.err = self.script(key)

    def recv_ready(self) -> bool:
        with self._lock:
            return bool(self.out)

    def recv(self, n: int) -> bytes:
        with self._lock:
            item = self.out[0]
            if isinstance(item, BaseException):
                raise item
            self.out[0], rest = item[n:], item[:n]
            if not self.out[0]:
                self.out.pop(0)
            return rest

    def recv_stderr_ready(self) -> bool:
        with self._lock:
            return bool(self.err)

    def recv_stderr(self, n: int) -> bytes:
        with self._lock:
            return self.err.pop(0)

    def close(self) -> None:
        os.close(self._r)
        os.close(self._w)


def _host():
    return SimpleNamespace(bytes_sent=0, bytes_received=0, _abandoned=[])


def _frame(key: bytes, out: bytes, rc: int = 0) -> bytes:
    return out + key + b" R %d\n" % rc + key + b" E \n"


def _run_one(script, max_bytes: int = 16 << 20):
    chan = ScriptedChannel(script)
    session = _Session(_host(), chan)
    job = session.submit(("cat", "/etc/motd"), max_bytes, bulk=False)
    assert job is not None
    assert job.done.wait(10), "the session never finished the command"
    chan.close()
    return job


def test_greeting_and_output_in_one_read_then_a_drop_keeps_the_output():
    def script(key):
        first = b"Welcome to gpu-7\n" + key + b" OK\n" + _frame(key, b"hello from the host\n")
        return [first, EOFError("window adjust on a dead connection")], [key + b" OK\n"]

    job = _run_one(script)
    assert (job.rc, bytes(job.out), job.error, job.retry) == (0, b"hello from the host\n", None, False)


def test_a_drop_right_after_the_greeting_and_part_of_the_output_says_so():
    """The other side: the frame never completed, so the command has no exit status and the drop is said
    (the part that came is the command's; it is not run again: it may have had effects)."""

    partial = b"first half of the answer\n" * 8

    def script(key):
        return [key + b" OK\n" + partial, ConnectionResetError("reset by peer")], [key + b" OK\n"]

    job = _run_one(script)
    assert job.rc is None and not job.retry and job.error and "dropped" in job.error
    out = bytes(job.out)  # (the last bytes, where a key could have started, may be held back)
    assert out and partial.startswith(out) and len(out) >= len(partial) - 32


def test_more_than_a_mib_of_output_in_the_greeting_s_read_is_the_command_s():
    big = bytes(range(97, 123)) * ((3 << 19) // 26)  # 1.5 MiB, no line of the protocol in it

    def script(key):
        return [key + b" OK\n" + _frame(key, big)], [key + b" OK\n"]

    job = _run_one(script)
    assert (job.rc, len(job.out), job.retry, job.error) == (0, len(big), False, None)
    assert bytes(job.out) == big


def test_an_rc_file_flooding_the_shell_before_the_greeting_is_still_refused():
    """What the 1 MiB bound is for: a login shell printing without end before the driver starts. The command
    is handed back to run on a channel of its own."""

    def script(key):
        return [b"y\n" * (3 << 19)], []

    job = _run_one(script)
    assert job.retry and job.rc is None
