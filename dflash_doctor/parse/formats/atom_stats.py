"""AMD ROCm ATOM scheduler MTP statistics (atom/model_engine/scheduler.py, `SpecStats._log`, read in the
ROCm/ATOM repository; the same lines from `engine_stats.py` in later snapshots), logged through the `atom`
logger (`[atom HH:MM:SS] …`) every 1000 decode steps, two lines at a time:

    [MTP Stats Interval] Average toks/fwd: 2.85, Accepted/Total Draft tokens: 2775/4500, Acceptance rate:
      61.67%, Accepted tokens distribution: {0: '16.13%', 1: '15.40%', 2: '16.00%', 3: '52.47%'}
    [MTP Stats         ] Average toks/fwd: 2.79, Accepted/Total Draft tokens: 16709/26997, …

What the numbers mean. Every decode step of every sequence adds k (`mtp_k`, num_speculative_tokens) draft
tokens and records how many drafts it accepted (0…k) in the distribution, so: drafts (verify steps) = Total
Draft tokens / k, exactly, with k the distribution's largest key; `Accepted` = accepted draft tokens (**bonus
excluded**); `Average toks/fwd` = 1 + accepted / steps (**bonus included**: vLLM's τ); the distribution is
the share of steps that accepted exactly j drafts, so the unconditional rate at position i (vLLM's per-position
rate) is the share of steps that accepted at least i. `[MTP Stats Interval]` is **per interval** (reset after
each pair of lines); `[MTP Stats         ]` (padded) is **cumulative** since the server started. The interval
lines are used; the cumulative ones are differenced (per process) only where no interval line came. Both are
**drafts-weighted**, with exact counts. ATOM's forced-acceptance benchmark knob (`--spec-decode-acceptance-length`,
ROCm/ATOM#1948) resolves to vLLM's minimum-variance schedule: a distribution on two adjacent values only.

Older ATOM (before ROCm/ATOM#228, 2026-02) printed `[MTP Stats] Total draft tokens: N, Accepted: A, Acceptance
rate: P%` (cumulative, no step count): not read here.
"""

from __future__ import annotations

import re

from ... import pyast
from ._common import BadLine, Format, Impossible, Line, N, Parsed, count, num, row

LITERAL = "Accepted/Total Draft tokens:"
_LEAD = re.compile(r"\[MTP Stats(?P<kind>[^\]]*)\]\s*Average toks/fwd:\s*(?P<mean>" + N + r"),\s*$")
_LINE = re.compile(
    r"Accepted/Total Draft tokens:\s*(?P<acc>\d+)\s*/\s*(?P<tot>\d+)\s*,\s*Acceptance rate:\s*(?P<rate>"
    + N
    + r")%\s*(?:,\s*Accepted tokens distribution:\s*(?P<dist>\{[^}]*\}))?"
)


def _distribution(text: str | None) -> dict[int, float]:
    if not text:
        return {}
    try:
        raw = pyast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise BadLine("ATOM `Accepted tokens distribution` is not a dict") from None
    if not isinstance(raw, dict) or not all(isinstance(k, int) and k >= 0 for k in raw):
        raise BadLine("ATOM `Accepted tokens distribution` keys are not draft counts")
    out = {}
    for k, v in raw.items():
        share = num(str(v).rstrip("%").strip(), f"distribution share of {k}") / 100.0
        if share > 1.0 + 1e-6:
            raise Impossible(f"absurd numbers: {share:.0%} of steps accepted {k} drafts")
        out[k] = share
    return out


def parse(line: Line) -> Parsed | None:
    lead = _LEAD.search(line.text[: line.pos])
    if lead is None:
        return None  # the words without ATOM's lead-in are someone else's
    m = _LINE.match(line.msg)
    if not m:
        raise BadLine("looks like an ATOM `[MTP Stats …]` line but does not parse (cut short?)")
    acc, tot = count(m["acc"], "accepted draft tokens"), count(m["tot"], "total draft tokens")
    if acc > tot:
        raise Impossible(f"absurd numbers: {acc} accepted of {tot} draft tokens")
    mean = num(lead["mean"], "Average toks/fwd")
    dist = _distribution(m["dist"])
    k = max(dist) if dist else None
    kind = "interval" if "interval" in lead["kind"].lower() else "total"
    return Parsed(defer=[{"kind": kind, "acc": acc, "tot": tot, "mean": mean, "k": k, "dist": dist}])


def _pp(dist: dict[int, float], k: int) -> tuple[float, ...]:
    """Share of steps that accepted at least i drafts, i = 1..k (vLLM's unconditional per-position rate)."""
    return tuple(min(1.0, sum(v for j, v in dist.items() if j >= i)) for i in range(1, k + 1))


def _add(ctx, meta, acc: int, tot: int, k: int | None, pp: tuple[float, ...], mean: float | None) -> None:
    k = k or ctx.startup_k or ctx.k_hint
    if not k or tot <= 0:
        ctx.salvage(meta, "atom-stats", "k (num_speculative_tokens)", "τ from the printed Average toks/fwd only")
        drafts, estimated = 1.0, True
        acc_f = (mean - 1.0) if mean is not None else 0.0
    else:
        drafts, estimated, acc_f = tot / k, False, float(acc)
    ctx.add_row(
        row(
            "atom-stats",
            drafts=drafts,
            drafted=tot,
            accepted=acc_f,
            k=k,
            per_position=pp,
            printed_mean=1.0 + acc_f / drafts if drafts else mean,
            accepted_throughput=None,
            drafted_throughput=None,
            emitted=None,
            estimated=estimated,
        ),
        meta,
    )


def finish(items: list, ctx) -> None:
    ctx.startup_hint(engine="atom")  # (not the method: ATOM prints these lines for MTP and EAGLE-3 alike)
    intervals = [(rec, meta) for rec, meta in items if rec["kind"] == "interval"]
    if intervals:
        for rec, meta in intervals:
            k = rec["k"]
            if k and rec["tot"] % k:
                ctx.bad(meta, f"{rec['tot']} draft tokens is not a multiple of k = {k}")
                continue
            if rec["tot"] and k and abs(round(1.0 + rec["acc"] / (rec["tot"] / k), 2) - rec["mean"]) > 0.011:
                ctx.bad(meta, f"Average toks/fwd {rec['mean']} is not 1 + {rec['acc']} / ({rec['tot']} / {k})")
                continue
            _add(ctx, meta, rec["acc"], rec["tot"], k, _pp(rec["dist"], k) if k else (), rec["mean"])
        if len(intervals) < len(items):
            ctx.note("ATOM: the cumulative `[MTP Stats ]` lines repeat the interval lines' drafts: set aside")
        return
    # only cumulative lines: difference them per process (a drop is a restart: count afresh)
    prev: dict = {}
    for rec, meta in items:
        key = (meta[0], meta[3])
        p = prev.get(key)
        prev[key] = rec
        k = rec["k"]
        if p is not None and rec["tot"] >= p["tot"] and rec["acc"] >= p["acc"]:
            acc, tot = rec["acc"] - p["acc"], rec["tot"] - p["tot"]
            steps_now, steps_prev = (rec["tot"] / k, p["tot"] / k) if k else (0, 0)
            counts = [
                rec["dist"].get(j, 0.0) * steps_now - p["dist"].get(j, 0.0) * steps_prev for j in range(0, (k or 0) + 1)
            ]
            steps = steps_now - steps_prev
            dist = {j: max(0.0, c / steps) for j, c in enumerate(counts)} if steps > 0 else {}
        else:
            acc, tot, dist = rec["acc"], rec["tot"], rec["dist"]
        if tot:
            _add(ctx, meta, acc, tot, k, _pp(dist, k) if k and dist else (), None)
    ctx.note("ATOM `[MTP Stats ]` lines are cumulative since the server started: differenced per process")


FORMAT = Format(
    id="atom-stats",
    engine="atom",
    label="ROCm ATOM `[MTP Stats Interval]` / `[MTP Stats ]` line",
    meaning="interval line per interval, the other cumulative (differenced); drafts = Total Draft tokens / k (k = the "
    "distribution's largest key); Accepted excludes the bonus, Average toks/fwd includes it; the distribution "
    "gives the per-position rates; drafts-weighted, exact counts",
    literals=(LITERAL,),
    parse=parse,
    priority=36,
    lead=_LEAD,
    candidate_in_line=True,  # `Accepted/Total`
    finish=finish,
)
