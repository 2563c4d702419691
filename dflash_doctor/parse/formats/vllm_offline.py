"""vLLM's offline example summary (examples/offline_inference/spec_decode.py), printed by the script
from `llm.get_metrics()` counters at the end of a run, in several shapes:

    --------------------------------------------------          (mid-2025 on)
    total_num_output_tokens: 247681
    num_drafts: 99407
    num_draft_tokens: 298221
    num_accepted_tokens: 148350
    mean acceptance length: 2.49
    --------------------------------------------------
    acceptance at token 0: 0.70                                  (k rows, first draft position first)

* the older form (early/mid 2025) prints only the mean and starts at `acceptance at token 0: 1.00`:
  the bonus slot, not a draft position — the arithmetic exposes it (mean = 1 + Σ rates[1:]);
* an n-gram variant adds `num_tokens_generated_without_sd` and a `seq normalized acceptance length`
  = output tokens / (drafts + tokens generated without a draft): a per-sequence figure, not vLLM's τ;
  kept as an alternative, never used for τ;
* a `Speculative Decoding Stats` variant prints `Number of drafts`, `Draft tokens generated`,
  `Accepted tokens`, `Mean acceptance length`.

What the numbers mean: one figure for the **whole run**; num_accepted_tokens excludes the bonus,
`mean acceptance length` = 1 + accepted / drafts includes it (vLLM's τ). **Drafts-weighted** when
the counts are printed (τ is then computed from them). The position list is as long as the script's
array, which can be longer than k (a script sized for a larger k): rows past k = Draft tokens /
Drafts that are all zero are structural and dropped. n-gram drafts can be shorter than k, so
Draft tokens / Drafts is not an integer there: k is its ceiling.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ._common import BadLine, Format, Impossible, Line, N, Parsed, block_fields, count, num, rate
from .vllm_bench import finish_summaries, summary_row

KEYS = re.compile(
    r"(?P<key>total_num_output_tokens|num generation tokens|num_drafts|num_draft_tokens|num_accepted_tokens"
    r"|mean acceptance length|num_tokens_generated_without_sd|seq normalized acceptance length"
    r"|acceptance at token\s*(?P<pos>\d+)|Number of drafts|Draft tokens generated|Draft utilization rate"
    r"|Accepted tokens|Mean acceptance length|Total input tokens|Total output tokens"
    r"|Input token throughput \(tok/s\)|Output token throughput \(tok/s\)|max_num_seqs)\s*:\s*(?P<v>" + N + r")?\s*$"
)
_OWN = {
    "num_drafts",
    "num_draft_tokens",
    "num_accepted_tokens",
    "mean acceptance length",
    "Number of drafts",
    "Draft tokens generated",
    "seq normalized acceptance length",
    "num_tokens_generated_without_sd",
}
_FIELD = {
    "num_drafts": "drafts",
    "Number of drafts": "drafts",
    "num_draft_tokens": "drafted",
    "Draft tokens generated": "drafted",
    "num_accepted_tokens": "accepted",
    "Accepted tokens": "accepted",
    "mean acceptance length": "mean",
    "Mean acceptance length": "mean",
}


def parse(line: Line) -> Parsed | None:  # noqa: C901 - one branch per key of the summary block
    matches, consumed = block_fields(line, KEYS)
    keys = {re.sub(r"\s*\d+$", "", m["key"]) for m in matches}
    if not (keys & _OWN or "acceptance at token" in keys):
        return None
    f: dict = {}
    pos: dict = {}
    alts = []
    for m in matches:
        if m["v"] is None:
            raise BadLine(f"offline-example line without a value: {m['key']}")
        if m["pos"] is not None:
            pos[int(m["pos"])] = rate(m["v"], f"acceptance at token {m['pos']}")
        elif m["key"] in _FIELD:
            f[_FIELD[m["key"]]] = m["v"]
        elif m["key"] == "seq normalized acceptance length":
            alts.append(
                {
                    "figure": "seq normalized acceptance length",
                    "value": num(m["v"]),
                    "meaning": "output tokens / (drafts + tokens generated without a draft): per sequence step, "
                    "not vLLM's τ; kept, not used",
                }
            )
    mean = num(f["mean"], "the mean acceptance length") if "mean" in f else None
    drafts = count(f["drafts"], "num_drafts") if "drafts" in f else None
    drafted = count(f["drafted"], "num_draft_tokens") if "drafted" in f else None
    accepted = count(f["accepted"], "num_accepted_tokens") if "accepted" in f else None
    if accepted is not None and drafted is not None and accepted > drafted:
        raise Impossible(f"absurd numbers: accepted {accepted} > draft tokens {drafted}")
    if mean is not None and mean < 1.0 - 1e-9:
        raise Impossible(f"absurd numbers: mean acceptance length {mean} < 1")
    pp = [pos[i] for i in sorted(pos)]
    notes = []
    k = None
    if drafts and drafted is not None:
        k = drafted // drafts if drafted % drafts == 0 else math.ceil(drafted / drafts)
    if (
        len(pp) >= 2
        and pp[0] >= 0.995
        and mean is not None
        and abs(mean - (1 + sum(pp[1:]))) < abs(mean - (1 + sum(pp)))
    ):
        pp = pp[1:]
        notes.append("older offline-example output: `acceptance at token 0` is the bonus slot and was dropped")
    elif len(pp) >= 2 and pp[0] >= 0.995 > pp[1] and mean is None and drafts is None:
        # the curve alone: a first draft position accepted every time, the next not, is the old form's bonus slot
        pp = pp[1:]
        notes.append("older offline-example output: `acceptance at token 0` at 1.00 is the bonus slot and was dropped")
    if k and len(pp) > k:
        if all(r == 0.0 for r in pp[k:]):
            notes.append(
                f"the offline example printed {len(pp)} positions but k = Draft tokens / Drafts = {k}: the "
                f"{len(pp) - k} after it are structural zeros and were dropped"
            )
            pp = pp[:k]
        else:
            raise Impossible(f"absurd numbers: {len(pp)} positions with non-zero rates past k = {k}")
    if mean is None and (accepted is None or not drafts):
        if not pp:
            raise BadLine("an offline-example block without its mean or its counts")
        mean = 1.0 + sum(pp)  # the curve alone: τ = 1 + Σ rates (unconditional rates)
        f["from_curve"] = True
    if accepted is None and drafts and pp:
        accepted = round(sum(pp) * drafts)
    counted = [key for key in ("drafts", "drafted", "accepted") if key in f]
    old_form = any("bonus slot" in n for n in notes)
    missing = ""
    if counted and len(counted) < 3:
        missing = ", ".join(
            name
            for key, name in (
                ("drafts", "num_drafts"),
                ("drafted", "num_draft_tokens"),
                ("accepted", "num_accepted_tokens"),
            )
            if key not in f
        )
    elif not counted and not old_form:
        missing = "the counts (num_drafts, num_draft_tokens, num_accepted_tokens): the block's weight is unknown"
    if f.get("from_curve"):
        missing = (missing + ", " if missing else "") + "the mean (τ = 1 + Σ per-position rates)"
    estimated = False
    weight: float | None = drafts  # the count, or an estimate of it
    if drafts is None and accepted is not None and mean and mean > 1.0:
        weight, estimated = accepted / (mean - 1.0), True
    rec: dict[str, Any] = {
        "fmt": "vllm-offline-example",
        "mean": mean,
        "drafts": weight,
        "drafted": drafted,
        "accepted": accepted,
        "k": k or (len(pp) or None),
        "pp": tuple(pp),
        "estimated": estimated,
        "missing": missing,
        "derived": "drafts = accepted / (mean - 1) (an estimate from the rounded mean)" if estimated else "",
    }
    p = Parsed(notes=tuple(notes), consumed=consumed, alternatives=tuple(alts))
    if weight is None:
        p.defer = [rec]
    else:
        p.rows = [summary_row(rec, rec["k"])]
        p.missing = rec["missing"]
        p.derived = rec["derived"]
    return p


FORMAT = Format(
    id="vllm-offline-example",
    engine="vllm",
    label="vLLM offline example (spec_decode.py) summary",
    meaning="whole run; num_accepted_tokens exclude the bonus, the mean includes it; drafts-weighted when the counts "
    "are printed; `seq normalized` figures are per sequence step and kept aside",
    # (every key holding "ccept": the block's first such line anchors it, whichever lines a paste kept)
    literals=(
        "num_accepted_tokens",
        "mean acceptance length",
        "seq normalized acceptance length",
        "acceptance at token",
        "Mean acceptance length",
        "Accepted tokens:",
    ),
    parse=parse,
    priority=50,
    block=True,
    finish=finish_summaries,
)
