"""Can this engine release load this drafter at all? From architectures.toml, derived from the engines'
model registries. A release past the last one read is answered by extrapolation, and says so."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from ..evidence.model_facts import DrafterFacts, TargetFacts
from ..evidence.payloads import EngineId
from ..versions import is_version, release_of

if TYPE_CHECKING:
    from ..schema import ArchitecturesTable, ArchRow


@lru_cache(maxsize=1)
def load() -> ArchitecturesTable:
    from ..schema import ArchitecturesTable, convert, parse_toml  # msgspec: not at start-up

    raw = resources.files("dflash_doctor.models").joinpath("architectures.toml").read_bytes()
    table = convert(parse_toml(raw, "architectures.toml"), ArchitecturesTable, "architectures.toml")
    for engine, releases in table.releases.items():
        for i, v in enumerate(releases):
            if not is_version(v):
                raise ValueError(f"architectures.toml: releases.{engine}[{i}]: {v!r} is not a release version")
    for i, r in enumerate(table.arch):
        for bound in ("first", "absent_before", "last"):
            if getattr(r, bound) and not is_version(getattr(r, bound)):
                raise ValueError(f"architectures.toml: arch[{i}].{bound}: not a release version")
    return table


@dataclass(frozen=True)
class ArchSupport:
    engine: str
    version: str
    method: str
    name: str | None  # the engine's architecture for this drafter; None when it registers none
    loadable: bool | None  # None: not established
    basis: str  # "read" (a release whose source was read), "interpolated", "extrapolated", "unknown"
    sentence: str


def _mtp_type(model_type: str | None) -> str:
    return (model_type or "").strip()


def _rows_for(
    engine: str, method: str, model_type: str | None, speculators: bool, archs: tuple[str, ...]
) -> list[ArchRow]:
    """The rows that decide this drafter: MTP by the target's model_type; otherwise a row naming one of the
    drafter's own architectures (or its model_type) wins over the method's generic row."""
    rows = [r for r in load().arch if r.engine == engine and r.method == method]
    if method == "mtp":
        return [r for r in rows if r.model_type == _mtp_type(model_type)]
    named = [r for r in rows if r.name in archs or (r.model_type and r.model_type == model_type)]
    if named:
        return named[:1]
    if _names_elsewhere(engine, method, archs, model_type):
        return []  # another engine registers this architecture by name; this one does not
    rows = [r for r in rows if not r.specific]
    if method == "eagle3" and speculators:
        return [r for r in rows if r.model_type == "speculators"] or rows
    return [r for r in rows if r.model_type in ("", "speculators")][:1]


def _names_elsewhere(engine: str, method: str, archs: tuple[str, ...], model_type: str | None) -> bool:
    return any(
        r.engine != engine and r.specific and (r.name in archs or r.model_type == model_type)
        for r in load().arch
        if r.method == method
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
    releases = data.releases.get(engine)
    if not releases or not is_version(version):
        return None  # no release named (or text that is not a version, e.g. from a hostile host): not known
    rows = _rows_for(engine, method, model_type, speculators, tuple(architectures))
    who = f"{engine} {version}"
    v = release_of(version)
    last_read = releases[-1]
    if v in {release_of(x) for x in releases}:
        basis = "read"
    elif v > release_of(last_read):
        basis = "extrapolated"
    else:
        basis = "interpolated"
    if not rows:
        said = (
            f"no {engine} release read registers MTP layers for a {model_type} target"
            if method == "mtp" and model_type
            else f"no {engine} release read registers a {method} drafter architecture"
        )
        loadable = False if method != "unknown" else None
        return ArchSupport(engine, version, method, None, loadable, basis, f"{who}: {said}")
    r = rows[0]
    name = r.name
    if not r.first:
        loadable = False
        s = f"{who} does not register {name} (no release read does)"
    elif v < release_of(r.first):
        loadable = False
        s = f"{who} cannot load it: {name} is first registered in {r.first}"
        if r.absent_before and v > release_of(r.absent_before):
            loadable, s = (
                None,
                (f"{who}: {name} is absent in {r.absent_before} and present in {r.first}; this release was not read"),
            )
    elif v > release_of(r.last) and r.last != last_read:
        loadable = False
        s = f"{who} cannot load it: {name} was removed after {r.last}"
    else:
        loadable = True
        s = f"{who} registers {name} (since {r.first})"
    if basis == "extrapolated":
        s += f" — extrapolated: the newest release read is {last_read}"
    elif basis == "interpolated" and loadable is not None:
        s += " — interpolated between the releases read"
    return ArchSupport(engine, version, method, name, loadable, basis, s)


def support_from_evidence(evidence) -> ArchSupport | None:
    """The architecture row for the drafter and engine in `evidence` (DrafterFacts + EngineId)."""
    d, eng = evidence.get(DrafterFacts), evidence.get(EngineId)
    if d is None or eng is None:
        return None
    tgt = evidence.get(TargetFacts)
    mt = tgt.model_type if (d.embedded_in_target and tgt is not None) else d.model_type
    return support(eng.name, eng.version, d.method, mt, d.speculators_format, tuple(d.architectures or ()))
