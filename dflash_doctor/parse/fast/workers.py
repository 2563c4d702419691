"""Scanning byte ranges of one file in forked worker processes, and merging what they read.

`Workers(tasks)` forks one worker per task at once and `collect()`s their results; a task fills
the `LogScan` it is given. Results come back through pipes as `marshal` data (`pack`): plain tuples
written by our own child a moment ago, never anything read from the input. `merge` adds the parts, in
file order, to the caller's scan.

Ctrl-C, SIGTERM, SIGHUP: the workers ignore them (so do their grep children: a signal sent to the whole
process group, as `timeout` sends it, is the parent's to act on); the parent, interrupted, asks them with
SIGUSR1 to stop where they are and send what they have read, waits for that a few seconds, merges it and
raises KeyboardInterrupt again — the intervals read before are kept (issue 19, item 9). A worker and a grep
die with the process that started them (Linux PR_SET_PDEATHSIG): none outlives a parent killed outright.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import marshal
import os
import selectors
import signal
import time
from array import array
from collections.abc import Callable
from typing import Any

from ..records import Malformed, Row, Salvage
from ..result import LogScan
from ..startup import StartupBuilder
from .columns import ARRAY_COLS, COLS, Columns, PackedRates, PackedRuns, PackedText

STOP_WAIT = 5.0  # seconds the parent waits for interrupted workers to send what they read


def _pack_fast(fast: dict) -> dict:
    out: dict[str, Any] = {}
    for c, v in fast.items():
        if isinstance(v, (PackedRates, PackedText, PackedRuns)):
            out[c] = ("packed", v.wire())
            continue
        tc = ARRAY_COLS.get(c)
        try:
            if isinstance(v, array) and v.typecode == tc:
                out[c] = (tc, v)  # (marshal writes the array's buffer as bytes: no copy of it first)
            else:
                out[c] = (tc, array(tc, v).tobytes()) if tc and v else list(v)
        except (OverflowError, TypeError):  # an absurd 5000-digit count: keep it a Python int
            out[c] = list(v)
    return out


def _extend_fast(fast: Columns, c: str, v) -> None:
    cur = fast[c]
    if isinstance(v, tuple) and v and v[0] == "packed":
        cur.extend(type(cur).from_wire(v[1]))
        return
    if not isinstance(v, tuple):
        if c in ARRAY_COLS:
            fast.extend_numeric(c, v)
        else:
            cur.extend(v)
        return
    # (bytes once through marshal; the worker's own array when a part is merged in the same process)
    data = v[1] if isinstance(v[1], bytes) else memoryview(v[1]).cast("B")
    if isinstance(cur, array) and cur.typecode == v[0] and len(cur):
        cur.frombytes(data)  # (appended in place: no array of the part in between)
        return
    arr = array(v[0])
    arr.frombytes(data)
    if not len(cur):
        fast[c] = arr
    elif isinstance(cur, array) and cur.typecode == arr.typecode:
        cur.extend(arr)
    else:
        if isinstance(cur, array):
            fast[c] = cur = cur.tolist()
        cur.extend(arr.tolist())


def pack(part: LogScan) -> tuple:
    """A part's results as plain data for marshal."""
    st = part.startup
    return (
        [tuple(r) for r in part.rows],
        _pack_fast(part.fast),
        [(m.source, m.line_no, m.reason, m.text, m.offset, m.rejected) for m in part.malformed],
        part.malformed_count,
        part.rejected_count,
        [(m.source, m.line_no, m.reason, m.text, m.offset) for m in part.foreign],
        part.foreign_count,
        [(s.source, s.line_no, s.offset, s.fmt, s.missing, s.derived) for s in part.salvaged],
        part.salvaged_count,
        part.notes,
        part.formats,
        part.candidate_lines,
        part.mean_normalised,
        part.replacements,
        [(fid, rec, tuple(meta)) for fid, rec, meta in part.deferred],
        part.alternatives,
        {k: getattr(st, k) for k in st.__dataclass_fields__},
        part.bytes,
        part.interrupted,
        part.tag_frames,
        sorted(part.engine_frames),
        part.conflicts,
    )


def merge(scan: LogScan, builder: StartupBuilder, payload: tuple) -> None:
    """Add one part's packed results to scan (call in file order)."""
    (
        rows,
        fast,
        bad,
        bad_count,
        rejected,
        foreign,
        foreign_count,
        salv,
        salv_count,
        notes,
        formats,
        cand,
        norm,
        repl,
        deferred,
        alts,
        st,
        nbytes,
        interrupted,
        tag_frames,
        engine_frames,
        conflicts,
    ) = payload
    scan.rows.extend(Row(*r) for r in rows)
    for c in COLS:
        _extend_fast(scan.fast, c, fast[c])
    for m in bad:
        if len(scan.malformed) < 20:
            scan.malformed.append(Malformed(*m))
    scan.malformed_count += bad_count
    scan.rejected_count += rejected
    for m in foreign:
        if len(scan.foreign) < 20:
            scan.foreign.append(Malformed(*m))
    scan.foreign_count += foreign_count
    for s in salv:
        scan.salvage(Salvage(*s))
    scan.salvaged_count += salv_count - len(salv)
    for t in notes:
        scan.note(t)
    for f, c in formats.items():
        scan.count(f, c)
    scan.candidate_lines += cand
    scan.mean_normalised += norm
    scan.replacements += repl
    scan.deferred.extend(deferred)
    for a in alts:
        if a not in scan.alternatives:
            scan.alternatives.append(a)
    scan.bytes += nbytes
    scan.interrupted = scan.interrupted or interrupted
    scan.tag_frames.update(tag_frames)
    scan.engine_frames.update(engine_frames)
    scan.conflicts.extend(c for c in conflicts if c not in scan.conflicts)
    builder.merge(st)


def _loads(data: bytearray) -> tuple | None:
    """A worker's payload; None for a worker that sent none or not all (it writes its payload only when
    its scan succeeded)."""
    try:
        return marshal.loads(data) if data else None
    except (EOFError, ValueError, TypeError):
        return None


def _on_usr1(signum, frame):  # pragma: no cover - runs in a worker
    raise KeyboardInterrupt


class Workers:
    """Worker processes forked now, one per task (a task fills the `LogScan` it is given); `collect`
    gathers what they send."""

    def __init__(self, tasks: list[Callable[[LogScan], None]], engine_hint=None):
        self.kids: list[tuple[int, int]] = []
        for task in tasks:
            r, w = os.pipe()
            big_pipe(w)
            parent = os.getpid()
            pid = os.fork()
            if pid == 0:  # worker
                os.close(r)
                for _, other in self.kids:  # (the pipes of workers forked before: theirs, not this one's)
                    os.close(other)
                _worker(task, w, engine_hint, parent)
            os.close(w)
            self.kids.append((pid, r))

    def collect(self) -> tuple[list, bool]:
        """(packed parts in task order, None for a worker that failed; whether the run was interrupted)."""
        interrupted = False
        chunks: dict[int, bytearray] = {r: bytearray() for _, r in self.kids}  # (grown in place: no joined copy)
        open_fds = set(chunks)
        loaded: dict[int, tuple | None] = {}

        def closed(fd: int) -> None:  # a worker's payload is whole: read it now, while the others still scan
            loaded[fd] = _loads(chunks[fd])
            del chunks[fd]

        try:
            _drain(open_fds, chunks, None, closed)
        except KeyboardInterrupt:
            interrupted = True
            self._stop(open_fds, chunks)
        payloads = []
        for _, r in self.kids:
            if r in loaded:
                payloads.append(loaded.pop(r))
            else:
                payloads.append(_loads(chunks.pop(r)))
        self._reap(interrupted)
        return payloads, interrupted

    def _stop(self, open_fds: set, chunks: dict) -> None:
        for pid, _ in self.kids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGUSR1)
        _drain(open_fds, chunks, time.monotonic() + STOP_WAIT)

    def _reap(self, interrupted: bool) -> None:
        for pid, _ in self.kids:
            try:
                if interrupted:
                    for _ in range(50):
                        done, _status = os.waitpid(pid, os.WNOHANG)
                        if done:
                            break
                        time.sleep(0.02)
                    else:
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                else:
                    os.waitpid(pid, 0)
            except (ChildProcessError, OSError):
                pass
        self.kids = []


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def die_with_parent(parent: int) -> None:  # pragma: no cover - runs in a child
    """Have the kernel kill this child when its parent dies (Linux); a parent gone already ends it now."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def _worker(task, w: int, engine_hint, parent: int) -> None:  # pragma: no cover - runs in a worker, never returns
    for sig in STOP_SIGNALS:  # the parent decides what a Ctrl-C, a TERM or a HUP ends
        signal.signal(sig, signal.SIG_IGN)
    signal.signal(signal.SIGUSR1, _on_usr1)
    die_with_parent(parent)
    code = 0
    try:
        part = LogScan(engine_hint=engine_hint)
        try:
            task(part)
        except KeyboardInterrupt:
            part.interrupted = True
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        payload = marshal.dumps(pack(part))
        with os.fdopen(w, "wb") as out:
            out.write(payload)
    except BaseException:  # noqa: BLE001 - a worker must never return into the caller
        code = 1
    finally:
        os._exit(code)


def _drain(open_fds: set, chunks: dict, deadline: float | None, closed=None) -> None:
    """Read the workers' pipes until they close (or the deadline passes: the rest are closed unread);
    a Ctrl-C meanwhile goes on up, leaving open_fds saying which are still open. `closed(fd)`: called
    as each pipe closes, its data whole."""
    with selectors.DefaultSelector() as sel:
        for fd in open_fds:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            if deadline is not None and timeout == 0.0:
                break
            for key, _ in sel.select(timeout):
                piece = os.read(key.fd, 1 << 20)
                if piece:
                    chunks[key.fd] += piece
                else:
                    sel.unregister(key.fd)
                    os.close(key.fd)
                    open_fds.discard(key.fd)
                    if closed is not None:
                        closed(key.fd)
        if deadline is not None:
            for fd in list(open_fds):
                os.close(fd)
                open_fds.discard(fd)


def big_pipe(fd: int, size: int = 1 << 20) -> None:
    """A 1 MiB pipe buffer (Linux F_SETPIPE_SZ): megabytes then cross in a few large steps."""
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
