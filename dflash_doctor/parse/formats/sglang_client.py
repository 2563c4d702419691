"""SGLang benchmark-client acceptance lines: the scripts people run against an SGLang server to measure a
drafter, which print one acceptance length for the whole run.

1. SGLang's own frontend benchmarks (benchmark/mtbench/bench_sglang_eagle.py and the scripts copied from it,
   read in the sgl-project/sglang repository):

       #questions: 80, Throughput: 1234.56 token/s, Acceptance length: 3.21

   `Acceptance length` = Σ completion_tokens / Σ spec_verify_ct over every answer of the run (the
   `meta_info` SGLang returns per request): tokens per verify step, **bonus included** (a verify step
   emits its accepted drafts plus one), a ratio of sums, so **drafts-weighted** over the **whole run**.
   completion_tokens also counts each request's first token, which the prefill produced without a
   verify step, so the figure sits above the server's own τ by about requests / verify steps (a few
   hundredths on long answers). No count is printed, so its weight is unknown. Copies of the script
   that also print `num_output_tokens` and `num_verify_tokens` give the counts: then τ is their ratio
   and the drafts (verify steps) are exact.

2. SpecForge's benchmark driver (sgl-project/SpecForge benchmarks/benchmarker/utils.py, `print_results`,
   used by bench_eagle3.py / bench_dflash.py against an SGLang server):

       ==================================================
       mtbench Evaluation Results
       ==================================================
       Number of questions: 80
       Average Latency: 51.234 s
       Average Output throughput: 1234.567 token/s
       Average Accept length: 3.210
       ==================================================

   `Average Accept length` = the plain mean over the benchmark's runs of the figure of shape 1 for each
   run (`compute_metrics`: Σ completion_tokens / Σ spec_verify_ct): **bonus included**, drafts-weighted
   within a run, runs weighted equally (they repeat the same questions). Weight unknown.

Both are read as a printed τ whose weight is unknown (standing `estimated`, one unit of weight): a whole-run
figure, neither a per-request average nor an interval. k is not printed: it comes from the launch or the
server's startup lines.
"""

from __future__ import annotations

import re

from ._common import BadLine, Format, Impossible, Line, N, Parsed, count, num, row

QUESTIONS = "#questions:"
AVERAGE = "Average Accept length:"
_QUESTIONS = re.compile(r"#questions:\s*(?P<n>\d+)\s*,(?P<body>.*?)\bAcceptance length:\s*(?P<len>" + N + r")\s*$")
_FIELD = re.compile(r"(?P<key>num_output_tokens|num_verify_tokens)\s*:\s*(?P<v>" + N + r")")
_AVERAGE = re.compile(r"Average Accept length:\s*(?P<len>" + N + r")\s*$")


def _printed(fmt: str, length: float) -> dict:
    """A whole-run τ whose weight was not printed: one unit of weight, said to be an estimate."""
    return row(
        fmt,
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


def _questions(msg: str) -> Parsed:
    m = _QUESTIONS.match(msg)
    if not m:
        raise BadLine("looks like an SGLang benchmark `#questions:` line but does not parse (cut short?)")
    length = num(m["len"], "the acceptance length")
    if length < 1.0 - 1e-9:
        raise Impossible(f"absurd numbers: acceptance length {length} < 1")
    fields = {f["key"]: f["v"] for f in _FIELD.finditer(m["body"])}
    if "num_output_tokens" in fields and "num_verify_tokens" in fields:
        out = count(fields["num_output_tokens"], "num_output_tokens")
        steps = count(fields["num_verify_tokens"], "num_verify_tokens")
        if steps == 0 or out < steps:
            raise Impossible(f"absurd numbers: {out} output tokens over {steps} verify steps")
        if abs(round(out / steps, 2) - round(length, 2)) > 0.011:
            raise Impossible(f"absurd numbers: acceptance length {length} is not {out}/{steps}")
        r = _printed("sglang-bench-client", out / steps)
        r.update(drafts=float(steps), accepted=float(out - steps), estimated=False)
        return Parsed(rows=[r])
    return Parsed(
        rows=[_printed("sglang-bench-client", length)],
        notes=(
            "SGLang benchmark client: `Acceptance length` is Σ completion tokens / Σ verify steps over the run "
            "(bonus included; each request's prefill token adds a little); its weight is not printed",
        ),
    )


def parse(line: Line) -> Parsed | None:
    msg = line.msg
    if msg.startswith(QUESTIONS):
        if "Acceptance length" not in msg:
            return None  # a run without speculative decoding prints no length
        return _questions(msg)
    m = _AVERAGE.match(msg)
    if not m:
        raise BadLine("looks like a SpecForge `Average Accept length:` line but does not parse (cut short?)")
    length = num(m["len"], "the average accept length")
    if length < 1.0 - 1e-9:
        raise Impossible(f"absurd numbers: accept length {length} < 1")
    return Parsed(
        rows=[_printed("specforge-bench", length)],
        notes=(
            "SpecForge benchmark: `Average Accept length` is the mean over the runs of Σ completion tokens / Σ "
            "verify steps (bonus included); its weight is not printed",
        ),
    )


FORMAT = Format(
    id="sglang-bench-client",
    engine="sglang",
    label="SGLang benchmark client (`#questions: … Acceptance length:`, SpecForge `Average Accept length:`)",
    meaning="whole run; tokens per verify step = Σ completion tokens / Σ spec_verify_ct, bonus included (plus each "
    "request's prefill token); drafts-weighted within the run, weight not printed (SpecForge: the mean over runs)",
    literals=(QUESTIONS, AVERAGE),
    parse=parse,
    priority=52,  # before vllm-bench-serve, whose block literal `Acceptance length:` is in the `#questions` line
    candidate_in_line=True,  # `Acceptance length` / `Accept length`
    variants=("sglang-bench-client", "specforge-bench"),
)
