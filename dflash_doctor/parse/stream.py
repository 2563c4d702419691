"""The streamed route: large binary chunks, a literal pre-filter, then the format registry.

Only lines holding the registry's candidate literal ("ccept", in every metrics format) or one of its
extra literals are decoded and handed to a parser; everything else is skipped at `bytes.find` speed.
The vLLM >= 0.10.2 line (nearly all of a modern log) is read by one regex in bytes and kept
column-wise (the fast path). Memory stays flat: a chunk, a carried partial line (capped at MAX_LINE),
and one small row per metrics line.
"""

from __future__ import annotations

import gzip
import re
import zlib
from typing import IO

from . import formats as F
from .formats.vllm_v1 import FAST_BODY
from .linereader import BLOCK_LOOKAHEAD, CHUNK, MAX_LINE, NO_TAG, SourceReader, context_lines, prefix_shape
from .result import FAST_COLS, RUN_COLS, LogScan, finish_source

_FAST = re.compile(FAST_BODY + rb"[ \t\r]*$", re.M)
_CAND = F.CANDIDATE.encode()
_FAST_BACK = len(b"SpecDecoding metrics: Mean a")  # from the first "ccept" back to the literal
_EXTRA = tuple(x.encode() for x in F.SCAN_EXTRA)
_V1_LIT = b"SpecDecoding metrics"


class Scanner(SourceReader):
    """The streamed route over one source (see the module doc)."""

    def __init__(self, scan: LogScan, source: str, count_lines: bool):
        super().__init__(scan, source)
        self.count_lines = count_lines
        self.line_base = 0  # lines before the current buffer (when counting)
        self.head_left = CHUNK  # bytes of the source's head not yet startup-scanned
        self.prev_buf, self.prev_stop = b"", 0  # the previous buffer, sliced only when needed
        self.skip_until = 0  # a block's lines, consumed by its parser, end here (absolute offset)
        self.fast_from = len(scan.fast["ts"])
        self._startup_done = False

    def _new_tag(self, tag, buf: bytes, end: int) -> None:
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
        find, rfind = buf.find, buf.rfind
        fast = _FAST.match
        F_ = self.scan.fast
        a_src, a_no, a_ts, a_tag, a_d, a_dft, a_acc, a_k, a_pp, a_mean, a_athr, a_dthr, a_off, a_est = (
            F_[c].append for c in FAST_COLS
        )
        source, count = self.source, self.count_lines
        shape_len, shape_head, shape_tail, ts_a, ts_b, tag, ok = -1, b"", b"", 0, 0, None, False
        stop = end
        line_pos, line_no = 0, self.line_base
        n_fast = 0
        seen: set = set()  # line starts handled by the first pass
        skip = max(0, self.skip_until - base)
        p = find(_CAND, skip, end)
        while p >= 0:
            s = p - _FAST_BACK
            m = fast(buf, s) if s >= 0 else None
            if m is not None:
                ls = rfind(b"\n", 0, s) + 1
                le = m.end()
                prefix = buf[ls:s]
                # consecutive lines of one process share the prefix's shape: only the time differs
                if not (len(prefix) == shape_len and prefix.startswith(shape_head) and prefix.endswith(shape_tail)):
                    shape_len, shape_head, shape_tail, ts_a, ts_b, key = prefix_shape(prefix)
                    tag, ok, new = self.shape_facts(key, prefix)
                    if new:
                        self._new_tag(tag, buf, end)
                mean, athr, dthr, acc, dft, pp, _rate = m.groups()
                acc, dft = int(acc), int(dft)
                if ok and acc <= dft and dft <= 10**15:
                    ts = prefix[ts_a:ts_b].decode() if ts_b else None
                    k = pp.count(b",") + 1
                    no = None
                    if count:
                        line_no += buf.count(b"\n", line_pos, ls)
                        line_pos = ls
                        no = line_no + 1
                    if dft % k == 0:
                        drafts, est = dft / k, False
                    else:
                        tot = sum(float(x) for x in pp.split(b","))
                        drafts, est = (acc / tot if tot else dft / k), True
                    a_src(source)
                    a_no(no)
                    a_ts(ts)
                    a_tag(tag)
                    a_d(drafts)
                    a_dft(dft)
                    a_acc(acc)
                    a_k(k)
                    a_pp(pp)
                    a_mean(float(mean))
                    a_athr(float(athr))
                    a_dthr(float(dthr))
                    a_off(base + ls)
                    a_est(est)
                    n_fast += 1
                    seen.add(ls)
                    p = find(_CAND, le, end)
                    continue
            ls = rfind(b"\n", 0, p) + 1
            le = find(b"\n", p, end)
            if le < 0:
                le = end
            seen.add(ls)
            raw = buf[ls:le]
            no = None
            if count:
                line_no += buf.count(b"\n", line_pos, ls)
                line_pos = ls
                no = line_no + 1
            if not eof and end - ls < BLOCK_LOOKAHEAD:
                stop = ls  # a block starting here may need lines the next chunk brings: read it then
                break
            line_tag, consumed = self.dispatch(self.decode(raw), no, base + ls, self._context(buf, end, ls, le))
            if line_tag is not NO_TAG and line_tag not in self.tags:
                self._new_tag(line_tag, buf, end)
            if consumed:
                le = min(end, le + consumed)
                self.skip_until = base + le
                _mark_block(buf, ls, le, seen)
            p = find(_CAND, le, end)
        # Lines holding an extra literal but not the candidate one (cut lines, formats without the word):
        # only when the chunk holds more of a literal than the first pass saw does the per-line search run.
        for lit in _EXTRA:
            if lit not in buf:
                continue
            q = find(lit, skip, stop)
            while q >= 0:
                ls = rfind(b"\n", 0, q) + 1
                le = find(b"\n", q, stop)
                if le < 0:
                    le = stop
                if ls not in seen and find(_CAND, ls, le) < 0:
                    seen.add(ls)
                    no = (self.line_base + buf.count(b"\n", 0, ls) + 1) if count else None
                    raw = buf[ls:le]
                    line_tag, consumed = self.dispatch(
                        self.decode(raw), no, base + ls, self._context(buf, stop, ls, le)
                    )
                    if line_tag is not NO_TAG and line_tag not in self.tags:
                        self._new_tag(line_tag, buf, end)
                    if consumed:
                        le = min(stop, le + consumed)
                        self.skip_until = max(self.skip_until, base + le)
                        _mark_block(buf, ls, le, seen)
                q = find(lit, le, stop)
        for c in ("pp", "ts") + RUN_COLS:  # (packed a chunk at a time)
            F_[c].flush()
        if n_fast:
            self.scan.count(F.BY_ID["vllm-v1"].fmt_ids[-1], n_fast)
            self.scan.candidate_lines += n_fast
        if count:
            self.line_base = line_no + buf.count(b"\n", line_pos, stop)
        self.prev_buf, self.prev_stop = buf, stop
        return stop


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
    fh: IO[bytes], source: str, scan: LogScan, count_lines: bool = True, base: int = 0, part: bool = False
) -> LogScan:
    """Scan a binary stream into `scan`. Errors from a damaged stream (truncated gzip) become notes;
    what was read before them is kept. `part`: one byte range of a file scanned in parallel (the
    caller finishes the whole file). Ctrl-C keeps what was read: the source is finished with it and
    `scan.interrupted` is set before KeyboardInterrupt goes on."""
    sc = Scanner(scan, source, count_lines)
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
            try:
                data = fh.read(CHUNK)
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                scan.note(
                    f"{source}: compressed stream is damaged or truncated after {total} bytes ({exc}); "
                    "the part before it was parsed"
                )
                data = b""
            except UnicodeError as exc:
                scan.note(f"{source}: could not be decoded after {total} bytes ({exc}); the part before it was parsed")
                data = b""
            except OSError as exc:
                scan.note(f"{source}: read failed after {total} bytes ({exc}); the part before it was parsed")
                data = b""
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


def _close(scan, sc, source, count_lines, total, last_byte, first_bytes, part, n_before, skipping) -> None:
    if skipping:
        long_line(scan, source, skipping)
    # (Ctrl-C may land between two appends of a fast row: the columns are evened out first)
    n = min(len(col) for col in scan.fast.values())
    for col in scan.fast.values():
        del col[n:]
    scan.bytes += total
    if count_lines and scan.lines is not None:
        scan.lines += sc.line_base + (1 if total and last_byte != b"\n" else 0)
    elif not count_lines:
        scan.lines = None
    scan.replacements += sc.replacements
    # the fast path keeps the time as printed; the sortable form has a 'T' between date and time
    scan.fast["ts"].sortable_from(sc.fast_from)
    scan.startup = sc.startup.build()
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
