"""A large plain file on the fast route: through the grep pre-filter (grep.py), in byte ranges scanned by
forked worker processes (workers.py) when the plan asks for more than one, merged in file order.

A range grep cannot read (grep missing or misbehaving) is streamed in Python instead; a range whose
worker failed leaves an error once the others are merged. Ctrl-C keeps what was read: the parts are
merged, `scan.interrupted` set, and KeyboardInterrupt raised again.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import IO, cast

from ..result import LogScan, finish_source
from ..sources import Range
from ..startup import StartupBuilder
from ..stream import input_notes, scan_stream
from .grep import GrepFailed, passes_for, scan_range, selection_sample
from .routes import GREP_PASSES
from .workers import Workers, merge, pack


def scan_large(fh, path: str, size: int, scan: LogScan, grep: str | None, workers: int) -> None:
    """Scan a plain file of `size` bytes open as `fh` into `scan` as one source: `grep` (the path of GNU
    grep, or None to stream every range in Python) over `workers` byte ranges (1: in this process)."""
    passes = passes_for(selection_sample(fh.fileno(), size)) if grep else []
    if workers > 1 and hasattr(os, "fork"):
        _parallel(fh, path, size, scan, workers, grep, passes)
    else:
        _serial(fh, path, size, scan, grep, passes)


def _part(fh, path: str, start: int, end: int, size: int, grep: str | None, passes, part: LogScan) -> None:
    """One byte range into `part`: through grep when there is one, else (or when grep misbehaves)
    streamed in Python."""
    if grep:
        try:
            scan_range(fh, path, start, end, size, part, grep, passes)
            return
        except GrepFailed:  # (nothing of the failed attempt is kept)
            part.__dict__.update(
                LogScan(engine_hint=part.engine_hint, k_hint=part.k_hint, k_hint_source=part.k_hint_source).__dict__
            )
    scan_stream(cast(IO[bytes], Range(fh, start, end)), path, part, count_lines=False, base=start, part=True, bulk=True)


def _serial(fh, path: str, size: int, scan: LogScan, grep: str | None, passes: list[str]) -> None:
    part = LogScan(engine_hint=scan.engine_hint)
    try:
        _part(fh, path, 0, size, size, grep, passes, part)
    except KeyboardInterrupt:
        part.interrupted = True
        _merge(scan, fh, path, size, [pack(part)])
        raise
    _merge(scan, fh, path, size, [pack(part)], others=_other_passes(fh, path, size, grep, passes, part.candidate_lines))


def _parallel(fh, path: str, size: int, scan: LogScan, n: int, grep: str | None, passes: list[str]) -> None:
    """Byte ranges (split at newlines) scanned in forked workers; merged in file order. Ctrl-C: what the
    workers read is merged."""
    points = _split_points(fh, size, n)
    tasks: list[Callable[[LogScan], None]] = [
        functools.partial(_part, fh, path, points[i], points[i + 1], size, grep, passes) for i in range(n)
    ]
    payloads, interrupted = Workers(tasks, scan.engine_hint).collect()
    good = [p for p in payloads if p is not None]
    if interrupted:
        scan.interrupted = True
        _merge(scan, fh, path, size, good)
        raise KeyboardInterrupt
    found = sum(p[11] for p in good)  # (p[11]: a part's candidate lines, see workers.pack)
    others = _other_passes(fh, path, size, grep, passes, found)
    _merge(scan, fh, path, size, good, payloads.count(None), others)


def _other_passes(fh, path: str, size: int, grep: str | None, passes: list[str], found: int) -> list:
    """The main pass found nothing: the other passes run too (a log whose head no longer names its engine)."""
    if grep is None or found:
        return []
    rest = [p for p in GREP_PASSES if p not in passes]
    if not rest:
        return []
    extra = LogScan()
    _part(fh, path, 0, size, size, grep, rest, extra)
    return [pack(extra)] if extra.candidate_lines else []


def _merge(scan: LogScan, fh, path: str, size: int, payloads: list, failed: int = 0, others=()) -> None:
    """Add the byte ranges' results (in file order) to `scan` as one source, then finish it; `failed`
    ranges that gave nothing make it an error once the others are in."""
    scan.sources.append(path)
    n_before = len(scan.rows)
    builder = StartupBuilder(scan.startup)
    for payload in list(payloads) + list(others):
        merge(scan, builder, payload)
    scan.lines = None  # (also when every range failed)
    scan.startup = builder.build()
    input_notes(scan, path, size, os.pread(fh.fileno(), 65536, 0), scan.replacements)
    finish_source(scan, path, n_before)
    if failed:
        raise OSError(f"{failed} of {failed + len(payloads)} scan workers failed")


def _split_points(fh, size: int, n: int) -> list[int]:
    points = [0]
    for i in range(1, n):
        pos = max(size * i // n, points[-1])
        while pos < size:
            data = os.pread(fh.fileno(), 1 << 20, pos)
            nl = data.find(b"\n")
            if nl >= 0:
                pos += nl + 1
                break
            if not data:
                break
            pos += len(data)
        points.append(min(pos, size))
    points.append(size)
    return points
