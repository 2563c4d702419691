"""What every format module shares: the `Format` description the registry holds, number reading
with the count cap, the wrapper grammar that decides where a line's own message starts, and the
timestamp / engine-tag facts read from the text in front of it.

A log line is a claim, not a fact (SECURITY.md). A metrics line counts only when the text before its
literal is nothing but wrappers — timestamps of any shape, log levels, logger headers such as
`[metrics.py:101]`, process tags `(APIServer pid=7)`, docker-compose `svc | `, journald `host unit[1]:`,
kubectl `[pod/x/c]`, list markers — and, where the engine prints some of its own text before the
numbers (llama.cpp's `slot print_timing: id 0 | task 3 | `), that text in its own form (`Format.lead`).
A literal inside another logger's message (a request prompt, a JSON string, an echoed command) has
other words before it: it is not a metrics line, and is reported as such.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..records import MAX_COUNT

N = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"  # signed, so negatives are caught and reported
I = r"[-+]?\d+"  # noqa: E741


class BadLine(Exception):
    """The line is this format's but cannot be read (cut short, a variant not known): reported."""


class Foreign(Exception):  # noqa: N818 - named for what the line is
    """The format's literal is in a record that is not the engine's own (a request body shaped like the
    engine's record, another logger's message): reported as such, never read."""


class Impossible(BadLine):
    """The line's numbers cannot be true (beyond the count cap, more accepted than drafted, a rate
    above 1, non-finite): forged or damaged. Reported as rejected; a gate fails closed on it."""


def num(text: str, what: str = "a number") -> float:
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise BadLine(f"{what} is not a number: {str(text)[:20]!r}") from None
    if not math.isfinite(v):
        raise Impossible(f"{what} is not finite: {str(text)[:20]!r}")
    if v < 0:
        raise Impossible(f"negative numbers ({what} {text})")
    return v


def count(text: str, what: str = "a count") -> int:
    """A token or draft count: a whole number, 0 <= n <= MAX_COUNT."""
    if len(text) > 40:
        raise Impossible(f"{what} has {len(text)} digits (the cap is 10^15)")
    v = num(text, what)
    if v > MAX_COUNT:
        raise Impossible(f"{what} {text} is beyond the 10^15 cap for one interval")
    if v != int(v):
        raise BadLine(f"{what} is not a whole number: {text}")
    return int(v)


def rate(text: str, what: str = "a rate", top: float = 1.0) -> float:
    v = num(text, what)
    if v > top + 1e-9:
        raise Impossible(f"absurd numbers: {what} {text} > {top:g}")
    return v


def rates(items: list[str], what: str = "a per-position rate") -> tuple[float, ...]:
    return tuple(rate(x, what) for x in items)


# ---- the wrapper grammar ----------------------------------------------------------------------

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_TOKENS = [
    re.compile(p)
    for p in (
        r"[ \t\r\f\v]+",
        r"[\ufffd\x00-\x08\x0e-\x1f\x7f]+",  # damage: bytes that were no UTF-8 text, control bytes (never words)
        # ISO, with or without T/ms/zone
        r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?)?(?:Z|[+-]\d\d(?::?\d\d)?)?",
        r"\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?",  # vLLM's MM-DD HH:MM:SS
        r"\d\d:\d\d:\d\d(?:[.,]\d+)?Z?",
        r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),?(?=\s)",
        _MONTH + r"\s+\d{1,2}(?:,?\s+\d{4})?(?=\s)",  # syslog / journald date (its time is the next token)
        r"\d+\.\d\d\.\d{3}\.\d{3}(?=\s)",  # llama.cpp's elapsed time 0.06.896.015
        r"\d\d?/\d\d?/\d{2,4}(?:[-: ]\d\d:\d\d:\d\d)?",
        r"\d{9,11}(?:\.\d+)?(?=\s)",  # epoch seconds
        r"\[[^\[\]\n]{0,160}\]",  # [metrics.py:101] [2025-10-22 10:27:57 DP0 TP0] [pod/x/c] [TensorRT-LLM][INFO] [I]
        r"\([\w.-]+ pid=\d+\)",  # vLLM process tag
        r"(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|TRACE|NOTICE|FATAL)\b:?",
        r"[IWEDTF](?=\s)",  # llama.cpp level letter
        r"[\w.-]+\.py:\d+\]",  # vLLM <= 0.7.3: `metrics.py:316]`
        r"[\w.@-]+\[\d+\]:",  # journald / syslog unit[pid]:
        r"[\w.-]+(?=\s+[\w.@-]+\[\d+\]:)",  # the host before a journald unit
        r"[\w.-]+(?=\s*\|)",  # docker-compose service name before its `|`
        r"[\w.]+(?=\s+-\s)",  # python logging `name - LEVEL - `
        r"(?:stdout|stderr)\s+[FP](?=\s)",  # containerd (CRI) log lines
        r"\d{1,3}[.)](?!\d)",  # list markers glued or spaced: `2.(APIServer …`, `3) `
        r"\d{1,7}(?=\s*[:|]\s)",  # a pasted line number: `120: `, `120 | `
        r"\{(?:\s*[\w.]+\s*=~?\s*\"[^\"\n]{0,200}\"\s*,?)+\s*\}",  # a Loki/Grafana label set {container="vllm"}
        r"[-*•>#|:`]+",  # bullets, quote marks, separators, an inline-code backtick
    )
]
MAX_PREFIX = 2000


def is_wrapper(prefix: str) -> bool:
    """Whether `prefix` is nothing but wrappers (empty counts): see the module doc."""
    if len(prefix) > MAX_PREFIX:
        return False
    pos, end = 0, len(prefix)
    while pos < end:
        for tok in _TOKENS:
            m = tok.match(prefix, pos)
            if m and m.end() > pos:
                pos = m.end()
                break
        else:
            return False
    return True


# ---- facts from the text in front of a message ------------------------------------------------

_TS = re.compile(
    r"(?P<iso>(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[ T](?P<t1>\d{2}:\d{2}:\d{2}))"
    r"|(?<![\d-])(?P<md>(?P<mo2>\d{2})-(?P<d2>\d{2}) (?P<t2>\d{2}:\d{2}:\d{2}))"
    r"|(?P<jd>(?P<mon>" + _MONTH + r") +(?P<d3>\d{1,2}) (?P<t3>\d{2}:\d{2}:\d{2}))"
)
_MONTHS = {
    m: i for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)
}
_PROC = re.compile(r"\((?P<name>[A-Za-z]\w*?) pid=(?P<pid>\d+)\)")
_RANK = re.compile(r"\b(DP\d+)\b")
_COMPOSE = re.compile(r"^\s*(?P<svc>[\w.-]+?)(?:-\d+)?\s+\|\s")
_JOURNAL = re.compile(r"\b(?P<unit>[\w.-]+)\[(?P<pid>\d+)\]:\s")
_KUBE = re.compile(r"^\s*\[pod/(?P<pod>[\w.-]+)(?:/[\w.-]+)?\]")
_PYLOG = re.compile(r"(?:^|\s)(?P<name>[A-Za-z_][\w.]*)\s+-\s+(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+-\s")
# The package whose loggers are the engine's own, by a format's engine (python logging names its logger).
ENGINE_PACKAGES = {"vllm": "vllm", "sglang": "sglang", "tensorrt-llm": "tensorrt_llm", "llama.cpp": "llama_cpp"}


def norm_ts(text: str | None) -> str | None:
    """A sortable timestamp: 'YYYY-MM-DDTHH:MM:SS', or 'MM-DDTHH:MM:SS' when the log has no year."""
    if not text:
        return None
    m = _TS.search(text)
    if not m:
        return None
    if m.group("iso"):
        return f"{m['y']}-{m['mo']}-{m['d']}T{m['t1']}"
    if m.group("md"):
        return f"{m['mo2']}-{m['d2']}T{m['t2']}"
    return f"{_MONTHS[m['mon']]:02d}-{int(m['d3']):02d}T{m['t3']}"


def prefix_ts(prefix: str) -> str | None:
    """The engine's own timestamp in the text in front of a message: the last one (a wrapper's comes first)."""
    ts = None
    for m in _TS.finditer(prefix):
        ts = m
    return norm_ts(ts.group(0)) if ts else None


def prefix_facts(prefix: str) -> tuple[str | None, str | None]:
    """(timestamp, engine tag) from the text in front of a message.

    The engine's own timestamp is the last one before the message (a wrapper's comes first). The tag
    keeps lines from different processes, services, pods or DP ranks apart.
    """
    ts = None
    for t in _TS.finditer(prefix):
        ts = t
    tags: list[str] = []
    m = _KUBE.search(prefix)
    if m:
        tags.append(m["pod"])
    m = _COMPOSE.search(prefix)
    if m:
        tags.append(m["svc"])
    m = _JOURNAL.search(prefix)
    if m:
        tags.append(f"{m['unit']}[{m['pid']}]")
    m = _PROC.search(prefix)
    if m:
        tags.append(f"pid {m['pid']}")
    m = _RANK.search(prefix)
    if m:
        tags.append(m.group(1))
    return (norm_ts(ts.group(0)) if ts else None), ("/".join(tags) or None)


def frame_of(prefix: str) -> str | None:
    """Which record a capture's framing says a line is: the compose service, the kubectl pod or the
    journald unit in front of it (`compose:vllm`, `pod:vllm-0`, `unit:vllm`), or None without such
    framing. The engine's own records are those of the frames its startup lines came in (result.py)."""
    m = _KUBE.search(prefix)
    if m:
        return f"pod:{m['pod']}"
    m = _COMPOSE.search(prefix)
    if m:
        return f"compose:{m['svc']}"
    m = _JOURNAL.search(prefix)
    if m:
        return f"unit:{m['unit']}"
    return None


def logger_ok(prefix: str, engine: str | None) -> bool:
    """A python-logging record (`asctime - name - LEVEL - message`) is the engine's own only when its
    logger is one of the engine's package (vllm.*): an application's logger echoing the same text is not."""
    if engine is None:
        return True
    m = _PYLOG.search(prefix)
    if m is None:
        return True
    package = ENGINE_PACKAGES.get(engine)
    return package is None or m["name"].split(".")[0] == package


def unwrap_json(line: str) -> tuple[str, str | None, int | None]:
    """A JSON log record (vLLM 0.33, docker's json-file): return (its message with the text before the
    record, timestamp text, where the message starts). Only the record's own message field counts: a
    metrics literal elsewhere in the record (a prompt, an argument) stays inside it, and a record whose
    message field is not a string is not unwrapped (no other field stands in for it)."""
    start = line.find("{")
    if start < 0 or '"' not in line[start : start + 3]:
        return line, None, None
    try:
        rec = json.loads(line[start:])
    except (ValueError, RecursionError):
        return line, None, None
    if not isinstance(rec, dict):
        return line, None, None
    key = next((k for k in ("message", "msg", "text", "log") if k in rec), None)
    msg = rec[key] if key is not None else None
    if not isinstance(msg, str):
        return line, None, None
    ts = next((str(rec[k]) for k in ("timestamp", "time", "asctime", "ts") if k in rec), None)
    tag = next((f"(X pid={rec[k]}) " for k in ("process", "pid") if type(rec.get(k)) is int), "")
    head = tag + line[:start] + " "
    return head + msg.rstrip("\n"), ts, len(head)


# The headers an engine's logger puts right before its message. A line holding one has its message
# right after the first: a metrics literal later in the line is inside that message.
VLLM_HEADER = re.compile(
    r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?\s+"
    r"(?:\[[^\]\s]+:\d+\]|[\w./-]+\.py:\d+\])(?:\s*\([\w.-]+ pid=\d+\))?\s*"
)
SGLANG_HEADER = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?: [A-Z]{1,4}\d+)*\]\s*")


def prefix_ok(
    prefix: str,
    header: re.Pattern | None = None,
    lead: re.Pattern | None = None,
    msg_at: int | None = None,
    engine: str | None = None,
) -> bool:
    """Whether the text before a format's literal makes the line the engine's own metrics line: the
    engine's text (`lead`) taken off its end, then either the line's first logger `header` ends right
    there with nothing but wrappers (the capture's framing) before it, or, with no header in the line,
    only wrappers are left. In a JSON record (`msg_at`: where its message starts) the message must start
    with the literal. A python-logging record must be the `engine`'s own logger's (`logger_ok`)."""
    if not logger_ok(prefix, engine):
        return False
    if lead is not None:
        m = lead.search(prefix)
        if m is not None:
            prefix = prefix[: m.start()]
    if msg_at is not None:
        return not prefix[msg_at:].strip() or is_wrapper(prefix[msg_at:])
    if header is not None:
        m = header.search(prefix)
        if m is not None:
            return m.end() == len(prefix) and is_wrapper(prefix[: m.start()])
    return is_wrapper(prefix)


# ---- what a format module declares ------------------------------------------------------------


@dataclass
class Line:
    """A candidate line handed to a format's `parse`: the decoded text and where the literal is."""

    text: str
    pos: int  # where the format's literal starts in text
    after: list[str] | None = None  # the lines after it (block formats), decoded, wrappers kept
    before: list[str] | None = None  # the lines before it (block formats)

    @property
    def msg(self) -> str:
        return self.text[self.pos :]


@dataclass
class Parsed:
    """What a format read from one line or block.

    rows: dicts of Row fields (fmt and the numbers; the scanner adds source, line, time and tag);
    defer: records kept until the whole source is read (cumulative counters, weights that need the
    startup lines), handed to the format's `finish`; consumed: how many lines of `after` belong to
    the block (they are not read again); missing / derived: a salvaged line's story."""

    rows: list[dict] = field(default_factory=list)
    defer: list[Any] = field(default_factory=list)
    notes: tuple[str, ...] = ()
    consumed: int = 0
    missing: str = ""
    derived: str = ""
    alternatives: tuple[dict, ...] = ()


@dataclass(frozen=True)
class Format:
    """One engine output format. The registry (formats/__init__.py) collects every module's FORMAT
    and derives from them what the streamed scanner searches for; the fast route's grep routing is
    its own (fast/routes.py)."""

    id: str
    engine: str | None
    label: str  # e.g. "vLLM V1 `SpecDecoding metrics` line"
    meaning: str  # bonus token included or not; drafts-weighted or per-request; cumulative or per interval
    literals: tuple[str, ...]  # any of these in a decoded line makes it a candidate (the first one found counts)
    parse: Callable[[Line], Parsed | None]  # None: not this format after all (the next one is tried)
    priority: int = 50  # lower is tried first
    lead: re.Pattern | None = None  # the engine's own text allowed between the wrappers and the literal
    header: re.Pattern | None = None  # the engine's logger header, which must end right before the literal
    checks_prefix: bool = False  # `parse` judges where the record starts itself (JSON records)
    look_back: int = 12  # lines before a block's first line handed to `parse` (as `before`)
    block: bool = False  # the literal's line starts a block: `after`/`before` are filled
    scan_extra: tuple[str, ...] = ()  # literals without "ccept" the streamed scanner must find too
    candidate_in_line: bool = False  # every line of the format holds "ccept" besides its literal
    standing: str = "engine"  # "engine", or "unrecognised" (the generic reader of last resort)
    cumulative: bool = False  # its counters run since the engine started (differenced): no interval is a jump
    rate_from_counts: bool = True  # its Drafted/Accepted are counts the draft acceptance rate may sum
    finish: Callable[[list, Any], None] | None = None  # deferred records -> rows, once a source is read
    supersedes: tuple[str, ...] = ()  # formats describing the same drafts less exactly: their rows of the same
    #                                   source are set aside (reported, not summed) when this one has rows
    variants: tuple[str, ...] = ()  # the fmt ids its rows carry (its id when empty)
    # variants whose rows' drafts are a floor (drafted / k, where a draft can stop before k): their τ is a ceiling
    tau_ceiling: tuple[str, ...] = ()

    @property
    def fmt_ids(self) -> tuple[str, ...]:
        return self.variants or (self.id,)


def row(fmt: str, **kw) -> dict:
    kw["fmt"] = fmt
    return kw


# ---- summary blocks (bench tools, offline scripts): `Key:   value` lines -------------------------

_RULE = re.compile(r"^\s*(?:={5,}|-{5,}|-{3,}[^-]*-{3,})\s*$")
_CONTENT_TOKENS = [t for t in _TOKENS if not t.pattern.startswith(r"\[")]  # `[AL] AVERAGE` is content


def content_of(line: str) -> tuple[str, str]:
    """(wrapper prefix, content) of a block line: the wrappers a paste or a logger put in front are
    taken off (bracketed text stays: it can be the content's own)."""
    pos, end = 0, len(line)
    while pos < end:
        for tok in _CONTENT_TOKENS:
            m = tok.match(line, pos)
            if m and m.end() > pos:
                pos = m.end()
                break
        else:
            break
    return line[:pos], line[pos:]


# Paste damage inside a block: a block copied out of a chat, an issue or a notebook often comes back with
# blank lines between its rows (one or two each). A run of blank lines is crossed when the next line is a
# row of the same block; a row whose key the block already has starts another block, so two blocks
# printed one after the other are never merged.
MAX_BLANK_RUN = 3


def _key_of(m: re.Match) -> tuple:
    return tuple(v for k, v in m.groupdict().items() if k != "v" and v is not None) or (m.group(0),)


def _next_row(lines, i: int, key_rx: re.Pattern) -> re.Match | None:
    """The row after the run of blank lines starting at lines[i] (None: not a row, or the run is too long)."""
    for j in range(i, min(len(lines), i + MAX_BLANK_RUN + 1)):
        if lines[j].strip():
            return key_rx.match(content_of(lines[j])[1])
    return None


def block_fields(line: Line, key_rx: re.Pattern, look_back: bool = True) -> tuple[list, int]:
    """The `key: value` lines of a block around `line`: (matches in file order, lines of `after`
    consumed). Walks back through `before` and on through `after` while lines match `key_rx` (matched
    at the start of a line's content), are rules, or runs of up to MAX_BLANK_RUN blank lines followed by
    another row (paste damage); stops at anything else, at a key the block already has (the next
    block), or after a `=====` rule."""
    first = key_rx.match(content_of(line.text)[1])
    seen = {_key_of(first)} if first else set()
    back: list = []
    if look_back and line.before:
        before = list(reversed(line.before))
        for i, text in enumerate(before):
            m = key_rx.match(content_of(text)[1])
            if m:
                if _key_of(m) in seen:
                    break
                seen.add(_key_of(m))
                back.append(m)
                continue
            if _RULE.match(text) and not text.strip().startswith("="):
                continue
            if not text.strip() and _next_row(before, i, key_rx) is not None:
                continue
            break
    found = list(reversed(back)) + ([first] if first else [])
    consumed = 0
    after = line.after or ()
    for i, text in enumerate(after):
        m = key_rx.match(content_of(text)[1])
        if m:
            if _key_of(m) in seen:
                break
            seen.add(_key_of(m))
            found.append(m)
            consumed = i + 1
            continue
        if _RULE.match(text):
            consumed = i + 1
            if text.strip().startswith("="):
                break
            continue
        if not text.strip():
            nxt = _next_row(after, i, key_rx)
            if nxt is not None and _key_of(nxt) not in seen:
                continue
        break
    return found, consumed
