"""How the fast route finds each format's lines in a large file: its grep literals, the grep pass they
belong to, and whether the host's remote filter keeps them.

The grep rule: GNU grep's multi-literal search skips ahead with memchr2 on the literals' first bytes,
which only works when a pass's literals start with **at most two distinct bytes**, and only pays when
those bytes are rare in log text. So each pass's literals start with at most two distinct bytes, none a
lowercase letter, digit or whitespace (measurements: docs/log-formats.md, "The grep route"). A literal
that cannot follow the rule goes to a pass of its own (run only when a sample of the file holds one of
the pass's markers or literals, or when the main pass found nothing) or is looked for at the file's ends
only (`edges`). A pass of its own may break the first-byte rule only where its route says why (`slow`).

The grep route must find every line the streamed route reads: a line format's grep literals must cover
its literals (each literal holds one of them), or files of 64 MiB and more would count fewer lines than
smaller ones. `validate` enforces both at import time.

A format not listed here (a client tool's summary block, printed at the end of its run) is looked for
near the file's ends: adding a format module needs an entry here only when its lines can be anywhere
in a large file.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import formats as F
from ..formats import FormatRegistryError
from ..formats._common import Format
from ..formats.sglang_client import AVERAGE, QUESTIONS

MAIN_PASS = "main"
_COMMON_FIRST_BYTES = set("abcdefghijklmnopqrstuvwxyz0123456789 \t")


@dataclass(frozen=True)
class Route:
    """One format's route through a large file."""

    grep: tuple[str, ...] = ()  # literals for its grep pass
    grep_pass: str = MAIN_PASS
    markers: tuple[str, ...] = ()  # text in a file's sample that selects the pass (its grep literals do too)
    slow: str = ""  # why a pass of its own may use a literal with a common first byte
    edges: bool = False  # looked for only near the file's ends (a script's last output)
    server: bool = False  # printed in a serving engine's log: the host's remote filter keeps its main-pass lines


EDGES = Route(edges=True)

ROUTES: dict[str, Route] = {
    "vllm-v1": Route(grep=("SpecDecoding metrics",), server=True),
    "vllm-v0": Route(grep=("Speculative metrics",), server=True),
    "sglang": Route(grep=("Decode batch",), server=True),
    "trtllm-iteration-stats": Route(grep=("DecodingStats",)),
    "trtllm-bench": Route(grep=("DECODING STATISTICS", "Details ---")),
    "vllm-bench-serve": Route(grep=("Speculative Decoding", "Draft tokens:")),
    "sglang-bench-serving": Route(grep=("Speculative Decoding", "Draft tokens:", "Serving Benchmark")),
    "vllm-offline-example": Route(grep=("Speculative Decoding",), edges=True),
    "generic-kv": EDGES,
    # its own line selects the pass too: an excerpt holding only statistics lines has no loader lines in its head
    "llamacpp-statistics": Route(
        grep=("#calls(b,g,a)",), grep_pass="llama.cpp", markers=("#calls(b,g,a)",), server=True
    ),
    "llamacpp-print-timing": Route(
        # (the lead is optional: releases that log the line through SLT_INF with a leading "\n" or through
        # SLT_CNT print `draft acceptance rate = …` alone on its line, so no fast literal is in every line)
        grep=("draft acceptance",),
        grep_pass="llama.cpp",
        slow="the line can stand alone (`draft acceptance rate = …` after a newline or as a log continuation)",
        markers=("llama_model_loader", "llama_context", "llama-server", "srv  ", "slot ", "common_init_from_params"),
        server=True,
    ),
    # (the main pass's literal of the bench blocks: it is in every ATOM line too; not in the host's remote filter:
    # adding it changes the filter command every recorded host bundle replays; `logs`/`diagnose` read ATOM logs)
    "atom-stats": Route(grep=("Draft tokens:",)),
    # ('_' is no letter: grep's skip-ahead stays fast; a pass of its own anyway)
    "fastllm": Route(
        grep=("_accept_rate=[",), grep_pass="fastllm", markers=("MTP] enabled:", "] pos_accept_rate=["), server=True
    ),
    "sglang-bench-client": Route(grep=(QUESTIONS, AVERAGE), grep_pass="bench-client", markers=(QUESTIONS, AVERAGE)),
    "sglang-request": Route(
        grep=("Finish: obj", '"request.finished"'),
        grep_pass="sglang-requests",
        markers=("'spec_verify_ct'", '"spec_verify_ct"'),
        server=True,
    ),
}


def route(fmt: Format, routes: dict[str, Route] | None = None) -> Route:
    return (ROUTES if routes is None else routes).get(fmt.id, EDGES)


def validate(formats: list[Format] | tuple[Format, ...], routes: dict[str, Route] | None = None) -> None:
    """Refuse a route the grep pre-filter could not follow fast, or that would miss lines the streamed
    route reads (FormatRegistryError says which literal and why)."""
    passes: dict[str, list[tuple[str, str]]] = {}
    for f in formats:
        r = route(f, routes)
        if not r.grep and not r.edges:
            raise FormatRegistryError(
                f"format {f.id}: no grep literal and not edges: files of 64 MiB and more would silently miss it"
            )
        for lit in r.grep:
            _check_literal(f, r, lit)
            passes.setdefault(r.grep_pass, []).append((lit, f.id))
        if r.grep and not f.block:
            for lit in f.literals:
                if not any(g in lit for g in r.grep):
                    raise FormatRegistryError(
                        f"format {f.id}: the streamed scanner reads its lines by {lit!r}, which holds none of its grep "
                        f"literals ({', '.join(map(repr, r.grep))}): files of 64 MiB and more (the grep route) would "
                        "miss lines that smaller files count; add a grep literal that every such line holds"
                    )
    for name in passes:
        if name != MAIN_PASS and not any(
            route(f, routes).markers for f in formats if route(f, routes).grep_pass == name
        ):
            raise FormatRegistryError(f"grep pass {name!r} needs markers (what in a file's sample selects it)")
    for name, lits in passes.items():
        first = sorted({lit[0] for lit, _ in lits})
        if len(first) > 2:
            raise FormatRegistryError(
                f"grep pass {name!r}: its literals start with {len(first)} distinct bytes "
                f"({' '.join(map(repr, first))}: "
                + ", ".join(f"{lit!r} ({fid})" for lit, fid in lits)
                + "); GNU grep skips ahead fast only with at most two: start the new literal with one of the others' "
                "first bytes, or give it a pass of its own"
            )


def _check_literal(f: Format, r: Route, lit: str) -> None:
    if not lit:
        raise FormatRegistryError(f"format {f.id}: an empty grep literal")
    if lit[0] in _COMMON_FIRST_BYTES and not (r.slow and r.grep_pass != MAIN_PASS):
        raise FormatRegistryError(
            f"format {f.id}: grep literal {lit!r} starts with {lit[0]!r}, a byte common in log text (a lowercase "
            "letter, digit or whitespace): GNU grep's memchr2 skip would stop at nearly every byte; choose a part "
            "of the line that starts with an uppercase letter or punctuation, or use a pass of its own (with slow "
            "saying why no such part exists), or edges"
        )


def _passes(formats) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    out: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for f in formats:
        r = route(f)
        if not r.grep:
            continue
        lits, marks = out.get(r.grep_pass, ((), ()))
        # a pass's own literals always select it: a file holding one of its lines needs it, whatever else it lacks
        out[r.grep_pass] = (tuple(dict.fromkeys(lits + r.grep)), tuple(dict.fromkeys(marks + r.grep + r.markers)))
    return out


validate(F.FORMATS)
# The grep passes: (literals, markers) each; a pass other than MAIN_PASS runs when its markers are in the
# file's sample (or when the main pass found nothing).
GREP_PASSES = _passes(F.FORMATS)
EDGE_FORMATS = tuple(f for f in F.FORMATS if route(f).edges)
# Block formats' grep literals: a hit on one is read with the block's window around it.
BLOCK_HINTS = tuple(dict.fromkeys(lit for f in F.FORMATS if f.block and not route(f).edges for lit in route(f).grep))
# The line formats' own grep literals: a line holding one was grep's (and is no summary block's).
LINE_LITERALS = tuple(dict.fromkeys(lit for f in F.FORMATS if not f.block for lit in route(f).grep))
# The host's remote filter (one `grep -F` over the whole log on the host, collect/host/scripts.py) keeps the lines a
# serving engine prints (client tools' summaries are not in a server's log). One grep, so the same first-byte
# rule: the main pass's literals of the server formats. (llama.cpp's and SGLang's request-log lines, in
# passes of their own, are not filtered on the host: read such logs with `logs`/`diagnose`.)
SERVER_LITERALS: tuple[str, ...] = tuple(
    dict.fromkeys(x for f in F.FORMATS if route(f).server and route(f).grep_pass == MAIN_PASS for x in route(f).grep)
)
