"""Can this engine release load this drafter at all? From architectures.toml, derived from the engines'
model registries. A release past the last one read is answered by extrapolation, and says so."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import tomllib


def vtuple(v: str) -> tuple[int, ...]:
    parts = [int(p) for p in re.findall(r"\d+", v or "")][:3]
    return tuple(parts + [0] * (3 - len(parts)))


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    text = resources.files("dflash_doctor.models").joinpath("architectures.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@dataclass(frozen=True)
class ArchSupport:
    engine: str
    version: str
    method: str
    name: str | None  # the engine's architecture for this drafter; None when it registers none
    loadable: bool | None  # None: not established
    basis: str  # "read" (a release whose source was read), "interpolated", "extrapolated", "unknown"
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _mtp_type(model_type: str | None) -> str:
    return (model_type or "").strip()


def _rows_for(
    engine: str, method: str, model_type: str | None, speculators: bool, archs: tuple[str, ...]
) -> list[dict[str, Any]]:
    """The rows that decide this drafter: MTP by the target's model_type; otherwise a row naming one of the
    drafter's own architectures (or its model_type) wins over the method's generic row."""
    rows = [r for r in load().get("arch", []) if r["engine"] == engine and r["method"] == method]
    if method == "mtp":
        return [r for r in rows if r["model_type"] == _mtp_type(model_type)]
    named = [r for r in rows if r["name"] in archs or (r["model_type"] and r["model_type"] == model_type)]
    if named:
        return named[:1]
    if _names_elsewhere(engine, method, archs, model_type):
        return []  # another engine registers this architecture by name; this one does not
    rows = [r for r in rows if not r.get("specific")]
    if method == "eagle3" and speculators:
        return [r for r in rows if r["model_type"] == "speculators"] or rows
    return [r for r in rows if r["model_type"] in ("", "speculators")][:1]


def _names_elsewhere(engine: str, method: str, archs: tuple[str, ...], model_type: str | None) -> bool:
    return any(
        r["engine"] != engine and r.get("specific") and (r["name"] in archs or r["model_type"] == model_type)
        for r in load().get("arch", [])
        if r["method"] == method
    )


def support(
    engine: str,
    version: str | None,
    method: str,
    model_type: str | None = None,
    speculators: bool = False,
    architectures: tuple[str, ...] = (),
) -> ArchSupport | None:
    """The architecture row for a drafter `method` on `engine` `version`, or None when the engine is not read."""
    data = load()
    engine = engine.lower()
    releases = data.get("releases", {}).get(engine)
    if not releases or not version:
        return None
    rows = _rows_for(engine, method, model_type, speculators, tuple(architectures))
    who = f"{engine} {version}"
    v = vtuple(version)
    last_read = releases[-1]
    if v in {vtuple(x) for x in releases}:
        basis = "read"
    elif v > vtuple(last_read):
        basis = "extrapolated"
    else:
        basis = "interpolated"
    if not rows:
        what = f"{method} for a {model_type} target" if method == "mtp" and model_type else method
        return ArchSupport(
            engine,
            version,
            method,
            None,
            False if method != "unknown" else None,
            basis,
            f"{who}: no {engine} release read registers a {what} drafter architecture",
        )
    r = rows[0]
    name = r["name"]
    if not r["first"]:
        loadable = False
        s = f"{who} does not register {name} (no release read does)"
    elif v < vtuple(r["first"]):
        loadable = False
        s = f"{who} cannot load it: {name} is first registered in {r['first']}"
        if r["absent_before"] and v > vtuple(r["absent_before"]):
            loadable, s = (
                None,
                (
                    f"{who}: {name} is absent in {r['absent_before']} and present in {r['first']}; "
                    f"this release was not read"
                ),
            )
    elif v > vtuple(r["last"]) and r["last"] != last_read:
        loadable = False
        s = f"{who} cannot load it: {name} was removed after {r['last']}"
    else:
        loadable = True
        s = f"{who} registers {name} (since {r['first']})"
    if basis == "extrapolated":
        s += f" — extrapolated: the newest release read is {last_read}"
    elif basis == "interpolated" and loadable is not None:
        s += " — interpolated between the releases read"
    return ArchSupport(engine, version, method, name, loadable, basis, s)


def support_from_evidence(evidence) -> ArchSupport | None:
    """The architecture row for the drafter and engine in `evidence` (Kind.DRAFTER + Kind.ENGINE)."""
    d, eng = evidence.drafter(), evidence.engine()
    if d is None or eng is None:
        return None
    tgt = evidence.target()
    mt = tgt.model_type if (d.embedded_in_target and tgt is not None) else d.model_type
    return support(eng.name, eng.version, d.method, mt, d.speculators_format, tuple(d.architectures or ()))
