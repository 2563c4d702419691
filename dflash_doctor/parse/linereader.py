"""Reading one source's candidate lines, whichever route found them (stream.py's chunks, prefilter.py's
grep output): decoding, the line's wrappers and engine tag, the dispatch to the format registry,
and the startup lines.

`SourceReader.dispatch` hands a decoded line to the formats in priority order: the first whose
literal is in the line, whose text before it is only wrappers (formats/_common.py), and whose parser
claims it, reads it. A literal after other words (a prompt, a JSON string, an echoed command) is
reported as such, never read as metrics.
"""

from __future__ import annotations

import re

from ..textsafe import strip_ansi
from . import formats as F
from .formats._common import VLLM_HEADER as _V1_HEADER
from .formats._common import (
    BadLine,
    Foreign,
    Impossible,
    Line,
    frame_of,
    norm_ts,
    prefix_facts,
    prefix_ok,
    prefix_ts,
    unwrap_json,
)
from .records import Salvage
from .result import LogScan, add_row
from .startup import StartupBuilder

CHUNK = 256 << 10
MAX_LINE = 1 << 20  # a longer line is skipped (with a note), so one bad line cannot eat memory
BLOCK_LOOKAHEAD = 16 << 10  # a summary block must fit in this many bytes after its first line
BLOCK_LOOKBACK = 8 << 10  # …and what it needs from before its first line in this many
NO_TAG = object()

# Startup lines are searched for only in a source's first chunk and where a new process tag appears.
_STARTUP_EXTRA = (b"version", b"SpeculativeConfig", b"Resolved architecture", b"LLM engine (v", b"serving model")
STARTUP_LITS = (b"args",) + _STARTUP_EXTRA
STARTUP_LITERALS = tuple(x.decode() for x in _STARTUP_EXTRA) + ("non-default args", "args: Namespace", "server_args")
_TS_B = re.compile(rb"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)|(?<![\d-])(\d\d-\d\d) (\d\d:\d\d:\d\d)")
_BLOCK_LITS = tuple(x.encode() for x in F.BLOCK_LITERALS)
# every format's literals in one pattern: one pass over a line says which formats may read it
_ALL_LITS = tuple(dict.fromkeys(lit for f in F.FORMATS for lit in f.literals))
_ANY_LIT = re.compile("|".join(re.escape(x) for x in sorted(_ALL_LITS, key=len, reverse=True)))
# a prefix's shape for the caches: its dates and times dropped (only they vary between a process's lines)
_TIMES = re.compile(
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?|\d\d-\d\d \d\d:\d\d:\d\d|\d\d:\d\d:\d\d(?:[.,]\d+)?"
    r"|\d+\.\d\d\.\d{3}\.\d{3}"
)
_MISS = object()
# a known engine format's own literal (not the generic reader's bare "ccept"): what makes a line a metrics line
_METRIC_LIT = re.compile(
    "|".join(
        re.escape(x)
        for x in sorted({lit for f in F.FORMATS if f.standing == "engine" for lit in f.literals}, key=len, reverse=True)
    )
)
_LOOK_BACK = max(f.look_back for f in F.FORMATS)


def message(line: str) -> tuple[str, str | None, int | None]:
    """The line without ANSI escapes and NULs, a JSON record unwrapped to its message; the record's
    timestamp text; where its message starts."""
    if "\x1b" in line:
        line = strip_ansi(line)
    if "\x00" in line:
        line = line.replace("\x00", "")
    if '{"' in line:
        return unwrap_json(line)
    return line, None, None


def prefix_shape(prefix: bytes) -> tuple[int, bytes, bytes, int, int, bytes]:
    """(length, head, tail, time start, time end, key) of the text before a metrics message. Lines of
    one process share it, only their time differs: the last timestamp (a wrapper's comes first). The key
    is the prefix without its times; the length is -1 when it holds several (the times' widths vary)."""
    found = list(_TS_B.finditer(prefix))
    if not found:
        return len(prefix), prefix, b"", 0, 0, prefix
    a, b = found[-1].span()
    return (len(prefix) if len(found) == 1 else -1), prefix[:a], prefix[b:], a, b, _TS_B.sub(b"", prefix)


def is_block_start(raw: bytes) -> bool:
    return any(lit in raw for lit in _BLOCK_LITS)


class SourceReader:
    """Per-source state: startup facts, prefix shapes and their tags, decoding."""

    def __init__(self, scan: LogScan, source: str):
        self.scan = scan
        self.source = source
        self.startup = StartupBuilder(scan.startup)
        self.replacements = 0
        self.prefixes: dict[bytes, tuple] = {}  # prefix without its timestamp -> (engine tag, only wrappers?)
        self.tags: set = set()
        self._ok: dict = {}  # (format id, prefix shape) -> whether the prefix makes the line the engine's own
        self._tags: dict = {}  # prefix shape -> engine tag

    def decode(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.replacements += 1
            return raw.decode("utf-8", "replace")

    def shape_facts(self, key: bytes, prefix: bytes) -> tuple:
        """(engine tag, whether the prefix is only wrappers, whether the tag is new to this scan) of a
        prefix shape (its key: the prefix without its times)."""
        try:
            tag, ok = self.prefixes[key]
            return tag, ok, False
        except KeyError:
            text = message(self.decode(prefix))[0]
            tag = self._tag(text)
            ok = prefix_ok(text, _V1_HEADER, engine="vllm")
            self.prefixes[key] = (tag, ok)
            return tag, ok, ok and tag not in self.tags

    def dispatch(
        self, raw_line: str, no: int | None, off: int | None, context=None, only: frozenset | None = None
    ) -> tuple:
        """Read one candidate line: (its engine tag or NO_TAG when it was no metrics line, bytes of the
        lines after it that a block consumed). `context`: returns (lines after, lines before, byte length
        of each line after), asked only when a block format needs it. `only`: the ids of the formats that
        may read it (all by default)."""
        text, ts_json, msg_at = message(raw_line)
        first: dict[str, int] = {}
        for m in _ANY_LIT.finditer(text):
            first.setdefault(m.group(), m.start())
        if not first:
            return NO_TAG, 0
        foreign = None
        window: list = []  # the block context, asked for once
        for fmt in F.FORMATS:
            pos = min((first[lit] for lit in fmt.literals if lit in first), default=-1)
            if pos < 0:
                continue
            if only is not None and fmt.id not in only:
                if self._claims(fmt, text, pos, msg_at):
                    return NO_TAG, 0  # a format tried before the `only` ones reads it: the line is its route's
                continue
            if not fmt.checks_prefix and not self._own(fmt, text[:pos], msg_at):
                if fmt.standing == "engine" and only is None:
                    foreign = foreign or fmt.literals[0]
                continue
            if fmt.block and context is not None and not window:
                window.append(context())
            after, before, lens = window[0] if window else (None, None, None)
            line = (
                Line(text, pos, after, before[-fmt.look_back :] if before else before) if fmt.block else Line(text, pos)
            )
            try:
                parsed = fmt.parse(line)
            except Foreign:
                self.scan.alien(self.source, no, off, fmt.literals[0], text)
                return NO_TAG, 0
            except BadLine as exc:
                self.scan.candidate_lines += 1
                self.scan.bad(self.source, no, off, str(exc), text, rejected=isinstance(exc, Impossible))
                return NO_TAG, 0
            if parsed is None:
                continue
            engine = self._record(fmt, parsed, text[:pos], ts_json, no, off)
            return engine, sum(lens[: parsed.consumed]) if parsed.consumed and lens else 0
        if foreign is not None:
            self.scan.alien(self.source, no, off, foreign, text)
        return NO_TAG, 0

    def _own(self, fmt, prefix: str, msg_at: int | None) -> bool:
        """Whether the text before fmt's literal makes the line the engine's own (cached by its shape)."""
        key = (fmt.id, msg_at, _TIMES.sub("", prefix) if len(prefix) < 400 else prefix)
        ok = self._ok.get(key)
        if ok is None:
            ok = prefix_ok(prefix, fmt.header, fmt.lead, msg_at, fmt.engine)
            if len(self._ok) < 4096:
                self._ok[key] = ok
        return ok

    def _record(self, fmt, parsed, prefix: str, ts_json: str | None, no: int | None, off: int | None):
        """What a format read from a line, into the scan; the line's engine tag."""
        scan = self.scan
        scan.candidate_lines += 1
        ts, engine = self._facts(prefix)
        if ts_json:
            ts = norm_ts(ts_json) or ts
        meta = (self.source, no, ts, engine, off)
        for r in parsed.rows:
            scan.count(r["fmt"])
            add_row(scan, r, meta)
        for rec in parsed.defer:
            scan.deferred.append((fmt.id, rec, meta))
            scan.count(rec.get("count_as") or rec.get("fmt") or fmt.id)
        for n in parsed.notes:
            scan.note(n)
        for alt in parsed.alternatives:
            if alt not in scan.alternatives:
                scan.alternatives.append(alt)
        if parsed.missing and parsed.rows:
            scan.salvage(Salvage(self.source, no, off, parsed.rows[0]["fmt"], parsed.missing, parsed.derived))
        return engine

    def _claims(self, fmt, text: str, pos: int, msg_at: int | None) -> bool:
        """Whether `fmt` (a format outside the `only` ones of a dispatch) would read the line: on the
        streamed route it comes first and keeps the line, so a block format must not take it (the grep
        route reads it through its own literal). Nothing is recorded."""
        if not fmt.checks_prefix and not prefix_ok(text[:pos], fmt.header, fmt.lead, msg_at, fmt.engine):
            return False
        try:
            return fmt.parse(Line(text, pos)) is not None
        except BadLine:
            return True

    def _facts(self, prefix: str) -> tuple:
        """(timestamp, engine tag) of a prefix; the tag cached by the prefix's shape."""
        key = _TIMES.sub("", prefix) if len(prefix) < 400 else None
        tag = self._tags.get(key, _MISS) if key is not None else _MISS
        if tag is _MISS:
            ts = prefix_ts(prefix)
            tag = self._tag(prefix)
            if key is not None and len(self._tags) < 4096:
                self._tags[key] = tag
            return ts, tag
        return prefix_ts(prefix), tag

    def _tag(self, prefix: str):
        """The engine tag of a prefix; the capture's frame it names is kept for the tag (LogScan.tag_frames)."""
        tag = prefix_facts(prefix)[1]
        frame = frame_of(prefix)
        if tag is not None and frame is not None:
            self.scan.tag_frames[tag] = frame
        return tag

    def startup_scan(self, buf: bytes, end: int | None = None) -> None:
        """Feed the startup lines in buf[:end] to the builder, in file order (a later line wins)."""
        end = len(buf) if end is None else end
        found: dict[int, int] = {}
        for lit in STARTUP_LITS:
            p = buf.find(lit, 0, end)
            while p >= 0:
                ls = buf.rfind(b"\n", 0, p) + 1
                le = buf.find(b"\n", p, end)
                le = end if le < 0 else le
                found[ls] = le
                p = buf.find(lit, le, end)
        for ls in sorted(found):
            line = message(self.decode(buf[ls : found[ls]]))[0]
            # metrics lines are the other pass's (a startup line may hold "ccept" in an argument's name:
            # synthetic_acceptance_length, speculative_accept_threshold_single)
            if "ccept" not in line or not _METRIC_LIT.search(line):
                self.startup.feed(line)


def context_lines(
    reader: SourceReader, data: bytes, ls: int, le: int, lookahead: int = BLOCK_LOOKAHEAD, back: bytes = b""
) -> tuple[list[str], list[str], list[int]]:
    """(lines after, lines before, byte length of each line after incl. its newline) of the line at
    data[ls:le]; `back` is text before data[0] (a previous buffer's tail)."""
    end = min(len(data), le + 1 + lookahead)
    parts = data[le + 1 : end].split(b"\n")[:120]
    if end < len(data) or not data.endswith(b"\n"):
        parts = parts[:-1] if len(parts) > 1 else parts  # (the last one may be cut by the window)
    lens = [len(x) + 1 for x in parts]
    lo = max(0, ls - BLOCK_LOOKBACK)
    pre = (back[-(BLOCK_LOOKBACK - ls) :] + data[:ls]) if ls < BLOCK_LOOKBACK and back else data[lo:ls]
    before = pre.split(b"\n")
    if before and before[-1] == b"":
        before = before[:-1]
    before = before[-_LOOK_BACK:]
    return [reader.decode(x) for x in parts], [reader.decode(x) for x in before], lens
