"""Log scanning, the entry points: a file (plain, gzip, any encoding; large plain files through the
grep pre-filter, in parallel byte ranges), lines from elsewhere, and the aggregate.

The pieces: formats/ (the registry of engine formats), linereader.py (dispatch of one line),
stream.py (the streamed route), prefilter.py (the grep route), workers.py (forked byte ranges),
sources.py (opening and transcoding), result.py (LogScan and the end-of-source work), frame.py
(drafts-weighted aggregation). Formats and their meaning: each format module's docstring.

`start_scan(path)` begins a large file's parallel scan at once (the `logs` command calls it before its
own imports); `scan_file` on that path later takes the begun workers' results.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from ..evidence.acceptance import MIN_DRAFTS, AcceptanceSummary, StartupFacts
from . import formats as F
from .linereader import CHUNK, STARTUP_LITERALS
from .result import LogScan, finish_source
from .sources import LineReader, Range, open_source
from .startup import StartupBuilder
from .stream import input_notes, scan_stream
from .workers import merge

# What the host's remote pre-filter (grep -F on the host, collect/host/scripts.py) keeps: the metrics lines a
# SERVER log holds (bench and offline summaries are printed by client tools, not by the server), from
# the registry, and the startup lines' literals.
SPEC_LINE_LITERALS = F.SERVER_LITERALS
PARALLEL_MIN = 256 << 20  # plain files at least this large are split across processes

__all__ = [
    "LogScan",
    "AcceptanceSummary",
    "StartupFacts",
    "STARTUP_LITERALS",
    "SPEC_LINE_LITERALS",
    "PARALLEL_MIN",
    "scan_file",
    "start_scan",
    "scan_lines",
    "aggregate",
    "order_rotated",
]


class _Started:
    """A large file's scan begun by `start_scan`: its source, byte ranges, grep passes and workers."""

    def __init__(self, src, n: int, grep: str | None, engine_hint, points, passes, workers):
        st = os.fstat(src.stream.fileno())
        self.src, self.n, self.grep, self.engine_hint = src, n, grep, engine_hint
        self.points, self.passes, self.workers = points, passes, workers
        self.ident = (st.st_dev, st.st_ino)

    def fits(self, path: str, n: int, grep: str | None, engine_hint) -> bool:
        """The same file (grown at most: the scan reads it as it was when begun) and the same switches."""
        try:
            st = os.stat(path)
        except OSError:
            return False
        return (
            (st.st_dev, st.st_ino) == self.ident
            and st.st_size >= self.src.size
            and n == self.n
            and grep == self.grep
            and engine_hint == self.engine_hint
        )

    def abandon(self) -> None:
        try:
            self.workers.abandon()
        finally:
            self.src.stream.close()


_STARTED: dict[str, _Started] = {}


def start_scan(path: str, workers: int | None = None, grep: bool = True, engine_hint=None) -> bool:
    """Begin scanning a large plain file now: its worker processes start at once, and `scan_file` on the
    same path with the same switches takes their results later instead of starting again. For a
    caller with imports to do before it can call `scan_file` (the `logs` command): the scan, the long
    part, overlaps them. True when workers were started; anything else (a small, compressed or missing
    file, one worker) is left to `scan_file`. A begun scan nobody takes is stopped at exit."""
    if path == "-" or path in _STARTED or not hasattr(os, "fork"):
        return False
    n = _n_workers(workers)
    try:
        src = open_source(path)
    except OSError:
        return False
    if not (src.plain and src.size >= PARALLEL_MIN and n > 1):
        src.stream.close()
        return False
    from . import prefilter
    from .workers import Workers

    wants_grep = grep and src.size >= prefilter.GREP_MIN
    if wants_grep:
        prefilter.probe_grep()  # (grep tells its version while the file is split and sampled: read below)
    points = _split_points(src.stream, src.size, n)
    passes = _passes(src.stream, src.size) if wants_grep else None
    grep_cmd = prefilter.grep_command(grep) if src.size >= prefilter.GREP_MIN else None
    points, passes, tasks = _plan(src.stream, path, src.size, n, grep_cmd, points, passes)
    try:
        started = _Started(src, n, grep_cmd, engine_hint, points, passes, Workers(tasks, engine_hint))
    except BaseException:
        src.stream.close()
        raise
    if not _STARTED:
        import atexit

        atexit.register(_abandon_all)
    _STARTED[path] = started
    return True


def _abandon_all() -> None:
    while _STARTED:
        _STARTED.popitem()[1].abandon()


def _n_workers(workers: int | None) -> int:
    return workers if workers is not None else min(os.cpu_count() or 1, 4)


def scan_file(
    path: str,
    scan: LogScan | None = None,
    workers: int | None = None,
    meanwhile=None,
    grep: bool = True,
    k_hint: int | None = None,
    k_hint_source: str | None = None,
) -> LogScan:
    """Scan one log file into `scan`. `meanwhile`: work for this process while worker processes scan
    a large file (imports, loading the checks); called at most once, possibly not at all. `workers`
    (None: up to 4 by the cores) and `grep` (the GNU grep pre-filter for large files) come from Settings. `k_hint`:
    the number of speculative tokens when the caller knows it (launch command, drafter config), for
    lines that print none (also settable later: `LogScan.apply_k_hint`). Ctrl-C keeps what was read:
    the scan is finished with it, `scan.interrupted` set, and KeyboardInterrupt raised again."""
    scan = scan if scan is not None else LogScan()
    if k_hint and not scan.k_hint:
        scan.k_hint, scan.k_hint_source = k_hint, k_hint_source or "the caller"
    n = _n_workers(workers)
    started = _STARTED.pop(path, None)
    if started is not None:
        from . import prefilter

        want = prefilter.grep_command(grep) if started.src.size >= prefilter.GREP_MIN else None
        if not started.fits(path, n, want, scan.engine_hint):
            started.abandon()
            started = None
    src = started.src if started is not None else open_source(path)
    fh = src.stream
    try:
        if src.note:
            scan.note(f"{path}: {src.note}")
        from . import prefilter

        grep = prefilter.grep_command(grep) if src.plain and src.size >= prefilter.GREP_MIN else None
        if started is not None or src.plain and src.size >= PARALLEL_MIN and n > 1 and hasattr(os, "fork"):
            _scan_parallel(fh, path, src.size, scan, n, grep, meanwhile, started)
        elif grep:
            _scan_grep(fh, path, src.size, scan, grep)
        else:
            scan_stream(fh, path, scan, count_lines=src.count_lines)
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()
    _resolve_line_numbers(scan, path)
    return scan


def _scan_part(fh, path: str, start: int, end: int, size: int, grep: str | None, passes, part: LogScan) -> None:
    """One byte range of a plain file into `part`: through the grep pre-filter when there is one, else
    (or when grep misbehaves) streamed in Python."""
    if grep:
        from .prefilter import GrepFailed, scan_range

        try:
            scan_range(fh, path, start, end, size, part, grep, passes)
            return
        except GrepFailed:  # (nothing of the failed attempt is kept)
            part.__dict__.update(
                LogScan(engine_hint=part.engine_hint, k_hint=part.k_hint, k_hint_source=part.k_hint_source).__dict__
            )
    scan_stream(Range(fh, start, end), path, part, count_lines=False, base=start, part=True)


def _passes(fh, size: int) -> list[str]:
    from .prefilter import passes_for, selection_sample

    return passes_for(selection_sample(fh.fileno(), size))


def _scan_grep(fh, path: str, size: int, scan: LogScan, grep: str) -> None:
    """A large plain file through grep in this process (one worker)."""
    passes = _passes(fh, size)
    part = LogScan(engine_hint=scan.engine_hint)
    try:
        _scan_part(fh, path, 0, size, size, grep, passes, part)
    except KeyboardInterrupt:
        part.interrupted = True
        _merge_parts(scan, fh, path, size, [_pack(part)])
        raise
    _merge_parts(
        scan,
        fh,
        path,
        size,
        [_pack(part)],
        others=_other_passes(fh, path, size, grep, passes, bool(part.candidate_lines)),
    )


def _pack(part: LogScan):
    from .workers import pack

    return pack(part)


def _other_passes(fh, path: str, size: int, grep: str | None, passes: list[str], found: bool):
    """The main pass found nothing: the other passes run too (a log whose head no longer names its engine)."""
    if grep is None or found:
        return []
    rest = [p for p in F.GREP_PASSES if p not in passes]
    if not rest:
        return []
    extra = LogScan()
    _scan_part(fh, path, 0, size, size, grep, rest, extra)
    return [_pack(extra)] if extra.candidate_lines else []


def _merge_parts(scan: LogScan, fh, path: str, size: int, payloads: list, failed: int = 0, others=()) -> None:
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
            pos += len(data)
        points.append(min(pos, size))
    points.append(size)
    return points


def _plan(
    fh, path: str, size: int, n: int, grep: str | None, points: list[int] | None = None, passes: list[str] | None = None
) -> tuple[list[int], list[str] | None, list]:
    """The byte ranges (split at newlines), grep passes and worker tasks of a parallel scan (the ranges
    and passes found already when given)."""
    points = points if points is not None else _split_points(fh, size, n)
    passes = (passes if passes is not None else _passes(fh, size)) if grep else None
    tasks = [
        (lambda part, a=points[i], b=points[i + 1]: _scan_part(fh, path, a, b, size, grep, passes, part))
        for i in range(n)
    ]
    return points, passes, tasks


def _scan_parallel(
    fh,
    path: str,
    size: int,
    scan: LogScan,
    n: int,
    grep: str | None = None,
    meanwhile=None,
    started: _Started | None = None,
) -> None:
    """Byte ranges (split at newlines) scanned in forked workers (workers.py) while this process
    imports what aggregation needs; merged in file order. Ctrl-C: what the workers read is merged.
    `started`: the workers `start_scan` began for this file."""
    import gc

    if started is None:
        from .workers import Workers

        _, passes, tasks = _plan(fh, path, size, n, grep)
        workers = Workers(tasks, scan.engine_hint)
    else:
        passes, workers = started.passes, started.workers
    payloads, interrupted = workers.collect(meanwhile)
    good = [p for p in payloads if p is not None]
    try:
        if interrupted:
            scan.interrupted = True
            _merge_parts(scan, fh, path, size, good)
            raise KeyboardInterrupt
        found = sum(p[11] for p in good) > 0  # (p[11]: a part's candidate lines, see workers.pack)
        others = _other_passes(fh, path, size, grep, passes or [], found)
        _merge_parts(scan, fh, path, size, good, payloads.count(None), others)
    finally:
        # hundreds of thousands of row objects now live to the end of the run: leave them out of the
        # collector's later full passes (each would walk them all during the summary's allocations)
        gc.freeze()


def _resolve_line_numbers(scan: LogScan, path: str) -> None:
    """Large files were scanned by byte offset; give the few shown malformed lines a line number."""
    todo = [m for m in scan.malformed + scan.foreign if m.source == path and m.line_no is None and m.offset is not None]
    if not todo or path == "-":
        return
    try:
        with open(path, "rb") as fh:
            if fh.read(2) == b"\x1f\x8b":
                return
            fh.seek(0)
            want = sorted({m.offset for m in todo})
            found: dict[int, int] = {}
            pos, lines = 0, 0
            for target in want:
                while pos < target:
                    data = fh.read(min(CHUNK, target - pos))
                    if not data:
                        break
                    lines += data.count(b"\n")
                    pos += len(data)
                found[target] = lines + 1
    except OSError:
        return
    import dataclasses

    def fix(items):
        return [dataclasses.replace(m, line_no=found.get(m.offset)) if m in todo else m for m in items]

    scan.malformed = fix(scan.malformed)
    scan.foreign = fix(scan.foreign)


def scan_lines(lines: Iterable[str], source: str, into: LogScan | None = None) -> LogScan:
    scan = into if into is not None else LogScan()
    return scan_stream(LineReader(lines), source, scan, count_lines=True)


def aggregate(
    intervals,
    min_drafts: int = MIN_DRAFTS,
    startup: StartupFacts | None = None,
    k_hint: int | None = None,
    k_hint_source: str | None = None,
) -> AcceptanceSummary | None:
    """Drafts-weighted totals, per-position curve from counts, τ over time (see `frame.py`). For a
    LogScan, `k_hint` (e.g. from the launch command) settles the lines that print no k, as
    `LogScan.apply_k_hint` does."""
    if isinstance(intervals, LogScan):
        if k_hint:
            intervals.apply_k_hint(k_hint, k_hint_source or "the caller")
        if not (intervals.n_intervals or intervals.shadowed):
            return None  # nothing to sum: spare the numpy import
    elif not len(intervals):
        return None
    from .frame import summarize

    return summarize(intervals, min_drafts=min_drafts)


def order_rotated(paths: list[str]) -> list[str]:
    """Rotated logs oldest first (app.log.3.gz, app.log.2, app.log.1, app.log), so cumulative V0
    counters and the τ-over-time series run forwards. Unrelated paths keep the order given."""
    import re

    rot = re.compile(r"^(?P<base>.*?)(?:\.(?P<n>\d+))?(?:\.gz)?$")

    def key(item):
        i, p = item
        m = rot.match(p)
        n = int(m["n"]) if m and m["n"] else 0
        return (m["base"] if m else p, -n)

    groups: dict[str, list] = {}
    order: list[str] = []
    for i, p in enumerate(paths):
        m = rot.match(p)
        base = m["base"] if m else p
        if base not in groups:
            groups[base] = []
            order.append(base)
        groups[base].append((i, p))
    out: list[str] = []
    for base in order:
        out.extend(p for _, p in sorted(groups[base], key=key))
    return out
