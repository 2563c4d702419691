"""Reading logs: `scan(source, plan)` is the one entry. A source is a file path (plain, gzip, any
encoding; '-' is stdin) or `Lines` from elsewhere; the plan says how to read it. `aggregate` sums what
a scan found into the acceptance picture.

The pieces: formats/ (the registry of engine formats), linereader.py (dispatch of one line),
stream.py (the streamed route), sources.py (opening and transcoding), result.py (LogScan and the
end-of-source work), frame.py (drafts-weighted aggregation), fast/ (the fast route: vLLM lines read in
bulk, the grep pre-filter and byte-range workers for large plain files). Formats and their meaning:
each format module's docstring.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..evidence.acceptance import MIN_DRAFTS, AcceptanceSummary, StartupFacts
from .fast.grep import grep_command
from .fast.large import scan_large
from .fast.routes import SERVER_LITERALS
from .frame import summarize
from .linereader import CHUNK, STARTUP_LITERALS
from .result import LogScan
from .sources import open_lines, open_source
from .stream import scan_stream

# What the host's remote pre-filter (grep -F on the host, collect/host/scripts.py) keeps: the metrics lines a
# SERVER log holds (bench and offline summaries are printed by client tools, not by the server), and the
# startup lines' literals.
SPEC_LINE_LITERALS = SERVER_LITERALS

__all__ = [
    "LogScan",
    "AcceptanceSummary",
    "StartupFacts",
    "STARTUP_LITERALS",
    "SPEC_LINE_LITERALS",
    "ScanPlan",
    "Lines",
    "scan",
    "aggregate",
    "order_rotated",
]


@dataclass(frozen=True)
class ScanPlan:
    """How to read a log source.

    `fast`: the fast route (fast/): vLLM >= 0.10.2 lines read in bulk into packed columns, and plain
    files of `grep_from` bytes and more pre-filtered by GNU grep (when installed and `grep`), in
    `workers` byte ranges from `parallel_from` bytes on. Without it every candidate line goes through
    the format registry: the plain route, the reference the fast one is tested against (same results).
    """

    fast: bool = True
    grep: bool = True
    workers: int = 1
    grep_from: int = 64 << 20
    parallel_from: int = 256 << 20


@dataclass(frozen=True)
class Lines:
    """Text lines from elsewhere (a remote host's filtered log, a test), read as the source `name`."""

    lines: Iterable[str]
    name: str


def scan(source: str | Lines, plan: ScanPlan | None = None, into: LogScan | None = None) -> LogScan:
    """Read one source into `into` (a new LogScan by default) and return it. Errors opening a file
    raise OSError; a damaged stream (truncated gzip) becomes a note, what was read before is kept.
    Ctrl-C keeps what was read: the source is finished with it, `interrupted` set, and
    KeyboardInterrupt raised again."""
    plan = plan or ScanPlan()
    result = into if into is not None else LogScan()
    if isinstance(source, Lines):
        return scan_stream(open_lines(source.lines), source.name, result, count_lines=True, bulk=plan.fast)
    src = open_source(source)
    fh = src.stream
    try:
        if src.note:
            result.note(f"{source}: {src.note}")
        large = plan.fast and src.plain
        grep = grep_command() if large and plan.grep and src.size >= plan.grep_from else None
        workers = plan.workers if large and src.size >= plan.parallel_from else 1
        if grep or workers > 1:
            scan_large(fh, source, src.size, result, grep, workers)
        else:
            scan_stream(fh, source, result, count_lines=src.count_lines, bulk=plan.fast)
        if src.plain and not src.count_lines:
            _resolve_line_numbers(result, source, fh.fileno())
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()
    return result


def _resolve_line_numbers(scan: LogScan, path: str, fd: int) -> None:
    """A large plain file was scanned by byte offset: give the few shown malformed lines a line number
    (read through the descriptor the scan used)."""
    todo = [m for m in scan.malformed + scan.foreign if m.source == path and m.line_no is None and m.offset is not None]
    if not todo:
        return
    found: dict[int, int] = {}
    pos, lines = 0, 0
    try:
        for target in sorted({m.offset for m in todo if m.offset is not None}):
            while pos < target:
                data = os.pread(fd, min(CHUNK, target - pos), pos)
                if not data:
                    break
                lines += data.count(b"\n")
                pos += len(data)
            found[target] = lines + 1
    except OSError:
        return

    def fix(items):
        return [replace(m, line_no=found.get(m.offset)) if m in todo else m for m in items]

    scan.malformed = fix(scan.malformed)
    scan.foreign = fix(scan.foreign)


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
    return summarize(intervals, min_drafts=min_drafts)


def order_rotated(paths: list[str]) -> list[str]:
    """Rotated logs oldest first (app.log.3.gz, app.log.2, app.log.1, app.log), so cumulative V0
    counters and the τ-over-time series run forwards. Unrelated paths keep the order given."""
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
