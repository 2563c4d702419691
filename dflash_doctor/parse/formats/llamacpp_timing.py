"""llama.cpp server per-request draft line (tools/server/server-context.cpp, `server_slot::print_timings`,
logged through `SLT_INF` as `slot print_timing: id  N | task N | …` when a slot finishes a request):

    draft acceptance rate = 0.57576 (   57 accepted /    99 generated)                       (2024: alone on its line,
                                                      logged with a leading "\n" by SLT_INF, or by SLT_CNT)
    draft acceptance = 0.63158 (   24 accepted /    38 generated)                            (2025)
    draft acceptance = 0.63158 (   24 accepted /    38 generated), mean len =  2.85     (+ `acc per pos`: trace)
    draft acceptance = 0.64479 (  167 accepted /   259 generated), mean acceptance length =  2.92,
        acceptance rate per position = (0.805, 0.632, 0.483)                              (one line)

What the numbers mean: **one request** (the slot's counters reset per request). accepted = accepted
draft tokens, generated = draft tokens proposed (**bonus excluded**); mean = 1 + accepted /
verification steps (**bonus included**: vLLM's τ for that request); per-position rates = accepted at
position i / verification steps (%.3f, unconditional). The steps are not printed: they are derived
from the mean and the rates (the integer that reproduces both), so each line is a request with
**derived counts**, summed drafts-weighted across requests. The list's length is the longest draft
position seen (at most the draft length). When the same process also logs `statistics draft-*`
lines (llamacpp_stats: exact, cumulative counts for the same drafts), those are used and these kept aside.
Lines without a mean (older servers) give only the acceptance rate unless k comes from the caller.
"""

from __future__ import annotations

import re

from ._common import BadLine, Format, Impossible, Line, N, Parsed, content_of, count, num, rate, row

LITERAL = "draft acceptance"
CEILING = "llamacpp-print-timing-k-ceiling"  # steps taken as generated / k: τ an upper bound
_LEAD = re.compile(r"slot\s+print_timing: id\s+-?\d+ \| task -?\d+ \| $")
_LINE = re.compile(
    r"draft acceptance(?: rate)? = (?P<rate>"
    + N
    + r") \(\s*(?P<acc>"
    + N
    + r") accepted /\s*(?P<gen>"
    + N
    + r") generated\)(?:, mean (?:len|acceptance length) =\s*(?P<mean>"
    + N
    + r"))?"
    r"(?:, acceptance rate per position = \((?P<pp>[^)]*)\))?"
)
_TRACE_PP = re.compile(r"acc per pos = \((?P<pp>[^)]*)\)")


def _steps(acc: int, mean: float | None, pp: tuple[float, ...]) -> tuple[float | None, bool]:
    """The verification steps: the integer whose 1 + acc/steps rounds to the printed mean and whose
    rates × steps are (nearly) whole; (steps, exact?)."""
    if mean is None or mean <= 1.0 or acc == 0:
        return None, False
    guess = acc / (mean - 1.0)
    best = None
    for s in range(max(1, int(guess * 0.98) - 2), int(guess * 1.02) + 3):
        if abs(round(1.0 + acc / s, 2) - mean) > 0.0051:
            continue
        err = sum(abs(r * s - round(r * s)) for r in pp)
        if best is None or err < best[0]:
            best = (err, s)
    if best is None:
        return guess, False
    return float(best[1]), True


def parse(line: Line) -> Parsed | None:
    m = _LINE.match(line.msg)
    if not m:
        raise BadLine("looks like a llama.cpp `draft acceptance` line but does not parse (cut short?)")
    r = rate(m["rate"], "the draft acceptance")
    acc = count(m["acc"], "accepted")
    gen = count(m["gen"], "generated")
    if acc > gen:
        raise Impossible(f"absurd numbers: {acc} accepted > {gen} generated")
    mean = num(m["mean"], "the mean acceptance length") if m["mean"] is not None else None
    pp_text = m["pp"]
    consumed = 0
    if pp_text is None and line.after:
        t = _TRACE_PP.search(content_of(line.after[0])[1])
        if t:
            pp_text, consumed = t["pp"], 1
    pp = tuple(rate(x.strip(), "a per-position rate") for x in pp_text.split(",") if x.strip()) if pp_text else ()
    if gen and abs(r - acc / gen) > 0.0001:
        raise Impossible(f"absurd numbers: draft acceptance {r} is not {acc}/{gen}")
    if mean is not None and mean < 1.0 - 1e-9:
        raise Impossible(f"absurd numbers: mean length {mean} < 1")
    if gen == 0:
        return Parsed(consumed=consumed)
    steps, exact = _steps(acc, mean, pp)
    if acc == 0 and mean is not None:
        steps, exact = None, False  # nothing accepted: τ = 1 whatever the steps; their number is unknown
    rec = {"accepted": acc, "drafted": gen, "mean": mean, "pp": pp, "steps": steps, "exact": exact}
    return Parsed(defer=[rec], consumed=consumed)


def finish(items: list, ctx) -> None:
    for rec, meta in items:
        steps = rec["steps"]
        k = len(rec["pp"]) or None
        est = not rec["exact"]
        if steps is None and rec["accepted"] == 0 and (k or ctx.k_hint or ctx.startup_k):
            kk = k or ctx.k_hint or ctx.startup_k
            steps, est = rec["drafted"] / kk, True
        fmt = "llamacpp-print-timing"
        if steps is None and (ctx.k_hint or ctx.startup_k):
            # a draft stops early when the drafter's top probability falls below --draft-p-min (common/speculative.cpp):
            # generated / k is the fewest steps the request can have taken, so the τ from it is the most it can be
            kk = ctx.k_hint or ctx.startup_k
            steps, est, fmt = rec["drafted"] / kk, True, CEILING
            ctx.salvage(
                meta,
                "llamacpp-print-timing",
                "the mean acceptance length (not printed by this version)",
                f"verification steps ≥ generated / k, k = {kk} (drafts stop early below --draft-p-min): τ is at most "
                "the figure derived",
            )
        mean = rec["mean"] if rec["mean"] is not None else (1.0 + rec["accepted"] / steps if steps else None)
        ctx.add_row(
            row(
                fmt,
                drafts=steps,
                drafted=rec["drafted"],
                accepted=rec["accepted"],
                k=k,
                per_position=rec["pp"],
                printed_mean=mean,
                accepted_throughput=None,
                drafted_throughput=None,
                emitted=None,
                estimated=est,
            ),
            meta,
            needs_k=rec["steps"] is None,
        )


FORMAT = Format(
    id="llamacpp-print-timing",
    engine="llama.cpp",
    label="llama.cpp server `print_timing` draft line",
    meaning="one request; accepted/generated exclude the bonus token, the mean includes it; verification steps "
    "derived from the mean and the rates; drafts-weighted across requests",
    literals=(LITERAL,),
    parse=parse,
    priority=35,
    lead=_LEAD,
    finish=finish,
    variants=("llamacpp-print-timing", CEILING),
    tau_ceiling=(CEILING,),
)
