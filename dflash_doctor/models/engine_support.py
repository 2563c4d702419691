"""Look up what an engine release does with drafters, from the data table in engine_support.toml.

Rows are ranges of releases, compared on the numeric release (versions.release_of): 0.20.1+cu129 and
0.22.0rc1 fall in the rows of 0.20.1 and 0.22.0."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from ..evidence.engine_facts import EngineSupport
from ..versions import VersionError, release_of

if TYPE_CHECKING:
    from ..schema import EngineRow


@lru_cache(maxsize=1)
def load_table() -> tuple[EngineRow, ...]:
    from ..schema import EngineSupportTable, convert, parse_toml  # msgspec: not at start-up

    raw = resources.files("dflash_doctor.models").joinpath("engine_support.toml").read_bytes()
    rows = convert(parse_toml(raw, "engine_support.toml"), EngineSupportTable, "engine_support.toml").row
    for i, r in enumerate(rows):
        for bound in ("min", "max"):
            try:
                release_of(getattr(r, bound))
            except VersionError as exc:
                raise ValueError(f"engine_support.toml: row[{i}].{bound}: {exc}") from None
    return rows


def lookup(engine: str, version: str | None) -> EngineSupport | None:
    """The table row for this engine release, or None when the engine or version is not covered."""
    if not version:
        return None
    try:
        v = release_of(version)
    except VersionError:
        return None
    for r in load_table():
        if r.engine == engine.lower() and release_of(r.min) <= v <= release_of(r.max):
            return EngineSupport(
                engine=r.engine,
                version=version,
                range=f"{r.min}–{r.max}",
                dflash=r.dflash,
                layer_map=r.layer_map or None,
                drafter_swa=r.drafter_swa or None,
                eagle3_aux=r.eagle3_aux,
                verified=r.verified or None,
                source=" ".join(r.source.split()),
                notes=r.notes,
                dflash2=r.dflash2,
                causal=r.causal or None,
                v2_dflash=r.v2_dflash,
                runner_unset=r.runner_unset or None,
                runner_default=r.runner_default or None,
                mixed_forces_v2=r.mixed_forces_v2,
                dflash2_forces_v2=r.dflash2_forces_v2,
                v1_rejects_mixed=r.v1_rejects_mixed,
                mixed_error=r.mixed_error or None,
                v1_error=r.v1_error or None,
                v2_error=r.v2_error or None,
            )
    return None


def first_release(engine: str, what: str) -> str | None:
    """The first release in the table that serves `what`: "dflash" (any DFlash), "mixed" (a mixed
    sliding/full DFlash drafter), "DFlash2DraftModel" (a DFlash2 drafter)."""
    rows = sorted((r for r in load_table() if r.engine == engine.lower()), key=lambda r: release_of(r.min))
    for r in rows:
        if not r.dflash:
            continue
        if what == "mixed" and r.drafter_swa not in ("v2-runner", "honoured"):
            continue
        if what == "DFlash2DraftModel" and not r.dflash2:
            continue
        return r.min
    return None
