"""SGLang's server-side running acceptance length, `avg_spec_accept_length`, as users paste it.

The scheduler answers `GET /get_server_info` (`/server_info`) with `internal_states`, one entry per data-parallel
rank, each carrying `avg_spec_accept_length` = cum_spec_accept_length / cum_spec_accept_count (later releases:
metrics_reporter.spec_total_num_accept_tokens / spec_total_num_forward_ct; `Scheduler.get_internal_state` in
python/sglang/srt/managers/scheduler.py): the tokens each verify step committed — **bonus included** — summed over
every verify step **since the server started**, divided by the verify steps: **cumulative** and
**drafts-weighted** (by verify steps) over the server's whole life, warm-up included. SGLang's own tests and
benchmark scripts print it as `avg_spec_accept_length=2.84` (an f-string's `=` form, also logged by the scheduler)
or as the JSON field `"avg_spec_accept_length": 2.84`; bench_serving reads it for its `Accept length:` row.

No count is printed: each figure is a printed τ of unknown weight. Several figures (one per DP rank, as SGLang's
tests average them) are each one unit of weight. k is not printed.
"""

from __future__ import annotations

import re

from ._common import BadLine, Foreign, Format, Impossible, Line, N, Parsed, is_wrapper, num, row

LITERAL = "avg_spec_accept_length"
_VALUE = re.compile(r"avg_spec_accept_length\"?\s*[=:]\s*(?P<v>" + N + r"|None|null)")
# what may stand before the literal besides wrappers: JSON structure and other fields of the same document
# (`{"internal_states": [{"last_gen_throughput": 120.5, "`), or other `name=value` prints of the same line
_JSON_LEAD = re.compile(
    r"""^\s*(?:[{\[,]\s*|"[\w .-]{1,64}"\s*:\s*(?:-?[\d.eE+-]+|"[^"\n]{0,200}"|true|false|null)?\s*)*"$"""
)
_KV_LEAD = re.compile(r"^(?:\s*[A-Za-z_]\w{0,63}=[^\s,]{1,64},?)*\s*$")


def _own(prefix: str) -> bool:
    """The literal starts a field of SGLang's own answer or print: wrappers, JSON structure or name=value before."""
    if is_wrapper(prefix):
        return True
    # a wrapper (a log header, a timestamp) may precede the document or the prints
    for rx in (_JSON_LEAD, _KV_LEAD):
        for cut in range(len(prefix) + 1):
            if rx.match(prefix[cut:]) and (cut == 0 or is_wrapper(prefix[:cut])):
                return True
    return False


def parse(line: Line) -> Parsed | None:
    prefix = line.text[: line.pos]
    if len(prefix) > 400 or not _own(prefix):
        raise Foreign(f"`{LITERAL}` inside other words: not SGLang's own figure")
    m = _VALUE.match(line.msg)
    if not m:
        raise BadLine(f"looks like SGLang's `{LITERAL}` but no value follows (cut short?)")
    if m["v"] in ("None", "null"):
        return Parsed(notes=(f"SGLang's `{LITERAL}` is empty (no verify step yet, or speculation off)",))
    length = num(m["v"], "the average accept length")
    if length < 1.0 - 1e-9:
        raise Impossible(f"absurd numbers: accept length {length} < 1 (it includes the bonus token)")
    r = row(
        "sglang-server-info",
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
    )
    return Parsed(
        rows=[r],
        notes=(
            f"SGLang `{LITERAL}`: tokens per verify step (bonus included) since the server started, warm-up "
            "included; its weight is not printed (one figure per data-parallel rank)",
        ),
    )


FORMAT = Format(
    id="sglang-server-info",
    engine="sglang",
    label="SGLang server info `avg_spec_accept_length` (get_server_info internal_states, or its printed form)",
    meaning="cumulative since the server started; tokens per verify step, bonus included; drafts-weighted (by "
    "verify steps) over the server's life; weight not printed",
    literals=(LITERAL,),
    parse=parse,
    priority=53,
    checks_prefix=True,  # a JSON answer or a name=value print: parse judges where the figure starts
    candidate_in_line=True,
)
