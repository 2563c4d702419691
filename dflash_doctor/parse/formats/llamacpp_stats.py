"""llama.cpp speculative-decoding statistics line (common/speculative.cpp,
`common_speculative_print_stats`, called by the server after each request; `SPC_TRC`, so at trace
verbosity `-lv 4`; prefixed `spec common_specu: ` by recent builds):

    statistics     draft-eagle3: #calls(b,g,a) =    1     87     87, #gen drafts =     87, #acc drafts =    70,
      #gen tokens =    259, #acc tokens =   167, #mean acc len = 2.92, #acc rate/pos = (0.805, 0.632, 0.483),
      dur(b,g,a) = 0.005, 325.555, 0.114 ms

One line per speculative implementation: draft-simple (a draft model), draft-eagle3, draft-mtp,
draft-mtp-adaptive, draft-dflash, draft-dspark, ngram-simple, ngram-map-k, ngram-map-k4v, ngram-mod,
ngram-cache (older builds: `draft`, `eagle3`, …; any name is read).

What the numbers mean: **cumulative** since the server started, per implementation (so lines are
differenced per process and implementation, in file order). `#calls` a = accept calls = verification
steps, the drafts; `#gen tokens` = draft tokens proposed, `#acc tokens` = accepted draft tokens
(**bonus excluded**); `#mean acc len` = 1 + #acc tokens / a (**bonus included**); `#acc rate/pos`
= tokens accepted at each position / a (%.3f, unconditional), as long as the longest accepted run.
**Drafts-weighted**, exact counts: where both are logged these are used rather than the per-request
`print_timing` lines, which describe the same drafts. The mean and the list are absent until the
first accept call.
"""

from __future__ import annotations

import re

from ._common import BadLine, Format, Impossible, Line, N, Parsed, count, num, rate, row

LITERAL = "#calls(b,g,a)"
_LEAD = re.compile(r"(?:spec\s+\S{1,16}:\s+)?statistics\s+(?P<impl>[\w.-]+):\s*$")
_LINE = re.compile(
    r"#calls\(b,g,a\) =\s*(?P<b>\d+)\s+(?P<g>\d+)\s+(?P<a>\d+), "
    r"#gen drafts =\s*(?P<gd>\d+), #acc drafts =\s*(?P<ad>\d+), "
    r"#gen tokens =\s*(?P<gt>\d+), #acc tokens =\s*(?P<at>\d+)"
    r"(?:, #mean acc len =\s*(?P<mean>" + N + r"), #acc rate/pos = \((?P<pp>[^)]*)\))?"
)
METHOD = {
    "draft-eagle3": "eagle3",
    "eagle3": "eagle3",
    "draft-mtp": "mtp",
    "draft-mtp-adaptive": "mtp",
    "draft-dflash": "dflash",
    "draft-dspark": "dflash",
    "draft-simple": "draft_model",
    "draft": "draft_model",
}


def parse(line: Line) -> Parsed | None:
    lead = _LEAD.search(line.text[: line.pos])
    impl = lead["impl"] if lead else "?"
    m = _LINE.match(line.msg)
    if not m:
        raise BadLine("looks like a llama.cpp `statistics` line but does not parse (cut short?)")
    a = count(m["a"], "accept calls")
    gt = count(m["gt"], "#gen tokens")
    at = count(m["at"], "#acc tokens")
    count(m["gd"], "#gen drafts")
    count(m["ad"], "#acc drafts")
    if at > gt:
        raise Impossible(f"absurd numbers: #acc tokens {at} > #gen tokens {gt}")
    mean = num(m["mean"], "#mean acc len") if m["mean"] is not None else None
    pp = tuple(rate(x.strip(), "#acc rate/pos") for x in (m["pp"] or "").split(",") if x.strip())
    if mean is not None and a and abs(round(1.0 + at / a, 2) - mean) > 0.011:
        raise Impossible(f"absurd numbers: #mean acc len {mean} is not 1 + {at}/{a}")
    counts = tuple(round(r * a) for r in pp)
    return Parsed(defer=[{"impl": impl, "a": a, "gt": gt, "at": at, "pp": counts}])


def finish(items: list, ctx) -> None:
    state: dict = {}
    impls = set()
    for rec, meta in items:
        impls.add(rec["impl"])
        key = (meta[0], meta[3], rec["impl"])
        cur = rec
        prev = state.get(key)
        state[key] = cur
        if prev is not None and cur["a"] >= prev["a"] and cur["at"] >= prev["at"] and cur["gt"] >= prev["gt"]:
            a, at, gt = cur["a"] - prev["a"], cur["at"] - prev["at"], cur["gt"] - prev["gt"]
            width = max(len(cur["pp"]), len(prev["pp"]))
            pc = [
                (cur["pp"][i] if i < len(cur["pp"]) else 0) - (prev["pp"][i] if i < len(prev["pp"]) else 0)
                for i in range(width)
            ]
        else:
            if prev is not None:
                ctx.note("llama.cpp statistics went down between two lines (a restart?): counting afresh from there")
            a, at, gt, pc = cur["a"], cur["at"], cur["gt"], list(cur["pp"])
        if a == 0:
            continue
        pp = tuple(min(1.0, max(0.0, c / a)) for c in pc)
        ctx.add_row(
            row(
                "llamacpp-statistics",
                drafts=float(a),
                drafted=gt,
                accepted=at,
                k=len(pp) or None,
                per_position=pp,
                printed_mean=1.0 + at / a,
                accepted_throughput=None,
                drafted_throughput=None,
                emitted=None,
                estimated=False,
            ),
            meta,
        )
    if impls:
        ctx.note("llama.cpp speculative implementation(s): " + ", ".join(sorted(impls)))
        methods = {METHOD.get(i) or ("ngram" if i.startswith("ngram") else None) for i in impls} - {None}
        if len(methods) == 1:
            ctx.startup_hint(method=methods.pop(), engine="llama.cpp")


FORMAT = Format(
    id="llamacpp-statistics",
    engine="llama.cpp",
    label="llama.cpp `statistics draft-*` line",
    meaning="cumulative per implementation (differenced); drafts = accept calls; #acc tokens exclude the bonus, the "
    "mean includes it; drafts-weighted, exact counts",
    literals=(LITERAL,),
    parse=parse,
    priority=34,
    lead=_LEAD,
    scan_extra=(LITERAL,),
    cumulative=True,
    finish=finish,
    supersedes=("llamacpp-print-timing",),
)
