"""The reader of last resort: a summary block in plain words that no known format claims — a
hand-written script's, a fork's, a paper's table pasted as text — with `key : value` (or `key = value`)
lines naming drafts, draft or accepted tokens, a mean acceptance length, or per-position rates
(optionally with their counts in parentheses):

    num_spec_tokens     : 5
    num_drafts          : 6590
    mean acceptance len : 2.359
      accept@pos 0      : 0.622  (4098)

What the numbers mean is a guess from the words, so the figure is reported as **read from an
unrecognised format** (standing "unrecognised-format": lower confidence) and used only when no known
format gave one. Drafts-weighted when a drafts count is printed: τ = 1 + accepted / drafts when both
are printed (or per-position counts and drafts: 1 + Σ counts / drafts), else the printed mean (a mean
below 1 is taken as excluding the bonus token, and said so); rates above 1 are percentages. A block needs
a drafts count or a mean to be read.
"""

from __future__ import annotations

import re

from ._common import Format, Impossible, Line, N, Parsed, block_fields, count, num, row

_KV = re.compile(
    r"(?P<key>[A-Za-z][\w @#()/.%-]{0,58}?)\s*[:=]\s*(?P<v>" + N + r")\s*%?"
    r"(?:\s*\(\s*(?P<c>\d+)\s*\))?\s*$"
)
_WHAT = [
    (
        "pos",
        re.compile(
            r"(?:accept(?:ance|ed)?(?:\s*rate)?\s*(?:@|at)\s*(?:pos(?:ition)?|token|step)\s*#?\s*(\d+)"
            r"|pos(?:ition)?\s*#?\s*(\d+)\s*(?:accept(?:ance|ed)?(?:\s*rate)?)?)$",
            re.I,
        ),
    ),
    ("mean", re.compile(r"(?:mean|avg|average)?[ _]*(?:accept(?:ance)?|acc)[ _]*len(?:gth)?|tau|τ|\bAL\b", re.I)),
    (
        "drafts",
        re.compile(r"(?:num|number of|n|total)?[ _]*(?:drafts|draft[ _]steps|verify[ _]steps|spec[ _]steps)$", re.I),
    ),
    ("drafted", re.compile(r"(?:num|number of|n|total)?[ _]*(?:draft[ _]tokens|drafted(?:[ _]tokens)?)$", re.I)),
    ("accepted", re.compile(r"(?:num|number of|n|total)?[ _]*(?:accepted(?:[ _]tokens)?|acc[ _]tokens)$", re.I)),
    (
        "k",
        re.compile(
            r"(?:num[ _]spec(?:ulative)?[ _]tokens|num[ _]speculative[ _]tokens|spec(?:ulative)?[ _]len(?:gth)?"
            r"|draft[ _]len(?:gth)?|\bk\b)$",
            re.I,
        ),
    ),
]


def _what(key: str):
    key = key.strip()
    for name, rx in _WHAT:
        m = rx.search(key)
        if m:
            if name == "pos":
                return name, int(next(g for g in m.groups() if g is not None))
            return name, None
    return None, None


def _counts(drafts, accepted, mean) -> tuple[float, float, bool] | None:
    """(drafts, accepted, drafts estimated?) from what the block printed; None when nothing gives τ (zero
    drafts printed with no mean and no accepted count)."""
    est = False
    if drafts is None and accepted is not None and mean and mean > 1.0:
        drafts, est = accepted / (mean - 1.0), True
    if drafts is None:
        drafts, est = 1.0, True
    if accepted is None:
        if mean is None:
            return None
        accepted = (mean - 1.0) * drafts
    return drafts, accepted, est


def parse(line: Line) -> Parsed | None:
    matches, consumed = block_fields(line, _KV)
    f: dict = {}
    pos: dict = {}
    for m in matches:
        name, i = _what(m["key"])
        if name is None:
            continue
        if name == "pos":
            v = num(m["v"], m["key"])
            v = v / 100.0 if v > 1.0 else v
            if v > 1.0:
                raise Impossible(f"absurd numbers: {m['key']} {m['v']}")
            pos[i] = (v, int(m["c"]) if m["c"] else None)
        else:
            f.setdefault(name, m["v"])
    if not pos and "mean" not in f and "accepted" not in f:
        return None
    if "drafts" not in f and "mean" not in f:
        return None
    mean = num(f["mean"], "the mean acceptance length") if "mean" in f else None
    drafts: float | None = count(f["drafts"], "drafts") if "drafts" in f else None
    drafted = count(f["drafted"], "draft tokens") if "drafted" in f else None
    accepted: float | None = count(f["accepted"], "accepted tokens") if "accepted" in f else None
    k = count(f["k"], "k") if "k" in f else None
    notes = [
        "read from an unrecognised format (the generic key-value reader): the words were taken at their face "
        "value; lower confidence"
    ]
    pp = tuple(pos[i][0] for i in sorted(pos))
    counts = [pos[i][1] for i in sorted(pos)]
    if drafts and pp and all(c is not None for c in counts) and accepted is None:
        accepted = sum(counts)
        pp = tuple(c / drafts for c in counts)
    if accepted is not None and drafted is not None and accepted > drafted:
        raise Impossible(f"absurd numbers: accepted {accepted} > drafted {drafted}")
    if mean is not None and mean < 1.0:
        mean += 1.0
        notes.append("the generic reader took a mean below 1 as excluding the bonus token and added it")
    if accepted is None and drafts and pp:
        accepted = round(sum(pp) * drafts)
    if k and len(pp) > k and all(r == 0 for r in pp[k:]):
        pp = pp[:k]
    counted = _counts(drafts, accepted, mean)
    if counted is None:
        return None
    drafts, accepted, est = counted
    tau = 1.0 + accepted / drafts if drafts else mean
    return Parsed(
        rows=[
            row(
                "generic-kv",
                drafts=float(drafts),
                drafted=drafted,
                accepted=accepted,
                k=k or (len(pp) or None),
                per_position=pp,
                printed_mean=tau,
                accepted_throughput=None,
                drafted_throughput=None,
                emitted=None,
                estimated=est,
            )
        ],
        consumed=consumed,
        notes=tuple(notes),
    )


FORMAT = Format(
    id="generic-kv",
    engine=None,
    label="an unrecognised format (generic key-value reader)",
    meaning="guessed from the words: τ = 1 + accepted / drafts when both are printed, else the printed mean; lower "
    "confidence, used only when no known format gave a figure",
    literals=("ccept",),
    parse=parse,
    priority=99,
    block=True,
    checks_prefix=True,  # its key must start the line's content: block_fields matches from there
    standing="unrecognised",
)
