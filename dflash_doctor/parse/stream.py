"""The streamed route: large binary chunks, a literal pre-filter, then the format registry.

Only lines holding the registry's candidate literal ("ccept", in every metrics format) or one of its
extra literals are decoded and handed to a parser; everything else is skipped at `bytes.find` speed.
Under a fast plan the vLLM >= 0.10.2 line (nearly all of a modern log) is read by one regex in bytes
and kept column-wise (`bulk`: fast/lines.py) instead of going through the registry one line at a time.
Memory stays flat: a chunk, a carried partial line (capped at MAX_LINE), and one small row per
metrics line.
"""

from __future__ import annotations

import gzip
import zlib
from typing import IO

from . import formats as F
from .fast.lines import VllmLines
from .linereader import BLOCK_LOOKAHEAD, CHUNK, MAX_LINE, NO_TAG, SourceReader, context_lines
from .result import LogScan, finish_source

_CAND = F.CANDIDATE.encode()
_EXTRA = tuple(x.encode() for x in F.SCAN_EXTRA)


class Scanner(SourceReader):
    """The streamed route over one source (see the module doc)."""

    def __init__(self, scan: LogScan, source: str, count_lines: bool, bulk=None):
        super().__init__(scan, source)
        self.count_lines = count_lines
        self.bulk = bulk  # reads the lines it knows in bulk (take/flush/close), or None: every line dispatched
        self.line_base = 0  # lines before the current buffer (when counting)
        self.line_pos, self.line_at = 0, 0  # where in the buffer lines were counted up to, and the count there
        self.head_left = CHUNK  # bytes of the source's head not yet startup-scanned
        self.prev_buf, self.prev_stop = b"", 0  # the previous buffer, sliced only when needed
        self.skip_until = 0  # a block's lines, consumed by its parser, end here (absolute offset)
        self._startup_done = False

    def line_no(self, buf: bytes, ls: int) -> int | None:
        """The number of the line starting at buf[ls] (lines are asked for in buffer order), or None when
        the source is addressed by byte offset."""
        if not self.count_lines:
            return None
        self.line_at += buf.count(b"\n", self.line_pos, ls)
        self.line_pos = ls
        return self.line_at + 1

    def new_tag(self, tag, buf: bytes, end: int) -> None:
        """A process not seen before (a start or restart): read the startup lines around it."""
        self.tags.add(tag)
        if not self._startup_done:
            self._startup_done = True
            self.startup_scan(self.prev_tail())
            self.startup_scan(buf, end)

    def _context(self, buf: bytes, end: int, ls: int, le: int):
        return lambda: context_lines(self, buf[:end], ls, le, back=self.prev_tail())

    def prev_tail(self) -> bytes:
        return self.prev_buf[max(0, self.prev_stop - (64 << 10)) : self.prev_stop]

    def process(self, buf: bytes, base: int, end: int, eof: bool) -> int:
        """Handle the complete lines in buf[:end]; return where processing stopped (a block that
        may continue past the buffer is left for the next call)."""
        self._startup_done = False
        if self.head_left > 0:  # the source's head: every line that starts in its first CHUNK bytes
            cut = end if self.head_left >= end else buf.find(b"\n", self.head_left - 1, end) + 1 or end
            self.head_left = 0 if cut < end or eof else self.head_left - end
            self._startup_done = True
            self.startup_scan(buf, cut)
        self.line_pos, self.line_at = 0, self.line_base
        seen: set = set()  # line starts handled by the first pass
        skip = max(0, self.skip_until - base)
        stop = self._candidates(buf, base, end, eof, skip, seen)
        self._extras(buf, base, end, stop, skip, seen)
        if self.bulk is not None:
            self.bulk.flush()
        if self.count_lines:
            self.line_base = self.line_at + buf.count(b"\n", self.line_pos, stop)
        self.prev_buf, self.prev_stop = buf, stop
        return stop

    def _candidates(self, buf: bytes, base: int, end: int, eof: bool, skip: int, seen: set) -> int:
        """The lines holding the candidate literal, in order; where processing stopped."""
        find, bulk = buf.find, self.bulk
        p = find(_CAND, skip, end)
        while p >= 0:
            if bulk is not None:
                got = bulk.take(self, buf, p, base, end)
                if got is not None:
                    seen.add(got[0])
                    p = find(_CAND, got[1], end)
                    continue
            ls = buf.rfind(b"\n", 0, p) + 1
            le = find(b"\n", p, end)
            le = end if le < 0 else le
            seen.add(ls)
            no = self.line_no(buf, ls)
            if not eof and len(buf) - ls < BLOCK_LOOKAHEAD:
                # a block starting here may need lines the next chunk brings: read it then (once: a chunk more
                # is always more than the block's window, whatever the length of the line in progress)
                return ls
            le = self._read(buf, base, ls, le, no, end, end, seen)
            p = find(_CAND, le, end)
        return end

    def _extras(self, buf: bytes, base: int, end: int, stop: int, skip: int, seen: set) -> None:
        """Lines holding an extra literal but not the candidate one (cut lines, formats without the word): only
        when the chunk holds a literal at all does the per-line search run."""
        find = buf.find
        for lit in _EXTRA:
            if lit not in buf:
                continue
            q = find(lit, skip, stop)
            while q >= 0:
                ls = buf.rfind(b"\n", 0, q) + 1
                le = find(b"\n", q, stop)
                le = stop if le < 0 else le
                if ls not in seen and find(_CAND, ls, le) < 0:
                    seen.add(ls)
                    no = (self.line_base + buf.count(b"\n", 0, ls) + 1) if self.count_lines else None
                    le = self._read(buf, base, ls, le, no, stop, end, seen)
                q = find(lit, le, stop)

    def _read(self, buf: bytes, base: int, ls: int, le: int, no, limit: int, end: int, seen: set) -> int:
        """Dispatch the line buf[ls:le]; where reading goes on (past the lines a block consumed, up to limit)."""
        line_tag, consumed = self.dispatch(self.decode(buf[ls:le]), no, base + ls, self._context(buf, limit, ls, le))
        if line_tag is not NO_TAG and line_tag not in self.tags:
            self.new_tag(line_tag, buf, end)
        if consumed:
            le = min(limit, le + consumed)
            self.skip_until = max(self.skip_until, base + le)
            _mark_block(buf, ls, le, seen)
        return le


def _mark_block(buf: bytes, ls: int, le: int, seen: set) -> None:
    """The lines of a consumed block are not read again by the extra passes."""
    p = ls
    while p < le:
        seen.add(p)
        q = buf.find(b"\n", p, le)
        if q < 0:
            break
        p = q + 1


def scan_stream(
    fh: IO[bytes],
    source: str,
    scan: LogScan,
    count_lines: bool = True,
    base: int = 0,
    part: bool = False,
    bulk: bool = False,
) -> LogScan:
    """Scan a binary stream into `scan`. Errors from a damaged stream (truncated gzip) become notes;
    what was read before them is kept. `part`: one byte range of a file scanned in parallel (the
    caller finishes the whole file). `bulk`: vLLM >= 0.10.2 lines read in bulk (fast/lines.py). Ctrl-C
    keeps what was read: the source is finished with it and `scan.interrupted` is set before
    KeyboardInterrupt goes on."""
    sc = Scanner(scan, source, count_lines, VllmLines(scan) if bulk else None)
    n_before = len(scan.rows)
    if not part:
        scan.sources.append(source)
    carry = b""
    skipping = 0  # > 0 while dropping the rest of an over-long line
    total = 0
    last_byte = b""
    first_bytes = None
    try:
        while True:
            data = _read(fh, scan, source, total)
            eof = not data
            total += len(data)
            if data:
                last_byte = data[-1:]
            if first_bytes is None:
                first_bytes = data[:65536]
            if skipping and data:
                nl = data.find(b"\n")
                if nl < 0:
                    skipping += len(data)
                    base += len(data)
                    continue
                skipping += nl
                long_line(scan, source, skipping)
                base += nl + 1
                data = data[nl + 1 :]
                skipping = 0
                if count_lines:
                    sc.line_base += 1
            buf = carry + data if carry else data
            if eof:
                end = len(buf)
            else:
                end = buf.rfind(b"\n") + 1
                if end == 0:
                    if len(buf) > MAX_LINE:
                        # no newline in sight: drop this line, keep reading until its end
                        skipping = len(buf)
                        base += len(buf)
                        carry = b""
                        continue
                    carry = buf
                    continue
            stop = sc.process(buf, base, end, eof) if end else 0
            if eof:
                break
            carry = buf[stop:]
            base += stop
    except KeyboardInterrupt:
        scan.interrupted = True
        _close(scan, sc, source, count_lines, total, last_byte, first_bytes, part, n_before, skipping)
        raise
    _close(scan, sc, source, count_lines, total, last_byte, first_bytes, part, n_before, skipping)
    return scan


def _read(fh: IO[bytes], scan: LogScan, source: str, total: int) -> bytes:
    """The next chunk; a damaged or unreadable stream ends here (b""), said in a note."""
    try:
        return fh.read(CHUNK)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        scan.note(
            f"{source}: compressed stream is damaged or truncated after {total} bytes ({exc}); "
            "the part before it was parsed"
        )
    except UnicodeError as exc:
        scan.note(f"{source}: could not be decoded after {total} bytes ({exc}); the part before it was parsed")
    except OSError as exc:
        scan.note(f"{source}: read failed after {total} bytes ({exc}); the part before it was parsed")
    return b""


def _close(scan, sc, source, count_lines, total, last_byte, first_bytes, part, n_before, skipping) -> None:
    if skipping:
        long_line(scan, source, skipping)
    scan.fast.even()  # (a Ctrl-C may land between two appends of a line)
    scan.bytes += total
    if count_lines and scan.lines is not None:
        scan.lines += sc.line_base + (1 if total and last_byte != b"\n" else 0)
    elif not count_lines:
        scan.lines = None
    scan.replacements += sc.replacements
    if sc.bulk is not None:
        sc.bulk.close()
    scan.startup = sc.startup.build()
    scan.engine_frames |= sc.startup.frames
    scan.conflicts.extend(c for c in sc.startup.conflicts if c not in scan.conflicts)
    if not part:
        input_notes(scan, source, total, first_bytes or b"", scan.replacements)
        finish_source(scan, source, n_before)


def long_line(scan: LogScan, source: str, length: int) -> None:
    scan.note(f"{source}: a line of {length} bytes without a newline was skipped (longer than {MAX_LINE} bytes)")


def input_notes(scan: LogScan, source: str, total: int, head: bytes, replacements: int) -> None:
    if total == 0:
        scan.note(f"{source}: empty")
        return
    nul = head.count(b"\x00")
    if nul:
        scan.note(
            f"{source}: contains NUL bytes ({nul} in the first {len(head)} bytes): binary or damaged; "
            "text lines around them were still parsed"
        )
    elif head and sum(1 for b in head[:4096] if b < 9 or 13 < b < 32) > 0.05 * min(len(head), 4096):
        scan.note(f"{source}: looks binary (many control bytes); text lines in it were still parsed")
    if replacements:
        scan.note(f"{source}: {replacements} candidate line(s) were not valid UTF-8 (decoded with replacement)")
