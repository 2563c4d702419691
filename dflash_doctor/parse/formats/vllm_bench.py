"""`vllm bench serve`'s Speculative Decoding block (vllm/benchmarks/serve.py), printed by the client
after a benchmark run from the server's /metrics counters (their difference over the run).

    ---------------Speculative Decoding---------------
    Acceptance rate (%):                     69.73
    Acceptance length:                       3.09
    Drafts:                                  2729
    Draft tokens:                            8187
    Accepted tokens:                         5709
    Per-position acceptance (%):
      Position 0:                            85.00
    ==================================================

What the numbers mean: one figure for the **whole run** (not per interval). `Accepted tokens`
excludes the bonus token; `Acceptance length` = 1 + Accepted tokens / Drafts (**bonus included**,
vLLM's τ); k = Draft tokens / Drafts; positions are unconditional rates in percent.
**Drafts-weighted** (the counts are printed: τ is computed from them, not from the rounded length).

Salvage: a block with only some of its lines — the length alone (its weight unknown), the length with
Accepted tokens (drafts = accepted / (length - 1), an estimate), Draft tokens with k from the caller.
"""

from __future__ import annotations

import re
from typing import Any

from ._common import BadLine, Format, Impossible, Line, N, Parsed, block_fields, count, num, rate, row

KEYS = re.compile(
    r"(?P<key>Acceptance rate \(%\)|Acceptance length|Drafts|Draft tokens|Accepted tokens"
    r"|Position (?P<pos>\d+)|Per-position acceptance \(%\)):\s*(?P<v>" + N + r")?\s*$"
)
_FIELD = {
    "Acceptance rate (%)": "rate",
    "Acceptance length": "mean",
    "Drafts": "drafts",
    "Draft tokens": "drafted",
    "Accepted tokens": "accepted",
}


def fields(matches) -> dict:
    out: dict = {"pos": {}}
    for m in matches:
        key = m["key"]
        if key.startswith("Per-position"):
            continue
        if m["v"] is None:
            raise BadLine(f"bench block line without a value: {key}")
        if m["pos"] is not None:
            out["pos"][int(m["pos"])] = rate(m["v"], f"position {m['pos']} (%)", 100.0) / 100.0
        else:
            out[_FIELD[key]] = m["v"]
    return out


def to_row(fmt: str, f: dict, what: str) -> Parsed:
    """One row for a whole-run summary from its fields (texts); a partial one says what it lacked."""
    mean = num(f["mean"], "the acceptance length") if "mean" in f else None
    drafts = count(f["drafts"], "Drafts") if "drafts" in f else None
    drafted = count(f["drafted"], "Draft tokens") if "drafted" in f else None
    accepted = count(f["accepted"], "Accepted tokens") if "accepted" in f else None
    if "rate" in f:
        rate(f["rate"], "the acceptance rate (%)", 100.0)
    pp = tuple(f["pos"][i] for i in sorted(f.get("pos", {})))
    if accepted is not None and drafted is not None and accepted > drafted:
        raise Impossible(f"absurd numbers: Accepted tokens {accepted} > Draft tokens {drafted}")
    if mean is not None and mean < 1.0 - 1e-9:
        raise Impossible(f"absurd numbers: acceptance length {mean} < 1")
    if mean is None and (accepted is None or not drafts):
        raise BadLine(f"{what} without its acceptance length or its counts")
    missing = [
        name
        for key, name in (
            ("mean", "the acceptance length"),
            ("drafts", "Drafts"),
            ("drafted", "Draft tokens"),
            ("accepted", "Accepted tokens"),
        )
        if key not in f
    ]
    k = None
    if drafts and drafted is not None:
        # (drafts shorter than k — n-gram, a request ending mid-draft — make k the ceiling)
        k = drafted // drafts if drafted % drafts == 0 else -(-drafted // drafts)
    elif pp:
        k = len(pp)
    estimated = False
    derived = ""
    weight: float | None = drafts  # the count, or an estimate of it
    if drafts is None and accepted is not None and mean is not None and mean > 1.0:
        weight, estimated = accepted / (mean - 1.0), True
        derived = "drafts = Accepted tokens / (length - 1) (an estimate from the rounded length)"
    rec: dict[str, Any] = {
        "fmt": fmt,
        "mean": mean,
        "drafts": weight,
        "drafted": drafted,
        "accepted": accepted,
        "k": k,
        "pp": pp,
        "estimated": estimated,
        "missing": ", ".join(missing),
        "derived": derived,
    }
    if weight is None:
        return Parsed(defer=[rec], missing=rec["missing"])  # weight from k (the caller's hint) or unknown
    return Parsed(rows=[summary_row(rec, k)], missing=rec["missing"] if missing else "", derived=derived)


def summary_row(rec: dict, k: int | None) -> dict:
    drafts, estimated, accepted = rec["drafts"], rec["estimated"], rec["accepted"]
    if drafts is None and rec["drafted"] is not None and k:
        drafts, estimated = rec["drafted"] / k, True
    if drafts is None and accepted is not None and rec["mean"] and rec["mean"] > 1.0:
        drafts, estimated = accepted / (rec["mean"] - 1.0), True
    if drafts is None:
        drafts, estimated = 1.0, True  # weight unknown: its τ is the printed length
    if accepted is None and rec["mean"] is not None:
        accepted = (rec["mean"] - 1.0) * drafts
    mean = rec["mean"] if rec["mean"] is not None else 1.0 + accepted / drafts if drafts else None
    return row(
        rec["fmt"],
        drafts=float(drafts),
        drafted=rec["drafted"],
        accepted=accepted,
        k=k or rec["k"],
        per_position=rec["pp"],
        printed_mean=mean,
        accepted_throughput=None,
        drafted_throughput=None,
        emitted=None,
        estimated=estimated,
    )


def finish_summaries(items: list, ctx) -> None:
    for rec, meta in items:
        k = rec["k"] or ctx.startup_k or ctx.k_hint
        how = ""
        if rec["drafted"] is not None and k and not rec["k"]:
            how = f"drafts = Draft tokens / k, k = {k} from " + (
                "the startup lines" if ctx.startup_k else ctx.k_hint_source or "the caller"
            )
        r = summary_row(rec, k)
        ctx.add_row(r, meta, needs_k=not rec["k"])
        if rec["missing"]:
            ctx.salvage(
                meta,
                rec["fmt"],
                rec["missing"],
                how
                or rec["derived"]
                or ("weight unknown: its τ is the printed length" if r["drafts"] == 1.0 and r["estimated"] else ""),
            )


def parse(line: Line) -> Parsed | None:
    matches, consumed = block_fields(line, KEYS)
    if not matches:
        return None
    p = to_row("vllm-bench-serve", fields(matches), "a `vllm bench serve` block")
    p.consumed = consumed
    return p


FORMAT = Format(
    id="vllm-bench-serve",
    engine="vllm",
    label="`vllm bench serve` Speculative Decoding block",
    meaning="whole run; Accepted tokens exclude the bonus token, the acceptance length includes it; drafts-weighted "
    "(Drafts printed)",
    literals=("Acceptance rate (%)", "Acceptance length:", "Accepted tokens:", "Per-position acceptance (%)"),
    parse=parse,
    priority=60,
    block=True,
    finish=finish_summaries,
)
