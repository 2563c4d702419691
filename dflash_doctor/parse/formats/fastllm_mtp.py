"""fastllm speculative-decoding lines (ztxz16/fastllm, read in the repository at 2026-08-06: src/models/qwen3_5.cpp
`logMtpStats` and the batched MTP path, src/models/deepseekv4.cpp for DSpark), printed to stdout every 64
validations (`QWEN35_MTP_LOG_INTERVAL`, `DEEPSEEK_V4_DSPARK_LOG_INTERVAL`):

    [Qwen3.5 MTP] enabled: layers=1, drafts_per_step=3, root_device=cuda:0, tp_devices=1, acceptance=exact, …
    [Qwen3.5 MTP] pos_accept_rate=[81.25%, 60.42%, 43.75%].
    [DeepSeek-V4 DSpark] validations=640, accept_rate=45.12%, avg_accepted=3.16/7, pos_accept_rate=[…].

What the numbers mean. Every validation adds one attempt at each draft position it proposed and one accept
at each position below its accepted prefix, so pos_accept_rate[i] = validations whose first i+1 drafts were
all accepted / validations that drafted position i: vLLM's **unconditional** per-position rate (percent,
%.2f) when every validation drafts k positions (MTP: `drafts_per_step`). The counters are **cumulative since
the process started** and never reset: the last line of a process describes its whole run, earlier lines
are snapshots of it. τ = 1 + Σ rates (**bonus included**); DSpark prints τ − 1 directly as `avg_accepted`
(accepted drafts / validations, **bonus excluded**) with the validations, so its drafts are exact. Pooled
over validations, the figures are **drafts-weighted** (every validation counts once). The MTP line prints
no count: at least 64 validations stand behind each line, so the last line's weight is taken as 64 × the
process's lines (an estimate, a lower bound). The `enabled:` line (not read as metrics) names k and the
acceptance rule: `exact` (greedy: token match) or `typical(…)` — typical acceptance, a lossy, non-standard
verifier.
"""

from __future__ import annotations

import re
from typing import Any

from ._common import BadLine, Format, Impossible, Line, N, Parsed, count, num, rate

LITERAL = "pos_accept_rate=["
LOG_INTERVAL = 64
_LEAD = re.compile(r"\[(?P<name>[^\]\n]{1,80}?) (?P<method>MTP|DSpark|DFlash2?|EAGLE3?)\]\s*(?P<head>[^\[\]]*)$")
_HEAD = re.compile(
    r"validations=(?P<v>\d+),\s*accept_rate=(?P<ar>" + N + r")%,\s*avg_accepted=(?P<avg>" + N + r")/(?P<k>\d+),\s*$"
)
_RATES = re.compile(r"pos_accept_rate=\[(?P<pp>[^\]]*)\]")
METHOD = {
    "MTP": "mtp",
    "DSpark": "dflash",
    "DFlash": "dflash",
    "DFlash2": "dflash",
    "EAGLE": "eagle",
    "EAGLE3": "eagle3",
}


def parse(line: Line) -> Parsed | None:
    lead = _LEAD.search(line.text[: line.pos])
    if lead is None:
        return None
    m = _RATES.match(line.msg)
    if not m:
        raise BadLine("looks like a fastllm `pos_accept_rate=[…]` line but does not parse (cut short?)")
    pp = tuple(rate(x.strip().rstrip("%"), "pos_accept_rate", 100.0) / 100.0 for x in m["pp"].split(",") if x.strip())
    if not pp:
        raise BadLine("fastllm `pos_accept_rate=[]` without rates")
    head = _HEAD.match(lead["head"]) if lead["head"].strip() else None
    if lead["head"].strip() and head is None:
        raise BadLine(f"fastllm statistics head not understood: {lead['head'].strip()[:60]!r}")
    rec: dict[str, Any] = {"series": f"{lead['name']} {lead['method']}", "method": METHOD[lead["method"]], "pp": pp}
    if head is not None:
        v, k = count(head["v"], "validations"), count(head["k"], "draft length")
        avg = num(head["avg"], "avg_accepted")
        if avg > k + 1e-9:
            raise Impossible(f"absurd numbers: {avg} accepted of {k} drafts per validation")
        rec.update(validations=v, avg=avg, k=k)
    return Parsed(defer=[rec])


def finish(items: list, ctx) -> None:
    last: dict = {}
    lines: dict = {}
    for rec, meta in items:
        key = (meta[0], meta[3], rec["series"])
        last[key] = (rec, meta)
        lines[key] = lines.get(key, 0) + 1
    methods = set()
    for key, (rec, meta) in last.items():
        methods.add(rec["method"])
        pp = rec["pp"]
        if "validations" in rec:
            drafts, mean, k, estimated = float(rec["validations"]), 1.0 + rec["avg"], rec["k"], False
        else:
            drafts, mean, k, estimated = float(LOG_INTERVAL * lines[key]), 1.0 + sum(pp), len(pp), True
        if drafts <= 0:
            continue
        ctx.add_row(
            {
                "fmt": "fastllm",
                "drafts": drafts,
                "drafted": int(round(drafts * k)) if k else None,
                "accepted": (mean - 1.0) * drafts,
                "k": k,
                "per_position": pp,
                "printed_mean": mean,
                "accepted_throughput": None,
                "drafted_throughput": None,
                "emitted": None,
                "estimated": estimated,
            },
            meta,
        )
        if lines[key] > 1:
            ctx.note(
                f"fastllm {rec['series']}: {lines[key]} cumulative lines; the last one (the whole run) is used"
                + ("" if not estimated else f", weighted as at least {LOG_INTERVAL} validations per line")
            )
    if len(methods) == 1:
        ctx.startup_hint(method=methods.pop(), engine="fastllm")


FORMAT = Format(
    id="fastllm",
    engine="fastllm",
    label="fastllm `[<model> MTP] pos_accept_rate=[…]` line",
    meaning="cumulative since the process started (the last line of a process is used); unconditional per-position "
    "rates in percent; τ = 1 + Σ rates (bonus included), DSpark's avg_accepted excludes it; drafts: DSpark's "
    "validations, else at least 64 per line (estimated)",
    literals=(LITERAL,),
    parse=parse,
    priority=38,
    lead=_LEAD,
    finish=finish,
)
