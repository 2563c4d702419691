"""One reader per drafter config family, tried in order; the first whose `matches` holds reads it.

Every reader returns a `Reading`; `models.facts` turns it into the same typed `DrafterFacts`
(shape, RoPE, layers, weights and model card are read the same way for every family).
"""

from __future__ import annotations

from . import dflash, eagle1, eagle3, medusa, mtp, speculators
from .base import Reading
from .fields import Fields

# Order matters: a speculators config can name DFlashDraftModel; an MTP target may carry eagle fields.
FAMILIES = (speculators, dflash, medusa, mtp, eagle3, eagle1)


def read_drafter(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    for family in FAMILIES:
        if family.matches(cfg, archs):
            return family.read(cfg, f, archs)
    r = Reading(family="unknown", method=_guess_method(archs), shape=cfg)
    r.notes.append(
        f"no reader knows architectures {list(archs) or '(none)'}: shape fields read as a plain decoder config"
    )
    return r


def _guess_method(archs: tuple[str, ...]) -> str:
    low = " ".join(archs).lower()
    for word, method in (("dflash", "dflash"), ("eagle", "eagle"), ("medusa", "medusa")):
        if word in low:
            return method
    return "unknown"


__all__ = ["FAMILIES", "Fields", "Reading", "read_drafter"]
