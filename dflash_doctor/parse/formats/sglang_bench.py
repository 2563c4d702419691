"""SGLang `bench_serving` acceptance figures, in two shapes.

1. The released one (sglang/bench_serving.py, and sglang/benchmark/serving.py from 0.5.15; checked in
   the 0.4.6 … 0.5.23 wheels): one line in the "Serving Benchmark Result" block,

       Accept length:                           2.45

   the server's `avg_spec_accept_length` from /get_server_info: spec_total_num_accepted_tokens /
   spec_total_num_forward_ct of scheduler 0 = (accepted draft tokens + verify steps) / verify steps,
   **bonus included**, **cumulative since the server started** (or since its last internal-state
   update), so it mixes warm-up and earlier runs in. Drafts-weighted, but its weight is not printed.

2. The block of sglang PR #16694 (2026-01, closed, never in a release), vLLM's layout with two lengths:

       ---------------Speculative Decoding---------------
       Acceptance rate (%):                     69.73
       Acceptance length (server):              3.09
       Acceptance length (benchmark):           3.09
       Draft tokens:                            8187
       Accepted tokens:                         5709
       Drafts:                                  2729

   `(server)` is the cumulative server figure of shape 1; `(benchmark)` is this run's: 1 + Accepted
   tokens / Drafts (Accepted tokens **exclude** the bonus: 5709/2729 = 2.09 + 1 = 3.09). Both lengths
   include the bonus token. The benchmark one (from the counts when printed) is the figure comparable
   to vLLM's τ and is used; the server one is kept as an alternative.
"""

from __future__ import annotations

import re

from ._common import BadLine, Format, Line, N, Parsed, block_fields, num
from .vllm_bench import finish_summaries, to_row

KEYS = re.compile(
    r"(?P<key>Acceptance rate \(%\)|Acceptance length \((?P<which>server|benchmark)\)|Acceptance length"
    r"|Accept length|Drafts|Draft tokens|Accepted tokens):\s*(?P<v>" + N + r")?\s*$"
)
_FIELD = {"Acceptance rate (%)": "rate", "Drafts": "drafts", "Draft tokens": "drafted", "Accepted tokens": "accepted"}


def parse(line: Line) -> Parsed | None:
    matches, consumed = block_fields(line, KEYS)
    keys = {m["key"] for m in matches}
    server_line = "Accept length" in keys
    if not server_line and not any(m["which"] for m in matches):
        return None  # vLLM's own block (vllm_bench)
    f: dict = {"pos": {}}
    alts = []
    for m in matches:
        if m["v"] is None:
            raise BadLine(f"SGLang bench line without a value: {m['key']}")
        if m["which"] == "server" or m["key"] == "Accept length":
            server = num(m["v"], "the server acceptance length")
            alts.append(
                {
                    "figure": "acceptance length (server)",
                    "value": server,
                    "meaning": "the server's cumulative average since it started (bonus included); not this "
                    "run's: kept, not used"
                    if not server_line
                    else "the server's cumulative average since it started (bonus included)",
                }
            )
            if server_line:
                f["mean"] = m["v"]
        elif m["which"] == "benchmark" or m["key"] == "Acceptance length":
            f["mean"] = m["v"]
        else:
            f[_FIELD[m["key"]]] = m["v"]
    if server_line and len(keys) == 1:
        p = to_row("sglang-bench-server-avg", f, "an SGLang `Accept length` line")
        p.missing = ""  # (this shape never printed counts: nothing is missing from it)
        for rec in p.defer:
            rec["missing"] = ""
        p.notes = (
            "SGLang bench_serving's `Accept length` is the server's average since it started (earlier "
            "runs and warm-up included), not this run's; its weight is not printed",
        )
    else:
        p = to_row("sglang-bench-serving", f, "an SGLang bench_serving Speculative Decoding block")
    p.consumed = consumed
    p.alternatives = tuple(alts) if not server_line or len(keys) > 1 else ()
    return p


FORMAT = Format(
    id="sglang-bench-serving",
    engine="sglang",
    label="SGLang `bench_serving` acceptance (block of PR #16694, or the released `Accept length` line)",
    meaning="whole run; both lengths include the bonus token; the benchmark length (1 + Accepted tokens / Drafts) is "
    "used, the server one (cumulative since start) kept",
    literals=("Acceptance rate (%)", "Acceptance length (", "Accept length:", "Accepted tokens:"),
    parse=parse,
    rate_from_counts=False,  # SGLang's summary prints its own acceptance rate; not summed with the counts of others
    priority=55,
    block=True,
    finish=finish_summaries,
    variants=("sglang-bench-serving", "sglang-bench-server-avg"),
)
