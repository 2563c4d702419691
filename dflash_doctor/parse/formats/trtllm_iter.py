"""TensorRT-LLM iteration statistics with speculative-decoding counts: the JSON records that
`trtllm-serve`'s /metrics endpoint and `LLM.get_stats()` return (executor `IterationStats`, one per
engine iteration), saved to a file or logged one record per line:

    {"iter": 412, …, "specDecodingStats": {"numDraftTokens": 24, "numAcceptedTokens": 15,
     "numRequestsWithDraftTokens": 8, "acceptanceLength": 2.875, "iterLatencyMS": …, "draftOverhead": …}}

What the numbers mean (executor/types.h, `SpecDecodingStats`): **per iteration**; numDraftTokens =
draft tokens proposed, numAcceptedTokens = accepted draft tokens (**bonus excluded**),
numRequestsWithDraftTokens = requests that carried drafts in the iteration (the drafts);
acceptanceLength = (accepted + requests) / requests, **bonus included**, vLLM's τ for that
iteration. **Drafts-weighted**: iterations are summed by their counts. Only a record's own top-level
`specDecodingStats` object counts (a JSON string that merely contains the words does not), in a record of
IterationStats' form: an `iter` number and no field IterationStats does not have (a gateway logging a request
body that carries a `specDecodingStats` key is not the engine; an unknown field is reported, not read).
A pretty-printed (multi-line) JSON document is not read line by line: save it with one record per line.
(trtllm-serve returns these from its /metrics endpoint; they are not in its log by default.)
"""

from __future__ import annotations

import json

from ._common import BadLine, Foreign, Format, Impossible, Line, Parsed, count, is_wrapper, row

LITERAL = "specDecodingStats"
# The fields of an IterationStats record (executor/types.h IterationStats, its JSON serialisation, and the
# PyTorch backend's additions).
ITERATION_FIELDS = frozenset(
    {
        "timestamp",
        "iter",
        "iterLatencyMS",
        "gpuForwardTimeMS",
        "newActiveRequestsQueueLatencyMS",
        "numNewActiveRequests",
        "numActiveRequests",
        "numQueuedRequests",
        "numCompletedRequests",
        "maxNumActiveRequests",
        "maxBatchSizeStatic",
        "maxBatchSizeTunerRecommended",
        "maxBatchSizeRuntime",
        "maxNumTokensStatic",
        "maxNumTokensTunerRecommended",
        "maxNumTokensRuntime",
        "gpuMemUsage",
        "cpuMemUsage",
        "pinnedMemUsage",
        "kvCacheStats",
        "crossKvCacheStats",
        "staticBatchingStats",
        "inflightBatchingStats",
        "specDecodingStats",
        "attentionDpRank",
    }
)


def _iteration_form(rec: dict) -> bool:
    return isinstance(rec.get("iter"), int) and set(rec) <= ITERATION_FIELDS


def _records(text: str):
    start = text.find("{")
    arr = text.find("[")
    if arr >= 0 and (start < 0 or arr < start):
        start = arr
    if start < 0 or not is_wrapper(text[:start]):
        return None
    try:
        doc = json.loads(text[start:])
    except (ValueError, RecursionError):
        raise BadLine(
            "a TensorRT-LLM iteration-stats record that is not valid JSON (cut short, or pretty-printed "
            "over several lines)"
        ) from None
    recs = doc if isinstance(doc, list) else [doc]
    return [r for r in recs if isinstance(r, dict)]


def parse(line: Line) -> Parsed | None:
    recs = _records(line.text)
    if recs is None:
        return None
    rows = []
    for rec in recs:
        spec = rec.get("specDecodingStats")
        if not isinstance(spec, dict):
            continue
        if not _iteration_form(rec):
            raise Foreign("a record holding specDecodingStats that is not an IterationStats record")
        try:
            dft = count(str(spec["numDraftTokens"]), "numDraftTokens")
            acc = count(str(spec["numAcceptedTokens"]), "numAcceptedTokens")
            req = count(str(spec["numRequestsWithDraftTokens"]), "numRequestsWithDraftTokens")
        except KeyError as exc:
            raise BadLine(f"a specDecodingStats record without {exc.args[0]}") from None
        if dft == 0 or req == 0:
            continue  # an iteration without drafts
        if acc > dft:
            raise Impossible(f"absurd numbers: numAcceptedTokens {acc} > numDraftTokens {dft}")
        k = dft // req if dft % req == 0 else None
        rows.append(
            row(
                "trtllm-iteration-stats",
                drafts=float(req),
                drafted=dft,
                accepted=acc,
                k=k,
                per_position=(),
                printed_mean=1.0 + acc / req,
                accepted_throughput=None,
                drafted_throughput=None,
                emitted=None,
                estimated=False,
            )
        )
    if not rows and not any(isinstance(r.get("specDecodingStats"), dict) for r in recs):
        return None  # the word inside some other JSON (a prompt, an argument): not a stats record
    return Parsed(rows=rows)


FORMAT = Format(
    id="trtllm-iteration-stats",
    engine="tensorrt-llm",
    label="TensorRT-LLM iteration stats (`specDecodingStats` JSON records)",
    meaning="per iteration; numAcceptedTokens excludes the bonus token; drafts = numRequestsWithDraftTokens; "
    "drafts-weighted",
    literals=(LITERAL,),
    parse=parse,
    priority=40,
    checks_prefix=True,
    candidate_in_line=True,  # numAcceptedTokens
)
