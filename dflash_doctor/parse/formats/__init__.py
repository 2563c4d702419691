"""The format registry: every module in this package is one engine output format (its literals, its
line or block parser, its row builder, and a docstring saying what its numbers mean). Adding a
format is adding a module that defines `FORMAT`; nothing else lists them.

Everything that searches logs derives its literals from here: the streamed scanner (`CANDIDATE` +
`SCAN_EXTRA`), the grep pre-filter (`GREP_PASSES`), the host's remote filter (`SERVER_LITERALS`) and
the block logic (`BLOCK_LITERALS`).

The grep rule (measured on a 1 GiB vLLM log, grep 3.8, `grep -F -c` piped, best of 3; load ~4 on 2
cores): GNU grep's multi-literal search skips ahead with memchr2 on the literals' first bytes, which
only works when they start with **at most two distinct bytes**, and only pays when those bytes are
rare in log text. The five literals starting with S or D: 0.36 s (`SpecDecoding metrics` alone: 0.42 s);
adding a third first byte, even a rare one (`Xyzzy`, `#calls`, `Finish`): 0.59-0.70 s; two first bytes
of which one is a lowercase letter (`d`): 0.86 s, both lowercase (`e`, `t`): 1.40 s, a space: 1.11 s;
`|` and `#` together: 0.25 s, `[`: 0.40 s. So each grep pass's literals must start with at most two
distinct bytes, none a lowercase letter, digit or whitespace; a literal that cannot follow the rule
goes to a pass of its own (run only when a sample of the file holds one of the pass's markers or
literals, or when the main pass found nothing: prefilter.selection_sample) or is looked for at the
file's ends only (`grep_edges`). A pass of its own may break the first-byte rule only where the format
says why (`grep_slow`: no fast part is in every line; only files that select the pass pay for it).

The grep route must find every line the streamed route reads: a line format's grep literals must
cover its literals (each literal holds one of them), or files of 64 MiB and more would count fewer
lines than smaller ones. `validate` enforces both at import time; `FormatRegistryError` says which
literal broke them and why.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._common import Format

CANDIDATE = "ccept"  # in every metrics line and block of the known formats (acceptance / Accepted / accept len)
MAIN_PASS = "main"
_COMMON_FIRST_BYTES = set("abcdefghijklmnopqrstuvwxyz0123456789 \t")


class FormatRegistryError(ValueError):
    pass


def validate(formats: list[Format]) -> None:
    ids = [f.id for f in formats]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise FormatRegistryError(f"format ids used twice: {', '.join(sorted(dup))}")
    passes: dict[str, list[tuple[str, str]]] = {}
    for f in formats:
        if not f.literals:
            raise FormatRegistryError(f"format {f.id}: no literals")
        for lit in f.literals:
            if CANDIDATE not in lit and not f.scan_extra and not f.candidate_in_line:
                raise FormatRegistryError(
                    f"format {f.id}: literal {lit!r} holds no {CANDIDATE!r}, so the streamed scanner would never see "
                    f"its lines; name a literal its lines always hold in scan_extra, or set candidate_in_line when "
                    f"they always hold {CANDIDATE!r} elsewhere"
                )
        if not f.grep and not f.grep_edges:
            raise FormatRegistryError(
                f"format {f.id}: no grep literal and not grep_edges: files of 64 MiB and more would silently miss it"
            )
        for lit in f.grep:
            if not lit:
                raise FormatRegistryError(f"format {f.id}: an empty grep literal")
            if lit[0] in _COMMON_FIRST_BYTES and not (f.grep_slow and f.grep_pass != MAIN_PASS):
                raise FormatRegistryError(
                    f"format {f.id}: grep literal {lit!r} starts with {lit[0]!r}, a byte common in log text (a lowercase "
                    "letter, digit or whitespace): GNU grep's memchr2 skip would stop at nearly every byte (measured "
                    "0.86-1.40 s instead of 0.36 s on 1 GiB); choose a part of the line that starts with an uppercase "
                    "letter or punctuation, or use a pass of its own (with grep_slow saying why no such part exists), "
                    "or grep_edges"
                )
            passes.setdefault(f.grep_pass, []).append((lit, f.id))
        if f.grep and not f.block:
            for lit in f.literals:
                if not any(g in lit for g in f.grep):
                    raise FormatRegistryError(
                        f"format {f.id}: the streamed scanner reads its lines by {lit!r}, which holds none of its grep "
                        f"literals ({', '.join(map(repr, f.grep))}): files of 64 MiB and more (the grep route) would miss "
                        "lines that smaller files count; add a grep literal that every such line holds"
                    )
    for name in passes:
        if name != MAIN_PASS and not any(f.grep_markers for f in formats if f.grep_pass == name):
            raise FormatRegistryError(f"grep pass {name!r} needs grep_markers (what in a file's head selects it)")
    for name, lits in passes.items():
        first = sorted({lit[0] for lit, _ in lits})
        if len(first) > 2:
            raise FormatRegistryError(
                f"grep pass {name!r}: its literals start with {len(first)} distinct bytes ({' '.join(map(repr, first))}: "
                + ", ".join(f"{lit!r} ({fid})" for lit, fid in lits)
                + "); GNU grep skips ahead fast only with at most two (measured 0.59-0.70 s instead of 0.36 s with a "
                "third): start the new literal with one of the others' first bytes, or give it a pass of its own"
            )


def _discover() -> tuple[Format, ...]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        fmt = getattr(mod, "FORMAT", None)
        if not isinstance(fmt, Format):
            raise FormatRegistryError(f"module formats/{info.name}.py defines no FORMAT")
        found.append(fmt)
    found.sort(key=lambda f: (f.priority, f.id))
    validate(found)
    return tuple(found)


FORMATS: tuple[Format, ...] = _discover()
BY_ID = {f.id: f for f in FORMATS}
BY_FMT = {v: f for f in FORMATS for v in f.fmt_ids}

# The streamed scanner: one pass for CANDIDATE, and per chunk a count of each extra literal (lines
# holding one but not CANDIDATE: cut lines, formats without the word).
SCAN_EXTRA: tuple[str, ...] = tuple(dict.fromkeys(x for f in FORMATS for x in f.scan_extra))
BLOCK_LITERALS: tuple[str, ...] = tuple(
    dict.fromkeys(lit for f in FORMATS if f.block for lit in f.literals if f.standing == "engine")
)
# The grep pre-filter: literal sets, one grep pass each; a pass other than MAIN_PASS runs when its markers
# are in the file's head (or when the main pass found nothing).
GREP_PASSES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
for _f in FORMATS:
    lits, marks = GREP_PASSES.get(_f.grep_pass, ((), ()))
    # a pass's own literals always select it: a file holding one of its lines needs it, whatever else it lacks
    GREP_PASSES[_f.grep_pass] = (
        tuple(dict.fromkeys(lits + _f.grep)),
        tuple(dict.fromkeys(marks + _f.grep + _f.grep_markers)),
    )
EDGE_FORMATS = tuple(f for f in FORMATS if f.grep_edges)
# The host's remote filter (one `grep -F` over the whole log on the host, collect/host/scripts.py) keeps the lines a
# serving engine prints (client tools' summaries are not in a server's log). One grep, so the same first-byte
# rule: the main pass's literals of the server formats. (llama.cpp's and SGLang's request-log lines, in
# passes of their own, are not filtered on the host: read such logs with `logs`/`diagnose`.)
SERVER_LITERALS: tuple[str, ...] = tuple(
    dict.fromkeys(x for f in FORMATS if f.server and f.grep_pass == MAIN_PASS for x in f.grep)
)

__all__ = [
    "FORMATS",
    "BY_ID",
    "BY_FMT",
    "CANDIDATE",
    "SCAN_EXTRA",
    "BLOCK_LITERALS",
    "GREP_PASSES",
    "EDGE_FORMATS",
    "SERVER_LITERALS",
    "Format",
    "FormatRegistryError",
    "validate",
]
