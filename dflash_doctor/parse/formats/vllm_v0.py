"""vLLM V0 `Speculative metrics:` line (vllm/engine/metrics.py, through 0.9.2).

What the numbers mean: **cumulative** since the engine started (so lines are differenced, per
engine, in file order; a drop means a restart). `Draft acceptance rate` is a fraction; `Number of
accepted tokens` also counts draft tokens that matched after an earlier rejection, so τ is not
1 + accepted/drafts here: τ = emitted / drafts (**bonus included**), drafts = draft tokens / k, k =
`Number of speculative tokens`. `System efficiency` = emitted / (drafts·(k+1)); exactly 1/(k+1)
means nothing was ever accepted. Drafts-weighted. Some versions printed `Number of draft tokens
tokens:` (doubled word).

Salvage: a line cut after its draft tokens keeps its counts; the emitted tokens then come from the
system efficiency (printed to 3 decimals: an estimate). A line cut before that is reported.
"""

from __future__ import annotations

import re

from ._common import VLLM_HEADER, BadLine, Format, I, Impossible, Line, N, Parsed, count, rate, row

LITERAL = "Speculative metrics"
_V0 = re.compile(
    r"Speculative metrics:\s*(?:Draft acceptance rate:\s*(?P<rate>" + N + r")\s*,\s*"
    r"(?:System efficiency:\s*(?P<eff>" + N + r")\s*,\s*"
    r"(?:Number of speculative tokens:\s*(?P<k>" + I + r")\s*,\s*"
    r"(?:Number of accepted tokens:\s*(?P<acc>" + I + r")\s*,\s*"
    r"(?:Number of draft tokens(?: tokens)?:\s*(?P<dft>" + I + r")\s*,\s*"
    r"(?:Number of emitted tokens(?: tokens)?:\s*(?P<emt>" + I + r")(?P<end>\.?))?)?)?)?)?)?"
)


def parse(line: Line) -> Parsed | None:
    msg = line.msg
    m = _V0.match(msg)
    if not m or m["rate"] is None:
        raise BadLine("a vLLM V0 `Speculative metrics` line cut before its numbers")
    if m["dft"] is None:
        raise BadLine("a vLLM V0 `Speculative metrics` line cut before its draft tokens: nothing to weigh it by")
    k = count(m["k"], "the number of speculative tokens")
    acc = count(m["acc"], "the accepted tokens")
    dft = count(m["dft"], "the draft tokens")
    rate(m["rate"], "the draft acceptance rate")
    eff = rate(m["eff"], "the system efficiency")
    if k <= 0:
        raise Impossible("absurd numbers: 0 speculative tokens")
    if acc > dft:
        raise Impossible(f"absurd numbers: accepted {acc} > draft tokens {dft}")
    rec = {"k": k, "accepted": acc, "drafted": dft, "eff": eff, "emitted": None, "missing": ""}
    if m["emt"] is not None and (m["end"] or msg[m.end() :].strip() or not msg.rstrip().endswith(m["emt"])):
        rec["emitted"] = count(m["emt"], "the emitted tokens")
    else:
        # cut: the emitted tokens are missing or (no final '.') may be cut mid-number
        rec["missing"] = "the emitted tokens (line cut after the draft tokens)"
    return Parsed(defer=[rec])


def finish(items: list, ctx) -> None:
    """Counters since start -> per-interval differences, per engine and source, in file order."""
    state: dict = {}
    for rec, meta in items:
        source, no, ts, engine, off = meta
        k = rec["k"]
        emitted = rec["emitted"]
        estimated = emitted is None
        if emitted is None:
            emitted = rec["eff"] * (rec["drafted"] / k) * (k + 1)
        key = (source, engine)
        cur = (rec["accepted"], rec["drafted"], emitted)
        prev = state.get(key)
        state[key] = cur
        if prev is not None and all(c >= p for c, p in zip(cur, prev, strict=False)):
            d_acc, d_dft, d_emt = (c - p for c, p in zip(cur, prev, strict=False))
        else:
            if prev is not None:
                ctx.note("vLLM V0 counters went down between two lines (a restart?): counting afresh from there")
            d_acc, d_dft, d_emt = cur
        if d_dft == 0:
            continue  # idle interval: nothing drafted since the last line
        drafts = d_dft / k
        if not estimated and (d_emt < drafts or d_emt > drafts * (k + 1) + 1e-6):
            ctx.bad(meta, f"absurd numbers: emitted {d_emt} outside [drafts, drafts·(k+1)]", rejected=True)
            continue
        d_emt = min(max(d_emt, drafts), drafts * (k + 1))
        ctx.add_row(
            row(
                "vllm-v0",
                drafts=drafts,
                drafted=d_dft,
                accepted=d_acc,
                k=k,
                per_position=(),
                printed_mean=d_emt / drafts,
                accepted_throughput=None,
                drafted_throughput=None,
                emitted=float(d_emt),
                estimated=estimated or d_dft % k != 0,
            ),
            meta,
        )
        if rec["missing"]:
            ctx.salvage(meta, "vllm-v0", rec["missing"], "emitted = system efficiency × drafts × (k+1) (3 decimals)")


FORMAT = Format(
    id="vllm-v0",
    engine="vllm",
    label="vLLM V0 `Speculative metrics` line",
    meaning="cumulative since start (differenced per engine); τ = emitted / drafts, bonus included; drafts-weighted",
    literals=(LITERAL,),
    parse=parse,
    header=VLLM_HEADER,
    priority=20,
    scan_extra=(LITERAL,),
    cumulative=True,
    finish=finish,
)
