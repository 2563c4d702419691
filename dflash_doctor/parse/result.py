"""What a log scan saw (`LogScan`), and the end-of-source work that turns it into intervals: the
formats' deferred records (cumulative counters, weights that need the startup lines, lines that
need k), the k hint, lines rejected as forged or damaged, and formats that describe the same
drafts as a more exact one set aside.

Both routes (stream.py, and the fast route's grep pre-filter and byte-range workers in fast/) fill a
LogScan the same way; `finish_source` runs once per source, in the process that merges.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import groupby
from statistics import median
from typing import Any

from ..evidence.acceptance import StartupFacts
from ..redact import redact_text
from . import formats as F
from .fast.columns import Columns
from .formats.vllm_v1 import FAST_FMT
from .records import Malformed, Row, Salvage, SpecInterval

MAX_EXAMPLES = 20
JUMP_FACTOR = 1000  # an interval drafting this many times the engine's median is not a measurement…
JUMP_FLOOR = 10**7  # …when it also drafts more tokens than this (far beyond a node's 10 s of work)

Meta = tuple  # (source, line_no, timestamp, engine tag, byte offset)


# Tags that name a process (parse/formats/_common.prefix_facts: `pid N`, a journald `unit[N]`), and a DP rank's
_PROCESS_TAG = re.compile(r"(?:^|/)pid \d+(?:/|$)|\[\d+\](?:/|$)")
_RANK_TAG = re.compile(r"(?:^|/)DP\d+(?:/|$)")


@dataclass
class LogScan:
    """What a scan saw. `rows` are `Row`s; the (usually dominant) vLLM 0.10.2+ lines of the fast
    paths are kept column-wise in `fast`. `all_rows()` / `intervals` give both, in file order.

    `k_hint` (with `k_hint_source`, e.g. "the launch command"): the number of speculative tokens when
    the caller knows it; lines that print no k use it (after the log's own complete lines and startup
    lines). Set it before scanning, or later with `apply_k_hint`."""

    rows: list[Row] = field(default_factory=list)
    fast: Columns = field(default_factory=Columns)
    malformed: list[Malformed] = field(default_factory=list)
    malformed_count: int = 0
    rejected_count: int = 0  # of malformed_count: impossible numbers (forged or damaged)
    foreign: list[Malformed] = field(default_factory=list)  # metrics text inside another logger's message
    foreign_count: int = 0
    salvaged: list[Salvage] = field(default_factory=list)
    salvaged_count: int = 0
    startup: StartupFacts = field(default_factory=StartupFacts)
    lines: int | None = 0  # None once a large file was scanned by byte offset only
    bytes: int = 0
    candidate_lines: int = 0
    sources: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    formats: dict[str, int] = field(default_factory=dict)
    mean_normalised: int = 0  # 0.8.5 lines whose mean (bonus excluded) was normalised
    replacements: int = 0  # candidate lines that were not valid UTF-8
    sglang_rate_meaning: str | None = None
    # engine -> the newest release a line's shape allows ("<=0.5.5": SGLang's `Decode batch.` form)
    release_bounds: dict = field(default_factory=dict)
    engine_hint: tuple[str, str | None] | None = None  # from --engine NAME==VERSION
    k_hint: int | None = None
    k_hint_source: str | None = None
    interrupted: bool = False  # Ctrl-C: what is here was read before it
    shadowed: list[Row] = field(default_factory=list)  # rows set aside (a more exact format has the same drafts)
    alternatives: list[dict] = field(default_factory=list)
    k_candidates: list[int] = field(default_factory=list)
    startup_hints: dict = field(default_factory=dict)  # facts a metrics format implies (llama.cpp's drafter kind)
    deferred: list = field(default_factory=list)  # (format id, record, meta) until the source is finished
    k_pending: list = field(default_factory=list)  # (format id, record, meta) whose rows depend on k
    tag_frames: dict = field(default_factory=dict)  # engine tag -> the capture's frame it came in (compose:svc, …)
    engine_frames: set = field(default_factory=set)  # the frames the engine's startup lines came in
    conflicts: list[str] = field(default_factory=list)  # facts one process's startup lines state differently
    conflicts_said: int = 0  # of `conflicts`: rejected (reported) already

    @property
    def n_intervals(self) -> int:
        return len(self.rows) + len(self.fast)

    def all_rows(self) -> list[Row]:
        """Every interval as a Row, in file order (sources in scan order)."""
        fast = self.fast.rows()
        if not self.rows:
            return fast
        if not fast:
            return list(self.rows)
        order = {s: i for i, s in enumerate(self.sources)}
        return sorted(
            self.rows + fast, key=lambda r: (order.get(r.source, 0), r.offset if r.offset is not None else float("inf"))
        )

    def runs(self) -> list[tuple[str, int, float, float]]:
        """The processes whose metrics lines follow one another in file order, when each process's lines form one
        unbroken stretch (a restart: the server stopped and a new one started): (tag, intervals, drafts, accepted)
        per process in order. Empty when the lines are not so: one process, lines without a process tag, or
        processes whose lines interleave (data-parallel engines, several API servers)."""
        order = {src: i for i, src in enumerate(self.sources)}
        segs: list[tuple[int, float, object, int, float, float]] = []  # (source, offset, tag, n, drafts, accepted)
        for r in self.rows:
            d = r.drafts if r.drafts is not None and r.drafts == r.drafts else 0.0
            segs.append(
                (order.get(r.source, 0), r.offset if r.offset is not None else -1, r.engine, 1, d, r.accepted or 0.0)
            )
        f = self.fast
        if len(f):
            src_at = [(first, v) for first, _, v in f["src"].runs()]
            offs, drafts, acc = f["off"], f["drafts"], f["acc"]
            seen: list = []
            for first, m, value in f["tag"].runs():
                pieces = [(value, m)] if not isinstance(value, list) else [(t, len(list(g))) for t, g in groupby(value)]
                src = next((v for a, v in reversed(src_at) if a <= first), None)
                for tag, n in pieces:
                    if tag in seen and seen[-1] != tag:
                        return []  # a process's lines resume after another's: they interleave (early out)
                    if not seen or seen[-1] != tag:
                        seen.append(tag)
                    off = offs[first] if offs[first] is not None else -1
                    total_d, total_a = float(sum(drafts[first : first + n])), float(sum(acc[first : first + n]))
                    segs.append((order.get(str(src), 0), off, tag, n, total_d, total_a))
                    first += n
        segs.sort(key=lambda x: (x[0], x[1]))
        merged: list[list] = []
        for _, _, tag, n, d, a in segs:
            if tag is None:
                return []
            if merged and merged[-1][0] == tag:
                merged[-1][1:] = [merged[-1][1] + n, merged[-1][2] + d, merged[-1][3] + a]
            else:
                merged.append([tag, n, d, a])
        if len(merged) < 2 or len({m[0] for m in merged}) != len(merged):
            return []
        # a run is a process (its pid in the tag), not a data-parallel rank, and shows more than one interval
        if not all(_PROCESS_TAG.search(str(m[0])) and not _RANK_TAG.search(str(m[0])) and m[1] >= 2 for m in merged):
            return []
        return [(str(t), n, d, a) for t, n, d, a in merged]

    def keep_tag(self, tag: str) -> None:
        """Keep only the intervals of one process (tag)."""
        self.rows = [r for r in self.rows if str(r.engine) == tag]
        f = self.fast
        if len(f):
            idx = [i for i, t in enumerate(f["tag"]) if str(t) == tag]
            if len(idx) != len(f):
                f.keep(idx)

    def keep(self, pred) -> None:
        """Keep only the intervals whose timestamp satisfies pred."""
        self.rows = [r for r in self.rows if pred(r.timestamp)]
        f = self.fast
        idx = [i for i, ts in enumerate(f["ts"]) if pred(ts)]
        if len(idx) != len(f):
            f.keep(idx)

    @property
    def intervals(self) -> list[SpecInterval]:
        return [SpecInterval.from_row(r) for r in self.all_rows()]

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def bad(
        self, source: str, line_no: int | None, offset: int | None, reason: str, text: str, rejected: bool = False
    ) -> None:
        self.malformed_count += 1
        self.rejected_count += rejected
        if len(self.malformed) < MAX_EXAMPLES:
            self.malformed.append(Malformed(source, line_no, reason, redact_text(text.strip()[:300]), offset, rejected))

    def alien(self, source: str, line_no: int | None, offset: int | None, literal: str, text: str) -> None:
        """A format's literal inside another message (a prompt, a JSON string, a command): not a metrics line."""
        self.foreign_count += 1
        if len(self.foreign) < MAX_EXAMPLES:
            self.foreign.append(
                Malformed(
                    source,
                    line_no,
                    f"`{literal}` inside another message (not the engine's own metrics line): ignored",
                    redact_text(text.strip()[:300]),
                    offset,
                )
            )

    def salvage(self, item: Salvage) -> None:
        self.salvaged_count += 1
        if len(self.salvaged) < 50:
            self.salvaged.append(item)

    def count(self, fmt: str, n: int = 1) -> None:
        self.formats[fmt] = self.formats.get(fmt, 0) + n

    def uncount(self, fmt: str) -> None:
        """A line counted as its format's that turned out not to be the engine's."""
        left = self.formats.get(fmt, 0) - 1
        if left > 0:
            self.formats[fmt] = left
        else:
            self.formats.pop(fmt, None)

    def foreign_record(self, source: str, line_no: int | None, offset: int | None, reason: str) -> None:
        """A metrics line whose record is not the engine's (another service's, pod's or unit's): not read."""
        self.foreign_count += 1
        if len(self.foreign) < MAX_EXAMPLES:
            self.foreign.append(Malformed(source, line_no, reason, "", offset))

    def apply_k_hint(self, k: int | None, source: str = "the caller") -> None:
        """Give the number of speculative tokens found elsewhere (the launch command, the drafter's config):
        the lines that print no k are settled again with it (the log's own complete lines and startup lines
        still come first, and a k that contradicts the printed arithmetic is refused with a note)."""
        if not k or k == self.k_hint:
            return
        self.k_hint, self.k_hint_source = k, source
        if not self.k_pending:
            return
        pending, self.k_pending = self.k_pending, []
        ids = {(m[0], m[4]) for _, _, m in pending}
        fmts = {fid for fid, _, _ in pending}
        variants = {v for fid in fmts for v in F.BY_ID[fid].fmt_ids}
        self.rows = [r for r in self.rows if not (r.fmt in variants and (r.source, r.offset) in ids)]
        self.salvaged = [s for s in self.salvaged if not (s.fmt in variants and (s.source, s.offset) in ids)]
        self.salvaged_count = len(self.salvaged)
        for fid in dict.fromkeys(fids for fids, _, _ in pending):
            items = [(rec, meta) for f, rec, meta in pending if f == fid]
            finish = F.BY_ID[fid].finish
            assert finish is not None  # k_pending is filled only from inside a format's finish
            finish(items, _Finish(self, fid, items))
        self.rows.sort(
            key=lambda r: (
                self.sources.index(r.source) if r.source in self.sources else 0,
                r.offset if r.offset is not None else -1,
            )
        )


class _Finish:
    """What a format's `finish` may do with its deferred records (see formats/_common.py)."""

    def __init__(self, scan: LogScan, fid: str, items: list):
        self.scan, self.fid, self.items = scan, fid, items
        st = scan.startup
        self.args = st.args or {}
        self.startup_k = st.num_speculative_tokens
        self.k_hint, self.k_hint_source = scan.k_hint, scan.k_hint_source
        self.engine_hint = scan.engine_hint
        self._known: dict = {}

    def known_k(self, source: str, engine) -> int | None:
        key = (source, engine)
        if key not in self._known:
            fmts = F.BY_ID[self.fid].fmt_ids
            c = Counter(
                r.k
                for r in self.scan.rows
                if r.source == source and r.engine == engine and r.k and r.fmt in fmts and r.per_position
            )
            f = self.scan.fast
            c.update(
                k for s, t, k in zip(f["src"], f["tag"], f["k"], strict=False) if s == source and t == engine and k
            )
            self._known[key] = c.most_common(1)[0][0] if c else None
        return self._known[key]

    def note(self, text: str) -> None:
        self.scan.note(text)

    def bad(self, meta: Meta, reason: str, rejected: bool = False) -> None:
        self.scan.bad(meta[0], meta[1], meta[4], reason, "", rejected)

    def salvage(self, meta: Meta, fmt: str, missing: str, derived: str = "") -> None:
        self.scan.salvage(Salvage(meta[0], meta[1], meta[4], fmt, missing, derived))

    def add_row(self, r: dict, meta: Meta, needs_k: bool = False) -> None:
        add_row(self.scan, r, meta)
        if needs_k:
            rec = next((rec for rec, m in self.items if m is meta), None)
            if rec is not None:
                self.scan.k_pending.append((self.fid, rec, meta))

    def k_candidates(self, ks: list[int]) -> None:
        self.scan.k_candidates = sorted(set(self.scan.k_candidates) | set(ks))

    def alternative(self, alt: dict) -> None:
        if alt not in self.scan.alternatives:
            self.scan.alternatives.append(alt)

    def set_fact(self, name: str, value: Any) -> None:
        setattr(self.scan, name, value)

    def startup_hint(self, **kw) -> None:
        self.scan.startup_hints.update(kw)


def add_row(scan: LogScan, r: dict, meta: Meta) -> None:
    """A format's row dict (fmt and numbers) plus the line's meta -> a Row in scan.rows."""
    if r.pop("normalised", False):
        scan.mean_normalised += 1
    source, no, ts, engine, off = meta
    scan.rows.append(
        Row(
            r["fmt"],
            source,
            no,
            ts,
            engine,
            r.get("drafts"),
            r.get("drafted"),
            r.get("accepted"),
            r.get("k"),
            r.get("per_position", ()),
            r.get("printed_mean"),
            r.get("accepted_throughput"),
            r.get("drafted_throughput"),
            r.get("emitted"),
            off,
            bool(r.get("estimated")),
            bool(r.get("per_request")),
        )
    )


def finish_source(scan: LogScan, source: str, first_row: int) -> None:
    """Everything that needs a whole source read: the formats' deferred records (in file order), k
    from the startup lines for lines that print none, rejected jumps, superseded formats, row order."""
    deferred, scan.deferred = scan.deferred, []
    by_fmt: dict[str, list] = {}
    for fid, rec, meta in deferred:
        by_fmt.setdefault(fid, []).append((rec, meta))
    for fmt in F.FORMATS:
        items = by_fmt.get(fmt.id)
        if items and fmt.finish is not None:
            items.sort(key=lambda it: it[1][4] if it[1][4] is not None else -1)
            fmt.finish(items, _Finish(scan, fmt.id, items))
    _other_frames(scan, source, first_row)
    for text in scan.conflicts[scan.conflicts_said :]:
        scan.bad(source, None, None, f"startup lines disagree: {text} (one of them is not the engine's)", "", True)
    scan.conflicts_said = len(scan.conflicts)
    if scan.startup_hints:
        st = scan.startup
        upd = {k: v for k, v in scan.startup_hints.items() if getattr(st, k, None) is None}
        if upd:
            scan.startup = replace(st, **upd)
    _reject_jumps(scan, source, first_row)
    _supersede(scan, source)
    # The source's rows in file order, however they were found: deferred records come back at the end,
    # the streamed route reads a chunk's lines without the candidate literal after the others, the grep
    # route reads its passes one after the other and a summary block when a hit near it comes. (A sort of
    # rows nearly in order costs ~0.1 µs a row; each row cost its line's dispatch, 10-100 times that.)
    tail = scan.rows[first_row:]
    tail.sort(key=_file_order)
    scan.rows[first_row:] = tail
    if scan.salvaged_count:
        shown = "; ".join(
            f"{s.where} ({s.fmt}): missing {s.missing}" + (f" — {s.derived}" if s.derived else "")
            for s in scan.salvaged[:3]
        )
        more = f" (and {scan.salvaged_count - 3} more)" if scan.salvaged_count > 3 else ""
        scan.notes = [n for n in scan.notes if not n.startswith("salvaged ")]
        scan.note(f"salvaged {scan.salvaged_count} incomplete metrics line(s) or block(s): {shown}{more}")
    if scan.foreign_count:
        scan.notes = [n for n in scan.notes if "inside another message" not in n]
        ex = scan.foreign[0]
        scan.note(
            f"{scan.foreign_count} metrics-like text(s) inside another message (a prompt, a JSON string, an "
            "echoed command) were not taken as metrics lines, e.g. "
            f"{ex.where if ex.line_no or ex.offset else ex.source}"
        )


def _other_frames(scan: LogScan, source: str, first_row: int) -> None:
    """In a capture of several services, pods or units, the engine's records are those of the frames its
    startup lines came in: another frame's metrics line (a gateway echoing a user's text, whole engine
    line included) is not read. Without startup lines in any frame, every frame's lines are read."""
    engine = scan.engine_frames
    if not engine:
        return
    frames = scan.tag_frames

    def other(tag) -> str | None:
        frame = frames.get(tag)
        return frame if frame is not None and frame not in engine else None

    why = f"not a record of the engine's ({', '.join(sorted(engine))}): ignored"
    keep = []
    for i, r in enumerate(scan.rows):
        frame = other(r.engine) if i >= first_row and r.source == source else None
        if frame is None:
            keep.append(r)
            continue
        scan.uncount(r.fmt)
        scan.foreign_record(r.source, r.line_no, r.offset, f"a record of {frame}, {why}")
    scan.rows = keep
    f = scan.fast
    drop = [i for i, (s, t) in enumerate(zip(f["src"], f["tag"], strict=False)) if s == source and other(t) is not None]
    for i in drop:
        scan.uncount(FAST_FMT)
        scan.foreign_record(source, f["no"][i], f["off"][i], f"a record of {other(f['tag'][i])}, {why}")
    if drop:
        gone = set(drop)
        f.keep([i for i in range(len(f)) if i not in gone])


def _file_order(r: Row) -> int:
    return r.offset if r.offset is not None else -1


def _series_key(fmt: str, engine) -> tuple:
    """The lines of one engine's counters: its format's engine and the line's process tag."""
    f = F.BY_FMT.get(fmt)
    return (f.engine if f is not None else fmt, engine)


def _reject_jumps(scan: LogScan, source: str, first_row: int) -> None:
    """An interval drafting orders of magnitude more than the engine's others is not a measurement:
    rejected as forged or damaged (see JUMP_FACTOR, JUMP_FLOOR)."""
    f = scan.fast
    if not any(r.drafted is not None and r.drafted > JUMP_FLOOR for r in scan.rows[first_row:]) and (
        not f or max(f["dft"]) <= JUMP_FLOOR
    ):
        return  # (the usual case, decided at C speed: nothing near the floor)
    series: dict = {}
    for i in range(first_row, len(scan.rows)):
        r = scan.rows[i]
        # (cumulative counters' first difference is everything since the engine started: not a jump)
        if r.source == source and r.drafted is not None and not F.BY_FMT[r.fmt].cumulative:
            series.setdefault(_series_key(r.fmt, r.engine), []).append(("r", i, r.drafted))
    for i, (s, tag, d) in enumerate(zip(f["src"], f["tag"], f["dft"], strict=False)):
        if s == source:
            series.setdefault(_series_key(FAST_FMT, tag), []).append(("f", i, d))
    drop_rows: set[int] = set()
    drop_fast: set[int] = set()
    for items in series.values():
        if len(items) < 2 or max(x[2] for x in items) <= JUMP_FLOOR:
            continue
        values = sorted(x[2] for x in items)
        med = values[0] if len(values) == 2 else median(values)
        for kind, i, d in items:
            if d > JUMP_FLOOR and d > JUMP_FACTOR * max(med, 1):
                (drop_rows if kind == "r" else drop_fast).add(i)
    for i in sorted(drop_rows):
        r = scan.rows[i]
        scan.bad(
            r.source,
            r.line_no,
            r.offset,
            f"absurd numbers: {r.drafted} tokens drafted in one interval, more than "
            f"{JUMP_FACTOR}× this engine's other intervals",
            "",
            rejected=True,
        )
    if drop_rows:
        scan.rows = [r for i, r in enumerate(scan.rows) if i not in drop_rows]
    if drop_fast:
        for i in sorted(drop_fast):
            scan.bad(
                f["src"][i],
                f["no"][i],
                f["off"][i],
                f"absurd numbers: {f['dft'][i]} tokens drafted in one "
                f"interval, more than {JUMP_FACTOR}× this engine's other intervals",
                "",
                rejected=True,
            )
        f.keep([i for i in range(len(f)) if i not in drop_fast])


def _supersede(scan: LogScan, source: str) -> None:
    # (only drafts-weighted rows set others aside: per-request averages never replace counts)
    present = {r.fmt for r in scan.rows if r.source == source and not r.per_request}
    for fmt in F.FORMATS:
        if not fmt.supersedes or not (present & set(fmt.fmt_ids)):
            continue
        gone = {v for fid in fmt.supersedes for v in F.BY_ID[fid].fmt_ids}
        moved = [r for r in scan.rows if r.source == source and r.fmt in gone]
        if moved:
            scan.shadowed.extend(moved)
            scan.rows = [r for r in scan.rows if not (r.source == source and r.fmt in gone)]
            scan.note(
                f"{source}: {len(moved)} {F.BY_FMT[moved[0].fmt].label} row(s) set aside: the "
                f"{fmt.label} lines count the same drafts exactly"
            )
