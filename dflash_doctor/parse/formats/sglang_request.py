"""SGLang per-request spec-decode figures in its request log (`--log-requests`;
tokenizer_manager.py / utils/request_logger.py `Finish: obj=…, out={…}`, or the JSON form
`{"event": "request.finished", …, "out": {"meta_info": {…}}}`):

    'meta_info': {…, 'completion_tokens': 212, …, 'spec_verify_ct': 74, 'spec_accept_length': 2.86, …}

What the numbers mean: **one finished request**. `spec_verify_ct` = its verification steps (the
drafts); `completion_tokens` = its output tokens, so completion_tokens / spec_verify_ct is its
acceptance length **with the bonus token** (SGLang's own definition of `spec_accept_length`, which
counts the prefill's first token too). With both counts the requests are summed **drafts-weighted**
(exact); with only `spec_accept_length` (no counts) it is a **per-request average**, flagged, never
mixed into a drafts-weighted figure. SGLang 0.5.2 logged `spec_verify_ct` only; 0.5.23 adds
`spec_accept_length`, `spec_accept_rate`, `spec_num_correct_drafts`, `spec_num_proposed_drafts`.
Where a source has these with counts, its `Decode batch` lines (the same decode steps, weighted by an
estimate) are set aside. Only the response's own `meta_info` counts: the last one on the line, after
any prompt or output text.
"""

from __future__ import annotations

import json
import re

from ... import pyast
from ._common import Format, Impossible, Line, N, Parsed, count, is_wrapper, num, row

_KEYS = (
    "spec_verify_ct",
    "completion_tokens",
    "spec_accept_length",
    "spec_num_correct_drafts",
    "spec_num_proposed_drafts",
)
_KV = re.compile(r"""['"](?P<k>""" + "|".join(_KEYS) + r""")['"]\s*:\s*(?P<v>""" + N + ")")


def _meta_from_text(msg: str) -> dict | None:
    out = msg.rfind(", out={")
    if out < 0:
        return None
    at = msg.rfind("'meta_info': {", out)
    if at < 0:
        return None
    body = msg[at + len("'meta_info': ") :]
    try:
        meta = pyast.literal_eval(_balanced(body))
        return meta if isinstance(meta, dict) else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    found: dict = {}
    for m in _KV.finditer(body):  # the last of each: after any user-controlled text in the meta_info
        found[m["k"]] = m["v"]
    return found


def _balanced(text: str) -> str:
    depth = 0
    quote = None
    for i, ch in enumerate(text):
        if quote:
            if ch == "\\":
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return text


def parse(line: Line) -> Parsed | None:
    text = line.text
    meta = None
    at = text.find("Finish: obj=")
    brace = text.find("{")
    if at >= 0 and (brace < 0 or at < brace) and is_wrapper(text[:at]):
        meta = _meta_from_text(text[at:])
    elif brace >= 0 and is_wrapper(text[:brace]):
        try:
            doc = json.loads(text[brace:])
        except (ValueError, RecursionError):
            return None
        if isinstance(doc, dict) and doc.get("event") == "request.finished" and isinstance(doc.get("out"), dict):
            meta = doc["out"].get("meta_info")
    if not isinstance(meta, dict):
        return None
    vals = {k: str(meta[k]) for k in _KEYS if k in meta and isinstance(meta[k], (int, float, str))}
    if "spec_verify_ct" not in vals and "spec_accept_length" not in vals:
        return None
    steps = count(vals["spec_verify_ct"], "spec_verify_ct") if "spec_verify_ct" in vals else None
    tokens = count(vals["completion_tokens"], "completion_tokens") if "completion_tokens" in vals else None
    length = num(vals["spec_accept_length"], "spec_accept_length") if "spec_accept_length" in vals else None
    if steps == 0:
        return Parsed()  # a request that never verified a draft
    if steps and tokens is not None:
        if tokens > steps * 64 or tokens < steps:
            raise Impossible(f"absurd numbers: {tokens} completion tokens over {steps} verify steps")
        tau = tokens / steps
        return Parsed(
            rows=[
                row(
                    "sglang-request",
                    drafts=float(steps),
                    drafted=None,
                    accepted=float(tokens - steps),
                    k=None,
                    per_position=(),
                    printed_mean=tau,
                    accepted_throughput=None,
                    drafted_throughput=None,
                    emitted=None,
                    estimated=False,
                )
            ]
        )
    if length is not None:
        if length < 1.0 - 1e-9:
            raise Impossible(f"absurd numbers: spec_accept_length {length} < 1")
        return Parsed(
            rows=[
                row(
                    "sglang-request",
                    drafts=1.0,
                    drafted=None,
                    accepted=length - 1.0,
                    k=None,
                    per_position=(),
                    printed_mean=length,
                    accepted_throughput=None,
                    drafted_throughput=None,
                    emitted=None,
                    estimated=True,
                    per_request=True,
                )
            ]
        )
    return None


FORMAT = Format(
    id="sglang-request",
    engine="sglang",
    label="SGLang request log (`Finish:` meta_info spec_verify_ct / spec_accept_length)",
    meaning="one request; completion_tokens / spec_verify_ct includes the bonus token; drafts-weighted with the "
    "counts, a per-request average with spec_accept_length alone",
    literals=("Finish: obj=", '"request.finished"'),
    parse=parse,
    rate_from_counts=False,  # no Drafted count: per-request figures
    priority=36,
    checks_prefix=True,
    scan_extra=("spec_verify_ct",),
    supersedes=("sglang",),
)
