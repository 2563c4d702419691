"""Streamed log scanning: large binary chunks, a literal pre-filter, then the format parsers.

Only lines holding one of a few literals are decoded and handed to a regex; everything else is
skipped at `bytes.find` speed. Memory stays flat: a chunk, a carried partial line (capped), and one
small row per metrics line. Formats and their meaning: shared/reference/engine-logs.md.
"""

from __future__ import annotations

import gc
import gzip
import io
import os
import re
import sys
import zlib
from dataclasses import dataclass, field
from typing import IO, Iterable, Iterator

from ..redact import redact_text
from ..textsafe import strip_ansi
from . import lines as L
from .records import MIN_DRAFTS, AcceptanceSummary, Malformed, SpecInterval, StartupFacts
from .startup import StartupBuilder

# 256 KiB: both literal passes over a chunk then run from the CPU cache (≈15 % faster than 4 MiB)
CHUNK = 256 << 10
MAX_LINE = 1 << 20  # a longer line is skipped (with a note), so one bad line cannot eat memory
BLOCK_LOOKAHEAD = 16 << 10  # a summary block must fit in this many bytes after its first line
COUNT_LINES_BELOW = 64 << 20  # regular files larger than this are addressed by byte offset

# Every metrics format contains "ccept" (acceptance / accept len / Accepted); a second pass finds
# `SpecDecoding metrics` lines without it (damaged ones, to report them). Startup lines are searched
# for only in a source's first chunk and where a new process tag appears (a start or restart).
_METRIC_LIT = b"ccept"
_V1_LIT = b"SpecDecoding metrics"
_V0_LIT = L.V0_LITERAL.encode()
_STARTUP_EXTRA = (b"version", b"SpeculativeConfig", b"Resolved architecture", b"LLM engine (v", b"serving model")


def pp_tuple(pp) -> tuple[float, ...]:
    """Per-position rates as floats (the fast path keeps them as the printed bytes)."""
    if isinstance(pp, (bytes, str)):
        return tuple(float(x) for x in pp.split(b"," if isinstance(pp, bytes) else ","))
    return tuple(pp)


FAST_COLS = ("src", "no", "ts", "tag", "drafts", "dft", "acc", "k", "pp", "mean", "athr", "dthr", "off", "est")
FIELDS = ("fmt", "source", "line_no", "timestamp", "engine", "drafts", "drafted", "accepted", "k", "per_position",
          "printed_mean", "accepted_throughput", "drafted_throughput", "emitted", "offset", "estimated")


@dataclass
class LogScan:
    """What a scan saw. `rows` are SpecInterval field tuples; the (usually dominant) vLLM 0.10.2+
    lines of the fast path are kept column-wise in `fast`. `all_rows()` / `intervals` give both."""

    rows: list[tuple] = field(default_factory=list)
    fast: dict = field(default_factory=lambda: {k: [] for k in FAST_COLS})
    malformed: list[Malformed] = field(default_factory=list)
    malformed_count: int = 0
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
    engine_hint: tuple[str, str | None] | None = None  # from --engine NAME==VERSION
    _v0_state: dict = field(default_factory=dict, repr=False)
    _v0: list = field(default_factory=list, repr=False)
    _sgl: list = field(default_factory=list, repr=False)

    @property
    def n_intervals(self) -> int:
        return len(self.rows) + len(self.fast["ts"])

    def all_rows(self) -> list[tuple]:
        """Every interval as a SpecInterval field tuple, in file order (sources in scan order)."""
        f = self.fast
        fast = [("vllm-v1-0.10.2", src, no, ts, tag, d, dft, acc, len_k, pp, mean, a, b, None, off, est)
                for src, no, ts, tag, d, dft, acc, len_k, pp, mean, a, b, off, est in zip(*(f[c] for c in FAST_COLS))]
        if not self.rows:
            return fast
        if not fast:
            return list(self.rows)
        order = {s: i for i, s in enumerate(self.sources)}
        return sorted(self.rows + fast, key=lambda r: (order.get(r[1], 0), r[14] if r[14] is not None else float("inf")))

    def keep(self, pred) -> None:
        """Keep only the intervals whose timestamp satisfies pred."""
        self.rows = [r for r in self.rows if pred(r[3])]
        f = self.fast
        idx = [i for i, ts in enumerate(f["ts"]) if pred(ts)]
        if len(idx) != len(f["ts"]):
            for c in FAST_COLS:
                col = f[c]
                f[c] = [col[i] for i in idx]

    @property
    def intervals(self) -> list[SpecInterval]:
        return [SpecInterval(*r[:9], pp_tuple(r[9]), *r[10:]) for r in self.all_rows()]

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def bad(self, source: str, line_no: int | None, offset: int | None, reason: str, text: str) -> None:
        self.malformed_count += 1
        if len(self.malformed) < 20:
            self.malformed.append(Malformed(source, line_no, reason, redact_text(text.strip()[:300]), offset))


# ---- the per-line dispatch ----------------------------------------------------------------------

def _k_hint(scan: LogScan, startup: StartupBuilder) -> int | None:
    return startup.f.get("num_speculative_tokens")


def _message(line: str) -> tuple[str, str | None]:
    if "\x1b" in line:
        line = strip_ansi(line)
    if "\x00" in line:
        line = line.replace("\x00", "")
    ts_json = None
    if '{"' in line:
        line, ts_json = L.unwrap_json(line)
    return line, ts_json


_NO_TAG = object()


def _handle_line(scan: LogScan, startup: StartupBuilder, line: str, source: str, no: int | None, off: int | None,
                 block: list[str] | None = None, before: list[str] | None = None):
    """Parse one candidate line; return the line's process tag (or _NO_TAG when it was no metrics line)."""
    line, ts_json = _message(line)
    for literal, kind in ((L.V1_LITERAL, "v1"), (L.V0_LITERAL, "v0"), (L.SGL_LITERAL, "sgl"),
                          (L.BENCH_LITERAL, "bench"), (L.OFFLINE_LITERAL, "offline")):
        pos = line.find(literal)
        if pos >= 0:
            break
    else:
        return _NO_TAG
    msg = line[pos:]
    if kind == "v1":
        res = L.parse_v1(msg)
    elif kind == "v0":
        res = L.parse_v0(msg)
    elif kind == "sgl":
        res = L.parse_sglang(msg)
        if res is None:
            return _NO_TAG
    elif kind == "bench":
        res = L.parse_bench_block([msg] + (block or []))
    else:
        res = L.parse_offline_block([_message(b)[0] for b in (before or [])], [msg] + (block or []))
    scan.candidate_lines += 1
    if isinstance(res, str):
        scan.bad(source, no, off, res, line)
        return _NO_TAG
    ts, engine = L.prefix_facts(line[:pos])
    if ts_json:
        ts = L.norm_ts(ts_json) or ts
    fmt = res["fmt"]
    if kind == "v1":
        drafts, est = L.v1_drafts(res, _k_hint(scan, startup))
        mean, normalised = L.settle_v1_mean(res, drafts)
        if fmt == "vllm-v1-0.8.5/0.9":
            fmt = "vllm-v1-0.8.5" if normalised else "vllm-v1-0.9"
            if normalised:
                scan.mean_normalised += 1
        pp = res["pp"]
        row = (fmt, source, no, ts, engine, drafts, res["drafted"], res["accepted"], len(pp) or _k_hint(scan, startup),
               pp, mean, res["athr"], res["dthr"], None, off, est)
    elif kind == "v0":
        # cumulative: differenced in file order once the whole source is read (`_finish`)
        scan._v0.append((res, source, no, ts, engine, off))
        scan.formats[fmt] = scan.formats.get(fmt, 0) + 1
        return engine
    elif kind == "sgl":
        scan._sgl.append((res, source, no, ts, engine, off))
        scan.formats[fmt] = scan.formats.get(fmt, 0) + 1
        return engine
    elif kind == "bench":
        row = _summary_row(res, source, no, ts, engine, off, _k_hint(scan, startup))
    else:
        if res.get("note"):
            scan.note(res["note"])
        row = _summary_row(res, source, no, ts, engine, off, _k_hint(scan, startup))
    scan.rows.append(row)
    scan.formats[fmt] = scan.formats.get(fmt, 0) + 1
    return engine


def _summary_row(res: dict, source, no, ts, engine, off, k_hint) -> tuple:
    """A bench or offline summary is one interval covering the whole run."""
    pp = res["pp"]
    drafts, est = res.get("drafts"), False
    acc, dft = res.get("accepted"), res.get("drafted")
    mean = res["mean"]
    if drafts is None and acc is not None and mean > 1.0:
        drafts, est = acc / (mean - 1.0), True
    if drafts is None:
        drafts, est = 1.0, True  # a summary without counts: its weight is unknown, its τ is the mean
    if acc is not None:
        acc = int(acc)
    if dft is not None:
        dft = int(dft)
    return (res["fmt"], source, no, ts, engine, drafts, dft, acc, len(pp) or k_hint, pp, mean, None, None, None,
            off, est)


def _v0_interval(scan: LogScan, res: dict, source, no, ts, engine, off) -> tuple | None:
    """V0 prints counters since start: the interval is the difference with the previous line of
    the same engine (the first line's interval starts at zero). A drop means a restart."""
    key = (source, engine)
    prev = scan._v0_state.get(key)
    cur = (res["accepted"], res["drafted"], res["emitted"])
    scan._v0_state[key] = cur
    if prev is not None and all(c >= p for c, p in zip(cur, prev)):
        d_acc, d_dft, d_emt = (c - p for c, p in zip(cur, prev))
    else:
        if prev is not None:
            scan.note("vLLM V0 counters went down between two lines (a restart?): counting afresh from there")
        d_acc, d_dft, d_emt = cur
    k = res["k"]
    if d_dft == 0:
        return None  # idle interval: nothing drafted since the last line
    drafts = d_dft / k
    if d_emt < drafts or d_emt > drafts * (k + 1) + 1e-6:
        scan.bad(source, no, off, f"absurd numbers: emitted {d_emt} outside [drafts, drafts·(k+1)]", "")
        return None
    tau = d_emt / drafts
    return ("vllm-v0", source, no, ts, engine, drafts, d_dft, d_acc, k, (), tau, None, None, float(d_emt), off,
            d_dft % k != 0)


def _finish_sglang(scan: LogScan, startup: StartupBuilder) -> None:
    """SGLang prints no counts: each line covers `decode_log_interval` (40) decode steps of
    `#running-req` requests, so drafts ≈ 40·running-req, an estimate used only as a weight.

    The `accept rate` changed meaning (engine-logs.md): 0.5.6–0.5.10 print accept_len /
    num_draft_tokens, 0.5.23 the strict (len-1)/(num_draft_tokens-1). --engine settles it;
    otherwise the arithmetic does (which reading gives an integer num_draft_tokens).
    """
    if not scan._sgl:
        return
    interval = 40
    ndt = None
    args = startup.f.get("args") or {}
    if isinstance(args.get("speculative_num_draft_tokens"), int):
        ndt = args["speculative_num_draft_tokens"]
    if isinstance(args.get("decode_log_interval"), int) and args["decode_log_interval"] > 0:
        interval = args["decode_log_interval"]
    meaning = _sglang_rate_meaning(scan, ndt)
    scan.sglang_rate_meaning = meaning
    for res, source, no, ts, engine, off in scan._sgl:
        run = res["running"]
        if run == 0:
            continue
        drafts = float(run * interval)
        k = ndt - 1 if ndt else None
        accepted = (res["len"] - 1.0) * drafts
        drafted = int(round(drafts * k)) if k else None
        scan.rows.append(("sglang", source, no, ts, engine, drafts, drafted, accepted, k, (),
                          res["len"], None, None, None, off, True))
    scan.note(f"SGLang lines carry no counts: each is weighted by #running-req × {interval} decode steps "
              "(an estimate)")
    if meaning:
        scan.note(f"SGLang `accept rate` read as {meaning}")
    scan._sgl = []


def _sglang_rate_meaning(scan: LogScan, ndt: int | None) -> str | None:
    rated = [r for r, *_ in scan._sgl if r["rate"] is not None]
    if not rated:
        return None
    hint = scan.engine_hint
    if hint and hint[0] == "sglang" and hint[1]:
        try:
            parts = tuple(int(x) for x in hint[1].split(".")[:3])
        except ValueError:
            parts = ()
        if parts and parts <= (0, 5, 10):
            return "accept_len / num_draft_tokens (SGLang 0.5.6–0.5.10, from --engine)"
        if parts and parts >= (0, 5, 23):
            return "strict (accept_len-1)/(num_draft_tokens-1) (SGLang 0.5.23+, from --engine)"
    loose = strict = 0.0
    for r in rated:
        ln, rate = r["len"], r["rate"]
        if rate <= 0:
            strict += 1  # the loose reading has a floor of 1/num_draft_tokens, never 0
            continue
        n_loose, n_strict = ln / rate, 1.0 + (ln - 1.0) / rate
        if ndt:
            loose += abs(n_loose - ndt) < 0.15 * ndt
            strict += abs(n_strict - ndt) < 0.15 * ndt
        else:
            loose += abs(n_loose - round(n_loose)) < 0.12
            strict += ln > 1.0 and abs(n_strict - round(n_strict)) < 0.12
    if loose > strict:
        return "accept_len / num_draft_tokens (the SGLang 0.5.6–0.5.10 meaning, detected)"
    if strict > loose:
        return "strict (accept_len-1)/(num_draft_tokens-1) (the SGLang 0.5.23 meaning, detected)"
    return "undetermined (give --engine sglang==VERSION)"


# ---- streaming --------------------------------------------------------------------------------

# The vLLM >= 0.10.2 line, exactly as vLLM prints it, in bytes: the fast path. Anything else
# (other versions, odd spacing, cut lines, negatives) falls through to the tolerant parsers.
FAST_BODY = (
    rb"SpecDecoding metrics: Mean acceptance length: (\d+\.\d\d), Accepted throughput: (\d+\.\d\d) ?tokens/s, "
    rb"Drafted throughput: (\d+\.\d\d) ?tokens/s, Accepted: (\d+) tokens, Drafted: (\d+) tokens, "
    rb"Per-position acceptance rate: ((?:0\.\d{3}|1\.000)(?:, ?(?:0\.\d{3}|1\.000))*), "
    rb"Avg Draft acceptance rate: (\d+\.\d)%")
_FAST = re.compile(FAST_BODY + rb"[ \t\r]*$", re.M)
_FAST_BACK = len(b"SpecDecoding metrics: Mean a")  # from the first "ccept" back to the literal
_TS_B = re.compile(rb"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)|(?<![\d-])(\d\d-\d\d) (\d\d:\d\d:\d\d)")
_STARTUP_LITS = (b"args",) + _STARTUP_EXTRA
_BLOCK_LITS = (L.BENCH_LITERAL.encode(), L.OFFLINE_LITERAL.encode())

# What a remote pre-filter (grep -F on the host, collect/host.py) keeps: the metrics lines a SERVER log
# holds (the bench and offline summaries are printed by client tools, not by the server) and the
# startup lines' literals. Few literals on purpose: GNU grep -F slows sharply as patterns are added.
# Kept here so the host filter and this scanner cannot drift apart.
SPEC_LINE_LITERALS = (L.V1_LITERAL, L.V0_LITERAL, L.SGL_LITERAL)
STARTUP_LITERALS = tuple(x.decode() for x in _STARTUP_EXTRA) + ("non-default args", "args: Namespace", "server_args")


def prefix_shape(prefix: bytes) -> tuple[int, bytes, bytes, int, int, bytes]:
    """(length, head, tail, time start, time end, key) of the text before a metrics message. Lines of
    one process share it, only their time differs: the last timestamp (a wrapper's comes first). The key
    is the prefix without its times; the length is -1 when it holds several (the times' widths vary)."""
    found = list(_TS_B.finditer(prefix))
    if not found:
        return len(prefix), prefix, b"", 0, 0, prefix
    a, b = found[-1].span()
    return (len(prefix) if len(found) == 1 else -1), prefix[:a], prefix[b:], a, b, _TS_B.sub(b"", prefix)


class _Scanner:
    def __init__(self, scan: LogScan, source: str, count_lines: bool):
        self.scan = scan
        self.source = source
        self.count_lines = count_lines
        self.startup = StartupBuilder(scan.startup)
        self.line_base = 0  # lines before the current buffer (when counting)
        self.head_left = CHUNK  # bytes of the source's head not yet startup-scanned
        self.prev_buf, self.prev_stop = b"", 0  # the previous buffer, sliced only when needed
        self.replacements = 0
        self.prefixes: dict[bytes, str | None] = {}  # prefix without its timestamp -> engine tag
        self.tags: set = set()

    def tag_for(self, key: bytes, prefix: bytes) -> tuple:
        """The process tag of a prefix shape (its key), and whether that tag is new to this scan."""
        try:
            return self.prefixes[key], False
        except KeyError:
            tag = self.prefixes[key] = L.prefix_facts(_message(self._decode(prefix))[0])[1]
            return tag, tag not in self.tags

    def _new_tag(self, tag, buf: bytes, end: int) -> None:
        """A process not seen before (a start or restart): read the startup lines around it."""
        self.tags.add(tag)
        if not self._startup_done:
            self._startup_done = True
            self._startup_scan(self.prev_tail())
            self._startup_scan(buf, end)

    def process(self, buf: bytes, base: int, end: int, eof: bool) -> int:
        """Handle the complete lines in buf[:end]; return where processing stopped (a block that
        may continue past the buffer is left for the next call).

        One `find` pass for "ccept" (in every metrics format); startup literals are searched
        only in a source's first chunk and in chunks where a new process tag appears."""
        self._startup_done = False
        if self.head_left > 0:  # the source's head: every line that starts in its first CHUNK bytes
            cut = end if self.head_left >= end else buf.find(b"\n", self.head_left - 1, end) + 1 or end
            self.head_left = 0 if cut < end or eof else self.head_left - end
            self._startup_done = True
            self._startup_scan(buf, cut)
        find, rfind = buf.find, buf.rfind
        fast = _FAST.match
        F = self.scan.fast
        a_src, a_no, a_ts, a_tag, a_d, a_dft, a_acc, a_k, a_pp, a_mean, a_athr, a_dthr, a_off, a_est = (
            F[c].append for c in FAST_COLS)
        source, count = self.source, self.count_lines
        shape_len, shape_head, shape_tail, ts_a, ts_b, tag = -1, b"", b"", 0, 0, None
        stop = end
        line_pos, line_no = 0, self.line_base
        n_fast = n_v1_slow = n_v0_slow = 0
        p = find(_METRIC_LIT, 0, end)
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
                    tag, new = self.tag_for(key, prefix)
                    if new:
                        self._new_tag(tag, buf, end)
                ts = prefix[ts_a:ts_b].decode() if ts_b else None
                mean, athr, dthr, acc, dft, pp, _rate = m.groups()
                acc, dft = int(acc), int(dft)
                if acc <= dft:
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
                    a_src(source); a_no(no); a_ts(ts); a_tag(tag); a_d(drafts); a_dft(dft); a_acc(acc); a_k(k)
                    a_pp(pp); a_mean(float(mean)); a_athr(float(athr)); a_dthr(float(dthr)); a_off(base + ls)
                    a_est(est)
                    n_fast += 1
                    p = find(_METRIC_LIT, le, end)
                    continue
            ls = rfind(b"\n", 0, p) + 1
            le = find(b"\n", p, end)
            if le < 0:
                le = end
            raw = buf[ls:le]
            no = None
            if count:
                line_no += buf.count(b"\n", line_pos, ls)
                line_pos = ls
                no = line_no + 1
            block = before = None
            if _BLOCK_LITS[0] in raw or _BLOCK_LITS[1] in raw:
                if not eof and end - ls < BLOCK_LOOKAHEAD:
                    stop = ls
                    break
                block_end = min(end, ls + BLOCK_LOOKAHEAD)
                parts = buf[le + 1:block_end].split(b"\n")[:80]
                block = [self._decode(x) for x in parts]
                back = (self.prev_tail()[-2048:] + buf[:ls] if ls < 2048 else buf[ls - 2048:ls]).split(b"\n")[-6:]
                before = [self._decode(x) for x in back]
                n = _block_len(block)
                le = min(end, le + 1 + sum(len(x) + 1 for x in parts[:n]) - 1) if n else le
            if _V1_LIT in raw:
                n_v1_slow += raw.count(_V1_LIT)
            if _V0_LIT in raw:
                n_v0_slow += raw.count(_V0_LIT)
            # (its own name: `tag` is the fast path's, kept with the prefix shape it belongs to)
            line_tag = _handle_line(self.scan, self.startup, self._decode(raw), source, no, base + ls, block, before)
            if line_tag is not _NO_TAG and line_tag not in self.tags:
                self._new_tag(line_tag, buf, end)
            p = find(_METRIC_LIT, le, end)
        # a vLLM metrics line (V1 or V0) without "ccept" — cut short — cannot parse, but the user must see
        # it. The pass above saw every line with "ccept"; only when the chunk holds more of a literal than
        # it saw is there such a line, so the per-line search runs only then (one C-level count otherwise).
        for lit, seen in ((_V1_LIT, n_fast + n_v1_slow), (_V0_LIT, n_v0_slow)):
            p = find(lit, 0, stop) if buf.count(lit, 0, stop) > seen else -1
            while p >= 0:
                le = find(b"\n", p, stop)
                if le < 0:
                    le = stop
                ls = rfind(b"\n", 0, p) + 1
                # (a line with both literals is the V0 pass's)
                if find(_METRIC_LIT, ls, le) < 0 and (lit is _V0_LIT or find(_V0_LIT, ls, le) < 0):
                    no = (self.line_base + buf.count(b"\n", 0, ls) + 1) if count else None
                    _handle_line(self.scan, self.startup, self._decode(buf[ls:le]), source, no, base + ls)
                p = find(lit, le, stop)
        if n_fast:
            self.scan.formats["vllm-v1-0.10.2"] = self.scan.formats.get("vllm-v1-0.10.2", 0) + n_fast
            self.scan.candidate_lines += n_fast
        if count:
            self.line_base = line_no + buf.count(b"\n", line_pos, stop)
        self.prev_buf, self.prev_stop = buf, stop
        return stop

    def prev_tail(self) -> bytes:
        return self.prev_buf[max(0, self.prev_stop - (64 << 10)):self.prev_stop]

    def _startup_scan(self, buf: bytes, end: int | None = None) -> None:
        """Feed the startup lines in buf[:end] to the builder, in file order (a later line wins)."""
        end = len(buf) if end is None else end
        found: dict[int, int] = {}
        for lit in _STARTUP_LITS:
            p = buf.find(lit, 0, end)
            while p >= 0:
                ls = buf.rfind(b"\n", 0, p) + 1
                le = buf.find(b"\n", p, end)
                le = end if le < 0 else le
                found[ls] = le
                p = buf.find(lit, le, end)
        for ls in sorted(found):
            line = _message(self._decode(buf[ls:found[ls]]))[0]
            if "ccept" not in line:  # metrics lines are the other pass's
                self.startup.feed(line)

    def _decode(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.replacements += 1
            return raw.decode("utf-8", "replace")


def _block_len(block: list[str]) -> int:
    """How many of the lines after a summary's first line belong to it (the bench block's and the
    offline example's own lines, and the dashed rules between them): they are not read again."""
    n = 0
    for ln in block:
        s = ln.strip()
        if not s or "=====" in ln or not (s.strip("-") == "" or L.is_block_line(ln)):
            break
        n += 1
    return n


def scan_stream(fh: IO[bytes], source: str, scan: LogScan, count_lines: bool = True, base: int = 0,
                part: bool = False) -> LogScan:
    """Scan a binary stream into `scan`. Errors from a damaged stream (truncated gzip) become notes;
    what was read before them is kept. `part`: one byte range of a file scanned in parallel (the
    caller finishes the whole file)."""
    sc = _Scanner(scan, source, count_lines)
    sc.fast_from = len(scan.fast["ts"])
    n_before = len(scan.rows)
    if not part:
        scan.sources.append(source)
    carry = b""
    # base: offset of carry[0] in the source
    skipping = 0  # > 0 while dropping the rest of an over-long line
    total = 0
    last_byte = b""
    first_bytes = None
    while True:
        try:
            data = fh.read(CHUNK)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            scan.note(f"{source}: compressed stream is damaged or truncated after {total} bytes ({exc}); "
                      "the part before it was parsed")
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
            _long_line(scan, sc, source, skipping)
            base += nl + 1
            data = data[nl + 1:]
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
    if skipping:
        _long_line(scan, sc, source, skipping)
    scan.bytes += total
    if count_lines and scan.lines is not None:
        scan.lines += sc.line_base + (1 if total and last_byte != b"\n" else 0)
    elif not count_lines:
        scan.lines = None
    scan.replacements = getattr(scan, "replacements", 0) + sc.replacements
    # the fast path keeps the time as printed; the sortable form has a 'T' between date and time
    tsl = scan.fast["ts"]
    for i in range(sc.fast_from, len(tsl)):
        t = tsl[i]
        if t is not None and " " in t:
            tsl[i] = t.replace(" ", "T", 1)
    scan.startup = sc.startup.build()
    if not part:
        _input_notes(scan, source, total, first_bytes or b"", scan.replacements)
        _finish(scan, len(scan.rows) - n_before)
    return scan


def _finish(scan: LogScan, n_source_rows: int) -> None:
    """Turn the deferred cumulative (V0) and count-less (SGLang) records into intervals, fill in
    drafts that needed the k from the startup lines, and keep the source's rows in file order."""
    added = bool(scan._v0 or scan._sgl)
    start = len(scan.rows) - n_source_rows
    for res, source, no, ts, engine, off in scan._v0:
        row = _v0_interval(scan, res, source, no, ts, engine, off)
        if row is not None:
            scan.rows.append(row)
    scan._v0 = []
    builder = StartupBuilder(scan.startup)
    _finish_sglang(scan, builder)
    k = scan.startup.num_speculative_tokens
    if k:
        for i in range(len(scan.rows)):
            r = scan.rows[i]
            if r[5] is None and r[6] is not None:  # 0.8.3-0.8.4: drafts = Drafted / k
                scan.rows[i] = r[:5] + (r[6] / k,) + r[6:8] + (k,) + r[9:15] + (True,)
    if added:
        tail = scan.rows[start:]
        tail.sort(key=lambda r: r[14] if r[14] is not None else -1)
        scan.rows[start:] = tail


def _long_line(scan: LogScan, sc: _Scanner, source: str, length: int) -> None:
    scan.note(f"{source}: a line of {length} bytes without a newline was skipped (longer than {MAX_LINE} bytes)")


def _input_notes(scan: LogScan, source: str, total: int, head: bytes, replacements: int) -> None:
    if total == 0:
        scan.note(f"{source}: empty")
        return
    nul = head.count(b"\x00")
    if nul:
        scan.note(f"{source}: contains NUL bytes ({nul} in the first {len(head)} bytes): binary or damaged; "
                  "text lines around them were still parsed")
    elif head and sum(1 for b in head[:4096] if b < 9 or 13 < b < 32) > 0.05 * min(len(head), 4096):
        scan.note(f"{source}: looks binary (many control bytes); text lines in it were still parsed")
    if replacements:
        scan.note(f"{source}: {replacements} candidate line(s) were not valid UTF-8 (decoded with replacement)")


def open_source(path: str) -> tuple[IO[bytes], bool]:
    """A binary stream for a path ('-' is stdin; gzip detected by its magic bytes) and whether its
    lines should be counted (small or streamed inputs) rather than addressed by byte offset."""
    if path == "-":
        return sys.stdin.buffer, True
    fh = open(path, "rb", buffering=0)
    magic = fh.read(2)
    fh.seek(0)
    if magic == b"\x1f\x8b":
        return _Gunzip(gzip.GzipFile(fileobj=io.BufferedReader(fh, 1 << 20)), fh), True
    size = os.fstat(fh.fileno()).st_size
    return fh, size < COUNT_LINES_BELOW


PARALLEL_MIN = 256 << 20  # plain files at least this large are split across processes


def scan_file(path: str, scan: LogScan | None = None, workers: int | None = None, meanwhile=None,
              grep: bool = True) -> LogScan:
    """Scan one log file into `scan`. `meanwhile`: work for this process while worker processes scan
    a large file (imports, loading the checks); called at most once, possibly not at all. `workers`
    (None: up to 4 by the cores) and `grep` (the GNU grep pre-filter for large files) come from Settings."""
    scan = scan if scan is not None else LogScan()
    fh, count = open_source(path)
    try:
        size = os.fstat(fh.fileno()).st_size if isinstance(fh, io.FileIO) else 0
        n = workers if workers is not None else min(os.cpu_count() or 1, 4)
        from . import prefilter

        grep = prefilter.grep_command(grep) if size >= prefilter.GREP_MIN else None
        if size >= PARALLEL_MIN and n > 1 and hasattr(os, "fork"):
            _scan_parallel(fh, path, size, scan, n, grep, meanwhile)
        elif grep:
            _merge_parts(scan, fh, path, size, [_part_payload(_scan_part(fh, path, 0, size, size, scan.engine_hint,
                                                                          grep))])
        else:
            scan_stream(fh, path, scan, count_lines=count)
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()
    _resolve_line_numbers(scan, path)
    return scan


def head_lines(fd: int, size: int) -> bytes:
    """The lines that start in a file's first CHUNK bytes (the last one completed, up to MAX_LINE)."""
    data = os.pread(fd, CHUNK, 0)
    if len(data) == CHUNK and not data.endswith(b"\n") and size > CHUNK:
        more = os.pread(fd, min(MAX_LINE, size - CHUNK), CHUNK)
        nl = more.find(b"\n")
        data += more[:nl + 1] if nl >= 0 else more
    return data


def _scan_part(fh, path: str, start: int, end: int, size: int, engine_hint, grep: str | None) -> LogScan:
    """One byte range of a plain file: through the grep pre-filter when there is one, else (or when
    grep misbehaves) streamed in Python."""
    if grep:
        from .prefilter import GrepFailed, scan_range

        part = LogScan(engine_hint=engine_hint)
        try:
            scan_range(fh, path, start, end, size, part, grep)
            return part
        except GrepFailed:
            pass
    part = LogScan(engine_hint=engine_hint)
    scan_stream(_Range(fh, start, end), path, part, count_lines=False, base=start, part=True)
    return part


# Numeric fast-path columns travel from a worker as machine arrays (typecode, bytes): marshal and numpy
# then take them whole instead of one Python number at a time.
_ARRAY_COLS = {"drafts": "d", "dft": "q", "acc": "q", "k": "q", "mean": "d", "athr": "d", "dthr": "d", "off": "q"}


def extend_numeric(fast: dict, c: str, vals) -> None:
    """Append to a numeric fast-path column, kept as a machine array while its numbers fit one (an
    absurd 5000-digit count turns the column back into a list of Python ints)."""
    from array import array

    col = fast[c]
    if type(col) is list and not col:
        fast[c] = col = array(_ARRAY_COLS[c])
    if type(col) is not list:
        if not isinstance(vals, list):
            vals = list(vals)
        before = len(col)
        try:
            col.extend(vals)
            return
        except (OverflowError, TypeError):
            del col[before:]
            fast[c] = col = col.tolist()
    col.extend(vals)


def _pack_fast(fast: dict) -> dict:
    from array import array

    out = {}
    for c, v in fast.items():
        tc = _ARRAY_COLS.get(c)
        try:
            if isinstance(v, array) and v.typecode == tc:
                out[c] = (tc, v.tobytes())
            else:
                out[c] = (tc, array(tc, v).tobytes()) if tc and v else v
        except (OverflowError, TypeError):  # an absurd 5000-digit count: keep it a Python int
            out[c] = v
    return out


def _extend_fast(scan: LogScan, c: str, v) -> None:
    from array import array

    cur = scan.fast[c]
    if not isinstance(v, tuple):
        if c in _ARRAY_COLS:
            extend_numeric(scan.fast, c, v)
        else:
            cur.extend(v)
        return
    arr = array(v[0])
    arr.frombytes(v[1])
    if not cur:
        scan.fast[c] = arr
    elif isinstance(cur, array) and cur.typecode == arr.typecode:
        cur.extend(arr)
    else:
        if isinstance(cur, array):
            scan.fast[c] = cur = cur.tolist()
        cur.extend(arr.tolist())


def _part_payload(part: LogScan) -> tuple:
    st = part.startup
    return (part.rows, _pack_fast(part.fast), [(m.source, m.line_no, m.reason, m.text, m.offset) for m in part.malformed],
            part.malformed_count, part.notes, part.formats, part.candidate_lines, part.mean_normalised,
            part.replacements, part._v0, part._sgl, {k: getattr(st, k) for k in st.__dataclass_fields__}, part.bytes)


def _merge_parts(scan: LogScan, fh, path: str, size: int, payloads: list, failed: int = 0) -> None:
    """Add the byte ranges' results (in file order) to `scan` as one source, then finish it; `failed`
    ranges that gave nothing make it an error once the others are in."""
    scan.sources.append(path)
    n_before = len(scan.rows)
    builder = StartupBuilder(scan.startup)
    for payload in payloads:
        _merge_part(scan, builder, payload)
    scan.lines = None  # (also when every range failed)
    scan.startup = builder.build()
    if failed:
        raise OSError(f"{failed} of {failed + len(payloads)} scan workers failed")
    _input_notes(scan, path, size, os.pread(fh.fileno(), 65536, 0), scan.replacements)
    _finish(scan, len(scan.rows) - n_before)


def _merge_part(scan: LogScan, builder: StartupBuilder, payload: tuple) -> None:
    (rows, fast, bad, bad_count, notes, formats, cand, norm, repl, v0, sgl, st, nbytes) = payload
    scan.rows.extend(rows)
    for c in FAST_COLS:
        _extend_fast(scan, c, fast[c])
    for m in bad:
        if len(scan.malformed) < 20:
            scan.malformed.append(Malformed(*m))
    scan.malformed_count += bad_count
    for t in notes:
        scan.note(t)
    for f, c in formats.items():
        scan.formats[f] = scan.formats.get(f, 0) + c
    scan.candidate_lines += cand
    scan.mean_normalised += norm
    scan.replacements += repl
    scan._v0.extend(v0)
    scan._sgl.extend(sgl)
    scan.bytes += nbytes
    builder.merge(st)
    scan.lines = None


class _Gunzip(io.RawIOBase):
    """Decompress in small steps so that a truncated or damaged .gz yields everything before the
    damage (GzipFile.read(n) drops the whole call's data when it hits the end early)."""

    def __init__(self, gz: gzip.GzipFile, raw=None):
        self.gz, self.raw = gz, raw
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.error is not None:
            err, self.error = self.error, None
            raise err
        parts, size = [], 0
        while n < 0 or size < n:
            try:
                piece = self.gz.read1(1 << 16)
            except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as exc:
                if not parts:
                    raise
                self.error = exc
                break
            if not piece:
                break
            parts.append(piece)
            size += len(piece)
        return b"".join(parts)

    def close(self) -> None:
        self.gz.close()
        if self.raw is not None:
            self.raw.close()
        super().close()


class _Range(io.RawIOBase):
    def __init__(self, fh, start: int, end: int):
        self.fh, self.pos, self.end = fh, start, end

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = self.end - self.pos if n < 0 else min(n, self.end - self.pos)
        if n <= 0:
            return b""
        data = os.pread(self.fh.fileno(), n, self.pos)
        self.pos += len(data)
        return data


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


def _scan_parallel(fh, path: str, size: int, scan: LogScan, n: int, grep: str | None = None, meanwhile=None) -> None:
    """Scan byte ranges (split at newlines) in forked worker processes; meanwhile this process
    imports the aggregation libraries (and does the caller's `meanwhile`). Results come back through
    pipes as `marshal` data: plain tuples written by our own child a moment ago, never anything read
    from the input. The pipes are drained together, so no worker waits for another's turn."""
    import marshal
    import selectors

    points = _split_points(fh, size, n)
    kids = []
    for i in range(n):
        r, w = os.pipe()
        _big_pipe(w)
        pid = os.fork()
        if pid == 0:  # worker
            os.close(r)
            gc.disable()  # a short-lived child that makes no cycles: no collector passes over its rows
            code = 0
            try:
                part = _scan_part(fh, path, points[i], points[i + 1], size, scan.engine_hint, grep)
                payload = marshal.dumps(_part_payload(part))
                with os.fdopen(w, "wb") as out:
                    out.write(payload)
            except BaseException:  # noqa: BLE001 - a worker must never return into the CLI
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        kids.append((pid, r))
    try:  # overlap: the workers scan while this process loads what aggregation needs
        import numpy  # noqa: F401
    except ImportError:
        pass
    if meanwhile is not None:
        meanwhile()
    chunks: dict[int, list[bytes]] = {r: [] for _, r in kids}
    with selectors.DefaultSelector() as sel:
        for _, r in kids:
            sel.register(r, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select():
                piece = os.read(key.fd, 1 << 20)
                if piece:
                    chunks[key.fd].append(piece)
                else:
                    sel.unregister(key.fd)
                    os.close(key.fd)
    payloads = []
    for pid, r in kids:
        data = b"".join(chunks.pop(r))
        try:  # a worker writes its payload only when its scan succeeded
            payloads.append(marshal.loads(data) if data else None)
        except (EOFError, ValueError, TypeError):
            payloads.append(None)
        del data
    for pid, _ in kids:
        os.waitpid(pid, 0)
    try:
        _merge_parts(scan, fh, path, size, [p for p in payloads if p is not None], payloads.count(None))
    finally:
        # hundreds of thousands of row objects now live to the end of the run: leave them out of the
        # collector's later full passes (each would walk them all during the summary's allocations)
        gc.freeze()


def _big_pipe(fd: int, size: int = 1 << 20) -> None:
    """A 1 MiB pipe buffer (Linux F_SETPIPE_SZ): megabytes then cross in a few large steps."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
    except (OSError, ImportError):
        pass


def _resolve_line_numbers(scan: LogScan, path: str) -> None:
    """Large files were scanned by byte offset; give the few shown malformed lines a line number."""
    todo = [m for m in scan.malformed if m.source == path and m.line_no is None and m.offset is not None]
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
    scan.malformed = [Malformed(m.source, found.get(m.offset), m.reason, m.text, m.offset)
                      if m in todo else m for m in scan.malformed]


class _LineReader(io.RawIOBase):
    """Adapts an iterable of text lines (a remote file, a test) to the binary stream scanner."""

    def __init__(self, lines: Iterable[str]):
        self._it = iter(lines)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        parts, size = [self._buf], len(self._buf)
        while n < 0 or size < n:
            try:
                ln = next(self._it)
            except StopIteration:
                break
            b = ln.encode("utf-8", "surrogatepass") if isinstance(ln, str) else bytes(ln)  # any lone surrogate; the scanner decodes leniently
            if not b.endswith(b"\n"):
                b += b"\n"
            parts.append(b)
            size += len(b)
        data = b"".join(parts)
        if n < 0:
            self._buf = b""
            return data
        self._buf = data[n:]
        return data[:n]


def scan_lines(lines: Iterable[str], source: str, into: LogScan | None = None) -> LogScan:
    scan = into if into is not None else LogScan()
    return scan_stream(_LineReader(lines), source, scan, count_lines=True)


def iter_file_lines(path: str) -> Iterator[str]:
    """Lines of a plain or gzip file (or '-' for stdin), decoded leniently. Kept for callers that
    want text; the scanner itself reads binary chunks (`scan_file`)."""
    fh, _ = open_source(path)
    try:
        for raw in io.BufferedReader(fh) if isinstance(fh, io.RawIOBase) else fh:
            yield raw.decode("utf-8", "replace")
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def aggregate(intervals, min_drafts: int = MIN_DRAFTS, startup: StartupFacts | None = None) -> AcceptanceSummary | None:
    """Drafts-weighted totals, per-position curve from counts, τ over time (see `frame.py`)."""
    if not (intervals.n_intervals if isinstance(intervals, LogScan) else len(intervals)):
        return None  # nothing to sum: spare the pandas import
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
