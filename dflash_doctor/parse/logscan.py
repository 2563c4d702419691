"""Streamed log scanning: a literal pre-filter, then the format parsers, then aggregation.

This first version understands the vLLM >= 0.10.2 `SpecDecoding metrics` line and the vLLM
startup lines; other formats plug into `LINE_PARSERS`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ..redact import redact_any, redact_text
from ..textsafe import strip_ansi
from .records import MIN_DRAFTS, AcceptanceSummary, Malformed, SpecInterval, StartupFacts

# No engine drafts 10^15 tokens in one stats interval; a bigger count is corruption (and would overflow floats).
MAX_TOKENS_PER_INTERVAL = 10 ** 15
_NUM = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_TS = re.compile(r"(\d{2}-\d{2} \d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})")

VLLM_V1_0102 = re.compile(
    r"SpecDecoding metrics:\s*Mean acceptance length:\s*(?P<mean>" + _NUM + r")\s*,\s*"
    r"Accepted throughput:\s*(?P<athr>" + _NUM + r")\s*tokens/s\s*,\s*"
    r"Drafted throughput:\s*(?P<dthr>" + _NUM + r")\s*tokens/s\s*,\s*"
    r"Accepted:\s*(?P<acc>\d+)\s*tokens\s*,\s*Drafted:\s*(?P<dft>\d+)\s*tokens\s*,\s*"
    r"Per-position acceptance rate:\s*(?P<pp>(?:" + _NUM + r")(?:\s*,\s*" + _NUM + r")*)\s*,\s*"
    r"Avg Draft acceptance rate:\s*(?P<rate>" + _NUM + r")\s*%"
)


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in re.split(r"\s*,\s*", text.strip()) if x)


def parse_vllm_v1_0102(line: str, source: str, line_no: int) -> SpecInterval | str | None:
    m = VLLM_V1_0102.search(line)
    if not m:
        return None
    mean = float(m["mean"])
    accepted, drafted = int(m["acc"]), int(m["dft"])
    pp = _floats(m["pp"])
    k = len(pp) or None
    if mean < 1.0 or any(r < 0 or r > 1 for r in pp):
        return "values out of range (mean < 1 or a rate outside 0..1)"
    if accepted > drafted or drafted > MAX_TOKENS_PER_INTERVAL:
        return "values out of range (more tokens accepted than drafted, or an impossible count)"
    # drafts is not printed: Drafted/k when every draft carries k tokens, else Accepted/(mean-1).
    if k and drafted % k == 0:
        drafts = drafted / k
    elif mean > 1.0:
        drafts = accepted / (mean - 1.0)
    else:
        drafts = drafted / k if k else 0.0
    ts = _TS.search(line[: m.start()])
    return SpecInterval(
        fmt="vllm-v1-0.10.2", source=source, line_no=line_no, timestamp=ts.group(1) if ts else None,
        engine=None, drafts=drafts, drafted=drafted, accepted=accepted, k=k, per_position=pp,
        printed_mean=mean, accepted_throughput=float(m["athr"]), drafted_throughput=float(m["dthr"]),
    )


# (literal pre-filter, parser). A parser returns an interval, a reason string (malformed) or None.
LINE_PARSERS: list[tuple[str, Callable[[str, str, int], SpecInterval | str | None]]] = [
    ("SpecDecoding metrics", parse_vllm_v1_0102),
]

_VERSION = re.compile(r"vLLM API server version\s+(?P<v>[\w.+-]+)|vLLM server version\s+(?P<v2>[\w.+-]+)"
                      r"|\bversion\s+(?P<v3>\d+\.\d+\.\d+[\w.+-]*)\s*$")
_NON_DEFAULT = re.compile(r"non-default args:\s*(\{.*\})\s*$")
_RESOLVED = re.compile(r"Resolved architecture:\s*(\w+)")
STARTUP_LITERALS = ("version", "non-default args", "Resolved architecture", "SpeculativeConfig")


@dataclass
class LogScan:
    intervals: list[SpecInterval] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    startup: StartupFacts = field(default_factory=StartupFacts)
    lines: int = 0
    candidate_lines: int = 0
    sources: list[str] = field(default_factory=list)


def scan_lines(lines: Iterable[str], source: str, into: LogScan | None = None) -> LogScan:
    scan = into or LogScan()
    scan.sources.append(source)
    startup = _StartupBuilder(scan.startup)
    for no, raw in enumerate(lines, 1):
        scan.lines += 1
        if "SpecDecoding" not in raw and not any(lit in raw for lit in STARTUP_LITERALS):
            continue
        line = strip_ansi(raw.rstrip("\r\n"))
        handled = False
        for literal, parser in LINE_PARSERS:
            if literal in line:
                scan.candidate_lines += 1
                try:
                    res = parser(line, source, no)
                except Exception as exc:  # one bad line (e.g. a 5000-digit count) never ends the scan
                    res = f"unparseable ({type(exc).__name__}: {str(exc)[:80]})"
                if isinstance(res, SpecInterval):
                    scan.intervals.append(res)
                elif isinstance(res, str):
                    scan.malformed.append(Malformed(source, no, res, redact_text(line[:300])))
                else:
                    scan.malformed.append(Malformed(source, no, "looks like a metrics line but matches no known format",
                                                    redact_text(line[:300])))
                handled = True
                break
        if not handled:
            startup.feed(line)
    scan.startup = startup.build()
    return scan


class _StartupBuilder:
    def __init__(self, prev: StartupFacts):
        self.f = dict(prev.__dict__)
        self.f["args"] = dict(prev.args)
        self.f["lines"] = list(prev.lines)

    def feed(self, line: str) -> None:
        m = _VERSION.search(line)
        if m and ("vLLM" in line or m.group("v3")):
            self.f["engine"] = "vllm"
            self.f["version"] = m.group("v") or m.group("v2") or m.group("v3")
            self.f["lines"].append(redact_text(line))
        m = _NON_DEFAULT.search(line)
        if m:
            try:
                args = ast.literal_eval(m.group(1))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # {[1]: 2} is TypeError
                args = None
            if isinstance(args, dict):
                args = redact_any(args)
                self.f["args"].update(args)
                self.f["engine"] = self.f["engine"] or "vllm"
                self.f["model"] = args.get("model", self.f["model"])
                spec = args.get("speculative_config")
                if isinstance(spec, dict):
                    self.f["method"] = spec.get("method", self.f["method"])
                    self.f["drafter"] = spec.get("model", self.f["drafter"])
                    k = spec.get("num_speculative_tokens")
                    if isinstance(k, int):
                        self.f["num_speculative_tokens"] = k
                self.f["lines"].append(redact_text(line))
        m = _RESOLVED.search(line)
        if m:
            self.f["architecture"] = m.group(1)
            self.f["lines"].append(redact_text(line))

    def build(self) -> StartupFacts:
        self.f["lines"] = tuple(self.f["lines"][-20:])
        return StartupFacts(**self.f)


def aggregate(intervals: list[SpecInterval], min_drafts: int = MIN_DRAFTS) -> AcceptanceSummary | None:
    """Sum counts over intervals (drafts-weighted); never average the printed means."""
    usable = [iv for iv in intervals if iv.drafts > 0]
    if not usable:
        return None
    drafts = sum(iv.drafts for iv in usable)
    accepted = sum(iv.accepted for iv in usable)
    drafted = sum(iv.drafted for iv in usable)
    ks = sorted({iv.k for iv in usable if iv.k})
    k = ks[-1] if ks else None
    notes = []
    if len(ks) > 1:
        notes.append(f"k changed between intervals ({', '.join(map(str, ks))}); per-position counts are summed "
                     "over the intervals that have each position")
    per_pos = []
    if k:
        for i in range(k):
            num = sum(iv.per_position[i] * iv.drafts for iv in usable if len(iv.per_position) > i)
            den = sum(iv.drafts for iv in usable if len(iv.per_position) > i)
            per_pos.append(num / den if den else 0.0)
    tau = 1.0 + accepted / drafts

    def third(chunk: list[SpecInterval]) -> float | None:
        d = sum(iv.drafts for iv in chunk)
        return 1.0 + sum(iv.accepted for iv in chunk) / d if d else None

    first = last = None
    if len(usable) >= 3:
        n = len(usable) // 3
        first, last = third(usable[:n]), third(usable[-n:])
    if drafts < min_drafts:
        notes.append(f"only {drafts:.0f} drafts (< {min_drafts}): per-position zeros and small differences are noise")
    return AcceptanceSummary(
        mean_acceptance_length=tau, per_position=tuple(per_pos), drafts=drafts, drafted=drafted, accepted=accepted,
        k=k, draft_acceptance_rate=accepted / drafted if drafted else None, intervals=len(usable),
        formats=tuple(sorted({iv.fmt for iv in usable})), engines=tuple(sorted({iv.engine for iv in usable if iv.engine})),
        tau_first_third=first, tau_last_third=last, min_drafts=min_drafts, notes=tuple(notes),
    )


def iter_file_lines(path: str) -> Iterator[str]:
    """Lines of a plain or gzip file (or '-' for stdin), decoded leniently."""
    import gzip
    import sys

    if path == "-":
        yield from (l if isinstance(l, str) else l.decode("utf-8", "replace") for l in sys.stdin)
        return
    with open(path, "rb") as fh:
        magic = fh.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as fh:
        for raw in fh:
            yield raw.decode("utf-8", "replace")
