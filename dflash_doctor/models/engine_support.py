"""Look up what an engine release does with drafters, from the data table in engine_support.toml."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

LAYER_MAPS = {"", "raw", "plus-one"}
SWA_MODES = {"", "ignored", "uniform-only", "v2-runner", "honoured", "unknown"}


@dataclass(frozen=True)
class EngineSupport:
    engine: str
    version: str
    range: str  # the matched row's version range, e.g. "0.20.0–0.21.99"
    dflash: bool
    layer_map: str | None
    drafter_swa: str | None
    eagle3_aux: str
    verified: str | None
    source: str
    notes: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def source_about(self, *words: str) -> tuple[str, ...]:
        """The parts of `source` that mention any of `words` (for citing the right line of the source)."""
        parts = [p.strip() for p in self.source.split(";") if p.strip()]
        return tuple(p for p in parts if any(w in p for w in words))

    def swa_outcome(self, swa_mix: str, v2_runner: bool | None = None) -> tuple[str | None, str]:
        """(observation suffix or None, sentence) for a drafter whose sliding layers are `swa_mix`."""
        who = f"{self.engine} {self.version}"
        if swa_mix == "none":
            return None, f"the drafter has no sliding-window layers; {who}'s handling of them does not matter"
        mode = self.drafter_swa
        if not self.dflash:
            return None, f"{who} has no DFlash support"
        if mode == "ignored":
            return "ignored", f"{who} runs every DFlash drafter layer as full, non-causal attention: the sliding windows are silently ignored"
        if mode == "honoured":
            return "honoured", f"{who} honours the drafter's sliding windows per layer"
        if mode == "uniform-only":
            if swa_mix == "all":
                return "honoured", f"{who} honours sliding windows when every drafter layer slides"
            return "refused", f"{who} refuses drafters that mix sliding and full layers (NotImplementedError at load)"
        if mode == "v2-runner":
            if v2_runner is False and swa_mix == "mixed":
                return "refused", (f"{who} with VLLM_USE_V2_MODEL_RUNNER=0 (V1 runner) refuses mixed sliding/full "
                                   "drafters at load")
            if v2_runner is True:
                return "honoured", f"{who} honours the sliding windows per layer on the V2 model runner (in use)"
            return "honoured", (f"{who} honours the sliding windows per layer: it picks the V2 model runner for a "
                                "mixed drafter unless VLLM_USE_V2_MODEL_RUNNER=0")
        return None, f"whether {who} honours drafter sliding windows is not established"


def _vtuple(v: str) -> tuple[int, ...]:
    m = re.match(r"^\s*v?(\d+(?:\.\d+)*)", v or "")
    if not m:
        raise ValueError(f"not a version: {v!r}")
    parts = [int(p) for p in m.group(1).split(".")][:3]
    return tuple(parts + [0] * (3 - len(parts)))


@lru_cache(maxsize=1)
def load_table() -> tuple[dict[str, Any], ...]:
    text = resources.files("dflash_doctor.models").joinpath("engine_support.toml").read_text(encoding="utf-8")
    rows = tomllib.loads(text).get("row", [])
    for r in rows:
        if r.get("layer_map", "") not in LAYER_MAPS or r.get("drafter_swa", "") not in SWA_MODES:
            raise ValueError(f"engine_support.toml: bad row {r.get('engine')} {r.get('min')}..{r.get('max')}")
        _vtuple(r["min"]), _vtuple(r["max"])
    return tuple(rows)


def lookup(engine: str, version: str | None) -> EngineSupport | None:
    """The table row for this engine release, or None when the engine or version is not covered."""
    if not version:
        return None
    try:
        v = _vtuple(version)
    except ValueError:
        return None
    for r in load_table():
        if r["engine"] == engine.lower() and _vtuple(r["min"]) <= v <= _vtuple(r["max"]):
            return EngineSupport(engine=r["engine"], version=version, range=f"{r['min']}–{r['max']}",
                                 dflash=bool(r["dflash"]), layer_map=r.get("layer_map") or None,
                                 drafter_swa=r.get("drafter_swa") or None, eagle3_aux=r.get("eagle3_aux", "as-is"),
                                 verified=r.get("verified") or None, source=" ".join(r.get("source", "").split()),
                                 notes=r.get("notes", ""))
    return None


def first_release(engine: str, what: str) -> str | None:
    """The first release in the table that serves `what`: "dflash" (any DFlash), "mixed" (a mixed
    sliding/full DFlash drafter), "DFlash2DraftModel" (a DFlash2 drafter)."""
    rows = sorted((r for r in load_table() if r["engine"] == engine.lower()), key=lambda r: _vtuple(r["min"]))
    for r in rows:
        if not r.get("dflash"):
            continue
        if what == "mixed" and r.get("drafter_swa") not in ("v2-runner", "honoured"):
            continue
        if what == "DFlash2DraftModel" and not r.get("dflash2"):
            continue
        return r["min"]
    return None
