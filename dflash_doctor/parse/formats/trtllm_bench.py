"""TensorRT-LLM `trtllm-bench` decoding statistics (tensorrt_llm/bench/dataclasses/reporting.py,
`ReportUtility.report_statistics`), printed once at the end of a benchmark:

    = DECODING STATISTICS (Eagle3)
    -- Number of Draft Tokens Details ---            [DT]  per request: max_draft_len × iterations
    -- Number of Accepted Draft Tokens Details ---   [ADT] per request: output tokens - iterations
    -- Draft Acceptance Rate Details ---             [DAR] per request: ADT / DT
    -- Acceptance Length Details ---                 [AL]  per request: output tokens / iterations
    [AL] MINIMUM: 1.04 … [AL] AVERAGE: 1.86 … [AL] P99    : 3.20          (`[KEY] {NAME:<7}: {v:.2f}`)

What the numbers mean: **per-request distributions** (minimum, maximum, average, percentiles over
requests); [AL] includes the bonus token (tokens per iteration, the context iteration counted).
`[AL] AVERAGE` weights every request equally: a **per-request average, not a drafts-weighted
mean** — it is kept as such (flagged, weaker standing) and never mixed into one. When the [DT] and
[ADT] averages are printed too, the drafts-weighted τ follows from them without the request count:
τ = 1 + k · ADT_avg / DT_avg (n cancels), with k = max_draft_len from the caller, or derived: every
request has AL = 1 + k · DAR, so k = (AL_avg - 1) / DAR_avg (rounded) — then that is used.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ._common import BadLine, Format, Impossible, Line, N, Parsed, content_of, count, num, row

_STAT = re.compile(
    r"^\[(?P<key>DT|ADT|DAR|AL)\]\s+(?P<name>MINIMUM|MAXIMUM|AVERAGE|P50|P90|P95|P99)\s*:\s*"
    r"(?P<v>" + N + r")\s*$"
)
_HEAD = re.compile(r"^(?:-- .*Details.*|=+|= DECODING STATISTICS.*|DECODING STATISTICS.*|\s*)$")
_MODE = re.compile(r"DECODING STATISTICS \((?P<mode>[^)]*)\)")
_NREQ = re.compile(r"Number of requests:\s*(?P<n>\d+)\s*$")


def _part(text: str) -> str:
    """'stat', 'head' (a section header, a rule, the block's title, a blank) or '' (not the block's)."""
    c = content_of(text)[1].strip()
    if _STAT.match(c):
        return "stat"
    if _HEAD.match(text.strip()) or _HEAD.match(c) or _MODE.search(c):
        return "head"
    return ""


def parse(line: Line) -> Parsed | None:
    stats: dict = {}
    mode = None
    before = line.before or []
    start = len(before)
    while start > 0 and _part(before[start - 1]):
        start -= 1
    body = before[start:] + [line.text]
    consumed = 0
    seen_al = False
    for i, text in enumerate(line.after or ()):
        kind = _part(text)
        if not kind:
            break
        if kind == "head" and text.strip().startswith("=") and seen_al:
            consumed = i + 1
            break
        body.append(text)
        consumed = i + 1
        seen_al = seen_al or "[AL]" in text
    for text in body:
        c = content_of(text)[1].strip()
        m = _MODE.search(c)
        if m:
            mode = mode or m["mode"]
        s = _STAT.match(c)
        if s:
            stats.setdefault(s["key"], {}).setdefault(s["name"].lower(), s["v"])
    if "AL" not in stats or "average" not in stats["AL"]:
        if stats:
            raise BadLine("a trtllm-bench decoding block without its [AL] AVERAGE line")
        return None
    n_req = None
    for text in reversed(before[:start]):
        m = _NREQ.search(text)
        if m:
            n_req = count(m["n"], "the number of requests")
            break
    al = {k: num(v, f"[AL] {k}") for k, v in stats["AL"].items()}
    if any(v < 1.0 - 1e-9 for v in al.values()):
        raise Impossible("absurd numbers: an acceptance length below 1")
    if not al.get("minimum", 1.0) - 0.01 <= al["average"] <= al.get("maximum", al["average"]) + 0.01:
        raise Impossible("absurd numbers: [AL] AVERAGE outside [MINIMUM, MAXIMUM]")
    alts = [
        {"figure": f"[AL] {k.upper()}", "value": v, "meaning": "per-request acceptance length distribution"}
        for k, v in al.items()
        if k != "average"
    ]
    rec: dict[str, Any] = {
        "al": al["average"],
        "dt": _avg(stats, "DT"),
        "adt": _avg(stats, "ADT"),
        "dar": _avg(stats, "DAR"),
        "dt_min": _v(stats, "DT", "minimum"),
        "dt_max": _v(stats, "DT", "maximum"),
        "n": n_req,
        "mode": mode,
    }
    if rec["dar"] is not None and rec["dar"] > 1.0 + 1e-9:
        raise Impossible(f"absurd numbers: [DAR] AVERAGE {rec['dar']} > 1")
    notes = (
        f"trtllm-bench [AL] AVERAGE {al['average']:.2f} is a per-request average (every request weighted "
        "equally), not a drafts-weighted mean" + (f"; decoding mode {mode}" if mode else ""),
    )
    return Parsed(defer=[rec], consumed=consumed, notes=notes, alternatives=tuple(alts))


def _v(stats: dict, key: str, name: str) -> float | None:
    v = stats.get(key, {}).get(name)
    return None if v is None else num(v, f"[{key}] {name.upper()}")


def _avg(stats: dict, key: str) -> float | None:
    return _v(stats, key, "average")


def _k_candidates(al: float, dar: float, half: float = 0.005) -> list[int]:
    """The k that AL = 1 + k·DAR allows when both were rounded to two decimals (none when too many do)."""
    lo = (al - 1.0 - half) / (dar + half)
    hi = (al - 1.0 + half) / max(dar - half, 1e-9)
    if hi - lo > 8:
        return []
    return [k for k in range(max(1, math.ceil(lo - 1e-9)), math.floor(hi + 1e-9) + 1)]


def finish(items: list, ctx) -> None:
    for rec, meta in items:
        k, how = None, ""
        if rec["dt"] and rec["adt"] is not None:
            # k from the block's own numbers (every request has AL = 1 + k·DAR), both printed to two decimals: the
            # k values within their rounding; one of them is k, unless the caller's k is among them (it settles it)
            hint = ctx.k_hint or ctx.startup_k
            fits = _k_candidates(rec["al"], rec["dar"]) if rec["dar"] else []
            if len(fits) == 1 and fits[0] != hint:
                k = fits[0]
                how = f"k = {k} = ([AL] AVERAGE - 1) / [DAR] AVERAGE, the only k their rounding allows"
            if k is None and hint:
                k = ctx.k_hint or ctx.startup_k
                how = f"k = {k} from " + (ctx.k_hint_source or "the caller" if ctx.k_hint else "the startup lines")
        if k:
            tau = 1.0 + k * rec["adt"] / rec["dt"]
            drafts, est = (rec["n"] * rec["dt"] / k, True) if rec["n"] else (1.0, True)
            ctx.add_row(
                row(
                    "trtllm-bench",
                    drafts=drafts,
                    drafted=round(rec["n"] * rec["dt"]) if rec["n"] else None,
                    accepted=(tau - 1.0) * drafts,
                    k=k,
                    per_position=(),
                    printed_mean=tau,
                    accepted_throughput=None,
                    drafted_throughput=None,
                    emitted=None,
                    estimated=est,
                ),
                meta,
                needs_k=True,
            )
            ctx.note(
                f"trtllm-bench: drafts-weighted τ {tau:.3f} = 1 + k·[ADT]/[DT] averages ({how}); the per-request "
                f"average [AL] {rec['al']:.2f} is kept aside"
            )
            ctx.alternative(
                {
                    "figure": "[AL] AVERAGE (per request)",
                    "value": rec["al"],
                    "meaning": "average over requests, each weighted equally; not used",
                }
            )
        else:
            drafts = float(rec["n"]) if rec["n"] else 1.0
            ctx.add_row(
                row(
                    "trtllm-bench",
                    drafts=drafts,
                    drafted=None,
                    accepted=(rec["al"] - 1.0) * drafts,
                    k=None,
                    per_position=(),
                    printed_mean=rec["al"],
                    accepted_throughput=None,
                    drafted_throughput=None,
                    emitted=None,
                    estimated=True,
                    per_request=True,
                ),
                meta,
            )


FORMAT = Format(
    id="trtllm-bench",
    engine="tensorrt-llm",
    label="TensorRT-LLM `trtllm-bench` decoding statistics ([AL]/[DT]/[ADT]/[DAR] per-request percentiles)",
    meaning="whole run, per-request distributions; [AL] includes the bonus token; [AL] AVERAGE is a per-request "
    "average (not drafts-weighted), used only when [DT]/[ADT] and k cannot give the drafts-weighted τ",
    # (the block's first line holding "ccept" anchors it; the header and the [DT] section are read back from it)
    literals=(
        "Accepted Draft Tokens Details",
        "Draft Acceptance Rate Details",
        "Acceptance Length Details",
        "[AL] AVERAGE",
    ),
    parse=parse,
    priority=45,
    block=True,
    look_back=80,
    scan_extra=("[AL] AVERAGE",),  # [AL] lines pasted without their header
    finish=finish,
)
