"""The format registry: every module in this package is one engine output format (its literals, its
line or block parser, its row builder, and a docstring saying what its numbers mean). Adding a
format is adding a module that defines `FORMAT`; nothing else lists them.

The streamed scanner derives what it searches for from here (`CANDIDATE` + `SCAN_EXTRA`, and
`BLOCK_LITERALS` for the block logic); the fast route's grep routing is its own (fast/routes.py).
`validate` refuses, at import time, a format the streamed scanner would never see.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._common import Format

CANDIDATE = "ccept"  # in every metrics line and block of the known formats (acceptance / Accepted / accept len)


class FormatRegistryError(ValueError):
    pass


def validate(formats: list[Format]) -> None:
    ids = [f.id for f in formats]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise FormatRegistryError(f"format ids used twice: {', '.join(sorted(dup))}")
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

__all__ = [
    "FORMATS",
    "BY_ID",
    "BY_FMT",
    "CANDIDATE",
    "SCAN_EXTRA",
    "BLOCK_LITERALS",
    "Format",
    "FormatRegistryError",
    "validate",
]
