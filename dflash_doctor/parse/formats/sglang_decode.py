"""SGLang scheduler `Decode batch` line (scheduler_metrics_mixin.py / metrics_reporter.py,
`log_decode_stats`), with its `[time DPn TPn]` prefix.

What the numbers mean: **per interval** of `decode_log_interval` (40) decode steps, reset after
each line. `accept len` = (accepted draft tokens + verify steps) / verify steps: the mean acceptance
length **with the bonus token**, the meaning of vLLM's. No counts are printed: each line is weighted
by `#running-req` × decode_log_interval (an estimate of its request-steps, said as such) and the
lines are summed drafts-weighted with those weights, so lines of equal batch weigh equally. `accept rate`
changed meaning: 0.5.6–0.5.10 print accept_len / num_draft_tokens (a floor of 1/num_draft_tokens), 0.5.23
the strict (len-1)/(num_draft_tokens-1); `--engine` settles it, otherwise the arithmetic does. With
data-parallel attention every DP rank logs its own lines (`DPn` in the prefix): they are kept apart as
engines and summed.
Variants: `Decode batch.` (<= 0.5.2), `Decode batch,` (0.5.6+), `Decode batch [iter],`.
"""

from __future__ import annotations

import re
from typing import Any

from ...versions import VersionError, release_of
from ._common import SGLANG_HEADER, BadLine, Format, Impossible, Line, N, Parsed, count, num, row

LITERAL = "Decode batch"
_SGL = re.compile(
    r"Decode batch(?: \[\d+\])?(?P<sep>[.,])\s*#running-req:\s*(?P<run>" + N + r")\s*,"
    r"(?P<body>.*?)accept len:\s*(?P<len>" + N + r")"
    r"(?:\s*,\s*accept rate:\s*(?P<rate>" + N + r"))?"
    r"(?P<rest>\s*,.*)?$"
)


# a record joined onto the one before it (a paste that lost its line breaks): SGLang's own header right before it
_JOINED = re.compile(r"\s*" + SGLANG_HEADER.pattern + r"$")


def parse(line: Line) -> Parsed | None:
    """One line; records joined onto it after SGLang's `[time DPn TPn]` header are each read (and said)."""
    msg = line.msg
    cuts = []
    q = msg.find(LITERAL, 1)
    while q > 0:
        h = _JOINED.search(msg, 0, q)
        if h is not None:
            cuts.append((h.start(), q))
        q = msg.find(LITERAL, q + 1)
    if not cuts:
        return _record(msg)
    first = _record(msg[: cuts[0][0]])
    defer, notes = list(first.defer) if first else [], []
    for i, (_, start) in enumerate(cuts):
        end = cuts[i + 1][0] if i + 1 < len(cuts) else len(msg)
        try:
            more = _record(msg[start:end])
        except BadLine as exc:
            notes.append(f"an SGLang `Decode batch` record joined onto the line before could not be read: {exc}")
            continue
        defer += more.defer if more else []
    if len(defer) > 1:
        notes.append(
            f"{len(defer)} SGLang `Decode batch` records on one line (a paste that lost its line breaks): each read, "
            "all with the first one's time and rank"
        )
    return Parsed(defer=defer, notes=tuple(notes))


def _record(msg: str) -> Parsed | None:
    if "accept len" not in msg:
        return None  # a decode line without speculative decoding: not a metrics line
    m = _SGL.match(msg)
    if not m:
        raise BadLine("looks like an SGLang `Decode batch` line with `accept len` but does not parse")
    run = count(m["run"], "#running-req")
    length = num(m["len"], "accept len")
    rate = num(m["rate"], "accept rate") if m["rate"] is not None else None
    if m["rest"] is None and msg.rstrip().endswith(m["rate"] or m["len"]):
        raise BadLine("line cut mid-number")
    if length < 1.0 - 1e-9:
        raise Impossible(f"absurd numbers: accept len {length} < 1")
    if rate is not None and rate > 1.0 + 1e-9:
        raise Impossible(f"absurd numbers: accept rate {rate} > 1")
    return Parsed(defer=[{"running": run, "len": length, "rate": rate, "old": m["sep"] == "."}])


# SGLang algorithms that draft a chain or tree `num_steps` deep (EAGLE's family, NEXTN = MTP, STANDALONE);
# DFLASH drafts a block of `num_draft_tokens - 1` and has no steps.
_SGLANG_STEPPED = frozenset({"eagle", "eagle3", "nextn", "mtp", "standalone"})


def sglang_k(algorithm: Any, steps: Any, draft_tokens: Any) -> int | None:
    """The most draft tokens one SGLang verification step can accept (the k a τ ≤ k + 1 ceiling uses).

    `--speculative-num-draft-tokens` counts the tree's nodes sent for verification, the root (the verified
    token) among them; `--speculative-num-steps` is the tree's depth. A chain (topk 1) has draft tokens = steps
    + 1; a tree (topk > 1, e.g. steps 3, topk 4, draft tokens 16) still accepts at most `steps` tokens a step,
    so k is the smaller of the two; DFLASH has no steps: its block drafts draft tokens - 1."""
    ints = [x if isinstance(x, int) and not isinstance(x, bool) else None for x in (steps, draft_tokens)]
    st, ndt = ints
    by_tokens = ndt - 1 if ndt is not None and ndt > 1 else None
    if str(algorithm or "").lower() not in _SGLANG_STEPPED or st is None or st < 1:
        return by_tokens if by_tokens is not None else (st if st is not None and st >= 0 else None)
    return min(st, by_tokens) if by_tokens is not None else st


def finish(items: list, ctx) -> None:
    interval = 40
    args = ctx.args
    ndt = args.get("speculative_num_draft_tokens") if type(args.get("speculative_num_draft_tokens")) is int else None
    if type(args.get("decode_log_interval")) is int and args["decode_log_interval"] > 0:
        interval = args["decode_log_interval"]
    meaning = _rate_meaning(items, ndt, ctx.engine_hint)
    ctx.set_fact("sglang_rate_meaning", meaning)
    if any(rec.get("old") for rec, _ in items):
        # `Decode batch.` is the form of SGLang <= 0.5.2 (read in the 0.4.6 and 0.5.2 wheels; 0.5.6 prints
        # `Decode batch,`): a bound on the release, so on what it could run (no DFlash before 0.5.11)
        ctx.set_fact("release_bounds", {"sglang": "<=0.5.5"})
    k = sglang_k(args.get("speculative_algorithm"), args.get("speculative_num_steps"), ndt)
    per_step = ndt - 1 if ndt and ndt > 1 else k  # tokens sent for verification a step (a tree's nodes)
    for rec, meta in items:
        run = rec["running"]
        if run == 0:
            continue
        drafts = float(run * interval)
        accepted = (rec["len"] - 1.0) * drafts
        drafted = int(round(drafts * per_step)) if per_step else None
        ctx.add_row(
            row(
                "sglang",
                drafts=drafts,
                drafted=drafted,
                accepted=accepted,
                k=k,
                per_position=(),
                printed_mean=rec["len"],
                accepted_throughput=None,
                drafted_throughput=None,
                emitted=None,
                estimated=True,
            ),
            meta,
        )
    ctx.note(f"SGLang lines carry no counts: each is weighted by #running-req × {interval} decode steps (an estimate)")
    if meaning:
        ctx.note(f"SGLang `accept rate` read as {meaning}")


def _rate_meaning(items: list, ndt: int | None, hint) -> str | None:
    rated = [r for r, _ in items if r["rate"] is not None]
    if not rated:
        return None
    if hint and hint[0] == "sglang" and hint[1]:
        try:
            release = release_of(hint[1])
        except VersionError:
            release = None
        if release is not None and release <= release_of("0.5.10"):
            return "accept_len / num_draft_tokens (SGLang 0.5.6–0.5.10, from --engine)"
        if release is not None and release >= release_of("0.5.23"):
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


FORMAT = Format(
    id="sglang",
    engine="sglang",
    label="SGLang `Decode batch` line",
    meaning="per interval (decode_log_interval steps); accept len includes the bonus token; no counts: weighted by "
    "#running-req × decode_log_interval (an estimate); DP ranks kept apart",
    literals=(LITERAL,),
    parse=parse,
    rate_from_counts=False,  # drafted/accepted are estimates (#running-req × the log interval)
    header=SGLANG_HEADER,
    priority=30,
    candidate_in_line=True,  # `accept len`
    finish=finish,
)
