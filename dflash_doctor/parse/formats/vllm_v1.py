"""vLLM V1 `SpecDecoding metrics:` line (vllm/v1/spec_decode/metrics.py, `SpecDecodingLogging.log`).

What the numbers mean: **per interval** (the counters reset after each line, every
VLLM_LOG_STATS_INTERVAL = 10 s by default, idle intervals not logged). `Accepted` = accepted draft
tokens, **bonus excluded**; `Drafted` = draft tokens proposed; drafts (request-steps that carried
drafts) is not printed: Drafted / k for fixed-k drafting, k being the length of the per-position
list. `Mean acceptance length` = 1 + Accepted / drafts (**bonus included**) from 0.9 on; vLLM 0.8.5
printed Accepted / drafts (bonus excluded) with the same words — the arithmetic tells them apart.
Per-position rates are unconditional (drafts whose first i+1 tokens were accepted / drafts), `%.3f`.
Drafts-weighted: lines are summed by their counts, never by averaging printed means.

Variants: 0.8.3–0.8.4 (`Draft acceptance rate`, Accepted, Drafted: no mean, no list, so drafts needs
k from the startup lines or the caller), 0.8.5/0.9–0.10.1 (rate, mean, counts, list), 0.10.2+
(mean, throughputs, counts, list, average rate; the fast paths read this one a buffer at a time).

Salvage: a line cut after its counts keeps them; k then comes from complete lines of the same
engine, the startup lines, the caller's hint (launch command, drafter config) or, when it is printed
nowhere, from the arithmetic: the k <= K_MAX that divide Drafted and reproduce the printed mean.
"""

from __future__ import annotations

import re
from collections import Counter

from ._common import VLLM_HEADER, BadLine, Format, Impossible, Line, N, Parsed, count, num, prefix_ok, rate, row

LITERAL = "SpecDecoding metrics"
K_MAX = 32  # the largest k the arithmetic considers (DFlash uses 15-16; nothing published drafts more than 32)

# The vLLM >= 0.10.2 line, exactly as vLLM prints it, in bytes: the fast route's bulk readers (fast/lines.py, grep.py).
FAST_BODY = (
    rb"SpecDecoding metrics: Mean acceptance length: (\d+\.\d\d), Accepted throughput: (\d+\.\d\d) ?tokens/s, "
    rb"Drafted throughput: (\d+\.\d\d) ?tokens/s, Accepted: (\d+) tokens, Drafted: (\d+) tokens, "
    rb"Per-position acceptance rate: ((?:0\.\d{3}|1\.000)(?:, ?(?:0\.\d{3}|1\.000))*), "
    rb"Avg Draft acceptance rate: (\d+\.\d)%"
)
FAST_FMT = "vllm-v1-0.10.2"

_V1 = re.compile(
    r"SpecDecoding metrics:\s*"
    r"(?:Draft acceptance rate:\s*(?P<rate0>" + N + r")\s*%\s*,\s*)?"
    r"(?:Mean acceptance length:\s*(?P<mean>" + N + r")\s*,\s*)?"
    r"(?:Accepted throughput:\s*(?P<athr>" + N + r")\s*tokens/s\s*,\s*"
    r"Drafted throughput:\s*(?P<dthr>" + N + r")\s*tokens/s\s*,\s*)?"
    r"(?:Accepted:\s*(?P<acc>" + N + r")\s*tokens"
    r"(?:\s*,\s*Drafted:\s*(?P<dft>" + N + r")\s*tokens"
    r"(?P<pplead>\s*,\s*Per-position acceptance rate:\s*(?P<pp>" + N + r"(?:\s*,\s*" + N + r")*)?)?"
    r"(?P<ratelead>\s*,\s*Avg Draft acceptance rate:\s*(?:(?P<rate>" + N + r")\s*%)?)?"
    r")?)?"
)
_PP_ITEM = re.compile(r"\d\.\d{3}$")


def _items(text: str | None) -> list[str]:
    return [x for x in re.split(r"\s*,\s*", (text or "").strip()) if x]


def parse(line: Line) -> Parsed | None:
    """One line; a paste that lost its line breaks may hold several records on it: each whole record after the
    first, whose text before it is only wrappers and vLLM's header, is read too (and said)."""
    msg = line.msg
    item, end = _record(msg)
    rows: list[dict] = []
    defer: list[dict] = []
    _add(item, rows, defer)
    missing = item[2]
    notes: list[str] = []
    pos, joined = end, 0
    while (nxt := msg.find(LITERAL, pos)) >= 0:
        if not prefix_ok(msg[pos:nxt], VLLM_HEADER, engine="vllm"):
            break  # the literal inside other words: not a record of its own
        try:
            more, end = _record(msg[nxt:])
        except BadLine as exc:
            notes.append(f"a record joined onto the line before could not be read: {exc}")
            break
        _add(more, rows, defer)
        joined += 1
        pos = nxt + end
    if joined:
        notes.append(
            f"{joined + 1} `{LITERAL}` records on one line (a paste that lost its line breaks): each read as its "
            "own interval, all with the first one's time"
        )
    return Parsed(rows=rows, defer=defer, missing=missing, notes=tuple(notes))


def _add(item, rows: list, defer: list) -> None:
    rec, k, _ = item
    if k is None and rec["drafted"] > 0:
        defer.append(rec)  # drafts needs k: settled once the source is read (`finish`)
    else:
        rows.append(_row(rec, k))


def _record(msg: str) -> tuple[tuple[dict, int | None, str], int]:
    """((the record, its k, what a cut line lacks), where the record ends in msg) of the record msg starts with."""
    m = _V1.match(msg)
    if not m or (m["acc"] is None and m["mean"] is None and m["rate0"] is None):
        raise BadLine("looks like a vLLM `SpecDecoding metrics` line but matches no known variant (cut short?)")
    if m["acc"] is None:
        raise BadLine("line cut before its counts (Accepted, Drafted): nothing to weigh it by")
    if m["dft"] is None:
        raise BadLine("line cut before Drafted: nothing to weigh it by")
    tail = msg[m.end() :].strip()
    acc = count(m["acc"], "Accepted")
    dft = count(m["dft"], "Drafted")
    mean = num(m["mean"], "the mean acceptance length") if m["mean"] is not None else None
    athr = num(m["athr"], "the accepted throughput") if m["athr"] is not None else None
    dthr = num(m["dthr"], "the drafted throughput") if m["dthr"] is not None else None
    rate_text = m["rate"] if m["rate"] is not None else m["rate0"]
    avg = rate(rate_text, "the average acceptance rate (%)", 100.0) if rate_text is not None else None
    if acc > dft:
        raise Impossible(f"absurd numbers: Accepted {acc} > Drafted {dft}")
    if m["athr"] is not None:
        variant = FAST_FMT
    elif m["rate0"] is not None and m["mean"] is not None:
        variant = "vllm-v1-0.8.5/0.9"  # settled by the arithmetic (settle_mean)
    elif m["rate0"] is not None and m["pplead"] is None and m["ratelead"] is None:
        variant = "vllm-v1-0.8.3"
    else:
        raise BadLine("looks like a vLLM `SpecDecoding metrics` line but matches no known variant")

    items = _items(m["pp"])
    at_end = not tail and m["ratelead"] is None  # the line ends inside or right after the list
    cut_mid = at_end and bool(items) and not _PP_ITEM.match(items[-1]) and all(_PP_ITEM.match(x) for x in items[:-1])
    complete = bool(items) and not cut_mid and (variant != FAST_FMT or m["ratelead"] is not None)
    pp = tuple(rate(x, "a per-position rate") for x in items) if complete else ()
    missing = ""
    if variant == FAST_FMT:
        if m["pplead"] is None:
            missing = "the per-position list and the average rate (line cut after Drafted)"
        elif not complete:
            missing = "the end of the per-position list and the average rate (line cut inside the list)"
        elif m["rate"] is None:
            missing = "the average rate (line cut after the per-position list)"
    elif variant != "vllm-v1-0.8.3" and not complete:
        missing = (
            "the per-position list (line cut after Drafted)"
            if m["pplead"] is None
            else "the end of the per-position list (line cut inside the list)"
        )
    k = len(pp) or None
    if mean is not None and k and mean > k + 1.0 + 0.01:
        raise Impossible(f"absurd numbers: mean length {mean} > k+1 = {k + 1}")
    rec = {
        "variant": variant,
        "accepted": acc,
        "drafted": dft,
        "mean": mean,
        "pp": pp,
        "athr": athr,
        "dthr": dthr,
        "rate": avg,
        "missing": missing,
        "count_as": variant if variant != "vllm-v1-0.8.5/0.9" else "vllm-v1-0.9",
    }
    return (rec, k, missing), m.end()


# The printed mean has two decimals: counts fit it when 1 + Accepted/drafts rounds to it (and a little slack).
MEAN_SLACK = 0.0051


def counts_fit(mean: float | None, accepted: float, drafts: float, bonus: bool | None = True) -> bool:
    """Whether `drafts` verification steps agree with the printed mean (1 + Accepted/drafts with the bonus token,
    Accepted/drafts without it as 0.8.5 printed it; `bonus` None: either). Drafted/k is the number of drafts only
    when every draft carries k tokens: an n-gram proposer or dynamic k drafts fewer, and the mean says so."""
    if mean is None or drafts <= 0 or mean != mean:
        return True
    ratio = accepted / drafts
    with_bonus = abs(mean - 1.0 - ratio) <= MEAN_SLACK
    return with_bonus if bonus else with_bonus or (bonus is None and abs(mean - ratio) <= MEAN_SLACK)


def _drafts(rec: dict, k: int | None) -> tuple[float | None, bool]:
    """drafts is not printed: Drafted/k when every draft carries k tokens (the printed mean agrees), else
    Accepted/Σrates (the rates are accepted-at-position / drafts), else Accepted/(mean − 1)."""
    pp, acc, dft = rec["pp"], rec["accepted"], rec["drafted"]
    if dft == 0:
        return 0.0, False
    bonus = True if rec["variant"] == FAST_FMT else None
    if k and dft % k == 0 and counts_fit(rec["mean"], acc, dft / k, bonus):
        return dft / k, not pp
    s = sum(pp)
    if s > 0:
        return acc / s, True
    if bonus and rec["mean"] is not None and rec["mean"] > 1.0 and acc:
        return acc / (rec["mean"] - 1.0), True
    if k:
        return dft / k, True
    return None, True


def settle_mean(mean: float | None, accepted: float, drafts: float | None) -> tuple[float | None, bool]:
    """0.8.5 printed accepted/drafts as the mean (no bonus token); 0.9+ prints 1 + accepted/drafts.
    The text is identical, so the arithmetic decides. Returns (mean with the bonus, normalised?)."""
    if mean is None:
        return None, False
    if drafts:
        ratio = accepted / drafts
        # a mean below 1 cannot include the bonus token, whatever the arithmetic says
        if mean < 1.0 or abs(mean - ratio) + 1e-9 < abs(mean - (1.0 + ratio)):
            return mean + 1.0, True
        return mean, False
    return (mean + 1.0, True) if mean < 1.0 else (mean, False)


def _row(rec: dict, k: int | None, estimated: bool | None = None) -> dict:
    drafts, est = _drafts(rec, k)
    mean, normalised = settle_mean(rec["mean"], rec["accepted"], drafts)
    fmt = rec["variant"]
    if fmt == "vllm-v1-0.8.5/0.9":
        fmt = "vllm-v1-0.8.5" if normalised else "vllm-v1-0.9"
    return row(
        fmt,
        drafts=drafts,
        drafted=rec["drafted"],
        accepted=rec["accepted"],
        k=k,
        per_position=rec["pp"],
        printed_mean=mean,
        accepted_throughput=rec["athr"],
        drafted_throughput=rec["dthr"],
        emitted=None,
        estimated=est if estimated is None else estimated,
        normalised=normalised,
    )


def k_candidates(rec: dict, k_max: int = K_MAX) -> list[int]:
    """The k that divide Drafted and reproduce the printed mean (either meaning, to its 2 decimals)."""
    dft, acc, mean = rec["drafted"], rec["accepted"], rec["mean"]
    if not dft or mean is None:
        return []
    out = []
    for k in range(1, k_max + 1):
        if dft % k:
            continue
        drafts = dft / k
        if acc > drafts * k:
            continue
        tau = 1.0 + acc / drafts
        if abs(round(tau, 2) - mean) < 0.0051 or (
            rec["variant"] != FAST_FMT and abs(round(tau - 1, 2) - mean) < 0.0051
        ):
            out.append(k)
    return out


def finish(items: list, ctx) -> None:
    """Lines that printed no per-position list: k from (in order) complete lines of the same engine,
    the startup lines, the caller's hint, or the arithmetic; each choice is said."""
    by_engine: dict = {}
    for rec, meta in items:
        by_engine.setdefault((meta[0], meta[3]), []).append((rec, meta))
    for (source, engine), group in by_engine.items():
        known = ctx.known_k(source, engine)
        cands = None
        for rec, _ in group:
            if rec["mean"] is not None:
                c = set(k_candidates(rec))
                cands = c if cands is None else cands & c
        k, how = None, ""
        for k_try, where in (
            (known, "complete lines of the same engine"),
            (ctx.startup_k, "the startup lines"),
            (ctx.k_hint, ctx.k_hint_source or "the caller"),
        ):
            if not k_try:
                continue
            if cands is not None and k_try not in cands:
                ctx.note(
                    f"k = {k_try} from {where} does not fit the printed means of {len(group)} line(s) without a "
                    f"per-position list" + (f" (k that do: {', '.join(map(str, sorted(cands)))})" if cands else "")
                )
                continue
            k, how = k_try, f"k = {k_try} from {where}"
            break
        if k is None and cands:
            ordered = sorted(cands)
            if len(ordered) == 1:
                k, how = (
                    ordered[0],
                    (
                        f"k = {ordered[0]} derived: the only k <= {K_MAX} that divides Drafted and "
                        "reproduces the printed mean"
                    ),
                )
            else:
                # several fit: the one whose τ is nearest the printed means, all of them reported
                def miss(kk, group=group):
                    return sum(
                        abs(1.0 + r["accepted"] / (r["drafted"] / kk) - r["mean"])
                        for r, _ in group
                        if r["mean"] is not None and r["drafted"]
                    )

                k = min(ordered, key=miss)
                how = (
                    f"k = {k} derived from the arithmetic, but {', '.join(map(str, ordered))} all divide Drafted and "
                    "reproduce the printed mean (τ agrees to the printed decimals; the weight does not)"
                )
                ctx.k_candidates(ordered)
        for rec, meta in group:
            r = _row(rec, k, estimated=True)
            if k is None:
                r["drafts"], r["estimated"] = None, True
            ctx.add_row(r, meta, needs_k=True)
            if rec["missing"]:
                ctx.salvage(
                    meta,
                    r["fmt"],
                    rec["missing"],
                    how if k else "k printed nowhere and not derivable: only the acceptance rate is used",
                )


def known_k(rows_k: list) -> int | None:
    c = Counter(k for k in rows_k if k)
    return c.most_common(1)[0][0] if c else None


FORMAT = Format(
    id="vllm-v1",
    engine="vllm",
    label="vLLM V1 `SpecDecoding metrics` line",
    meaning="per interval; Accepted excludes the bonus token, the mean includes it (0.9+; 0.8.5 excluded it); "
    "drafts-weighted (drafts = Drafted / k)",
    literals=(LITERAL,),
    parse=parse,
    header=VLLM_HEADER,
    priority=10,
    scan_extra=(LITERAL,),
    finish=finish,
    variants=("vllm-v1-0.8.3", "vllm-v1-0.8.5", "vllm-v1-0.9", FAST_FMT),
)
