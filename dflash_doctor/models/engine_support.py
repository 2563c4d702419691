"""Look up what an engine release does with drafters, from the data table in engine_support.toml.

Rows are ranges of releases, compared on the numeric release (versions.release_of): 0.20.1+cu129 and
0.22.0rc1 fall in the rows of 0.20.1 and 0.22.0."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import tomllib

from ..evidence.engine_facts import EngineSupport
from ..versions import VersionError, release_of

LAYER_MAPS = {"", "raw", "plus-one"}
SWA_MODES = {"", "ignored", "uniform-only", "v2-runner", "honoured", "unknown"}
CAUSAL_MODES = {"", "config", "per-layer"}
RUNNER_UNSET = {"", "v1", "engine"}
RUNNER_DEFAULTS = {"", "v1-unless-default-model", "v2"}


@lru_cache(maxsize=1)
def load_table() -> tuple[dict[str, Any], ...]:
    text = resources.files("dflash_doctor.models").joinpath("engine_support.toml").read_text(encoding="utf-8")
    rows = tomllib.loads(text).get("row", [])
    for r in rows:
        if (
            r.get("layer_map", "") not in LAYER_MAPS
            or r.get("drafter_swa", "") not in SWA_MODES
            or r.get("causal", "") not in CAUSAL_MODES
            or r.get("runner_unset", "") not in RUNNER_UNSET
            or r.get("runner_default", "") not in RUNNER_DEFAULTS
        ):
            raise ValueError(f"engine_support.toml: bad row {r.get('engine')} {r.get('min')}..{r.get('max')}")
        release_of(r["min"]), release_of(r["max"])  # a bad bound fails here, at load
    return tuple(rows)


def lookup(engine: str, version: str | None) -> EngineSupport | None:
    """The table row for this engine release, or None when the engine or version is not covered."""
    if not version:
        return None
    try:
        v = release_of(version)
    except VersionError:
        return None
    for r in load_table():
        if r["engine"] == engine.lower() and release_of(r["min"]) <= v <= release_of(r["max"]):
            return EngineSupport(
                engine=r["engine"],
                version=version,
                range=f"{r['min']}–{r['max']}",
                dflash=bool(r["dflash"]),
                layer_map=r.get("layer_map") or None,
                drafter_swa=r.get("drafter_swa") or None,
                eagle3_aux=r.get("eagle3_aux", "as-is"),
                verified=r.get("verified") or None,
                source=" ".join(r.get("source", "").split()),
                notes=r.get("notes", ""),
                dflash2=bool(r.get("dflash2")),
                causal=r.get("causal") or None,
                v2_dflash=r.get("v2_dflash"),
                runner_unset=r.get("runner_unset") or None,
                runner_default=r.get("runner_default") or None,
                mixed_forces_v2=bool(r.get("mixed_forces_v2")),
                dflash2_forces_v2=bool(r.get("dflash2_forces_v2")),
                v1_rejects_mixed=bool(r.get("v1_rejects_mixed")),
                mixed_error=r.get("mixed_error") or None,
                v1_error=r.get("v1_error") or None,
                v2_error=r.get("v2_error") or None,
            )
    return None


def first_release(engine: str, what: str) -> str | None:
    """The first release in the table that serves `what`: "dflash" (any DFlash), "mixed" (a mixed
    sliding/full DFlash drafter), "DFlash2DraftModel" (a DFlash2 drafter)."""
    rows = sorted((r for r in load_table() if r["engine"] == engine.lower()), key=lambda r: release_of(r["min"]))
    for r in rows:
        if not r.get("dflash"):
            continue
        if what == "mixed" and r.get("drafter_swa") not in ("v2-runner", "honoured"):
            continue
        if what == "DFlash2DraftModel" and not r.get("dflash2"):
            continue
        return r["min"]
    return None
