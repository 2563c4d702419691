"""Which target layers a drafter was trained on, and which ones an engine release taps for it.

Both sides are read from data (aux_taps.toml, written from the producers' training code and the engines'
wheels; docs/layer-id-conventions.md shows it with citations). Every answer is in OUTPUT terms: layer k
means the output of target layer k (transformers' hidden_states[k + 1]); −1 is the embedding output.

    trained(d, n)                    -> Taps   what the drafter's producer trained it on
    served(d, engine, version, n, env, target) -> list[Served]   one per runner the release may use
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ..probe.config import default_target_layer_ids
from ..versions import VersionError, release_of

EAGLE_METHODS = ("eagle3", "peagle")
DFLASH_METHODS = ("dflash", "dflash2", "dspark", "domino")
# speculators' DFlash field: vLLM's speculators loader maps it onto the top-level eagle_aux_hidden_state_layer_ids
# (transformers_utils/configs/speculators/algos.py, 0.20.1+)
ALIASES = {"aux_hidden_state_layer_ids": "eagle_aux_hidden_state_layer_ids"}


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The table as TOML gives it (rows are merged with what an engine's source says, rows_from_source),
    validated against schema.AuxTapsTable first."""
    from ..schema import AuxTapsTable, convert, parse_toml  # msgspec: not at start-up

    data = parse_toml(resources.files("dflash_doctor.models").joinpath("aux_taps.toml").read_bytes(), "aux_taps.toml")
    table = convert(data, AuxTapsTable, "aux_taps.toml")
    for i, r in enumerate(table.engine):
        for bound in ("min", "max"):
            try:
                release_of(getattr(r, bound))
            except VersionError as exc:
                raise ValueError(f"aux_taps.toml: engine[{i}].{bound}: {exc}") from None
    return data


def producers(placement: str | None) -> list[dict[str, Any]]:
    return [p for p in load().get("producer", []) if p["placement"] == placement]


def convention(placement: str | None) -> str | None:
    """ "output" | "entering" for ids read from `placement`; None when no producer row names it."""
    found = {p["convention"] for p in producers(placement)}
    return found.pop() if len(found) == 1 else None


def producer_names(placement: str | None) -> str:
    return ", ".join(p["name"] for p in producers(placement)) or "no producer read"


def eagle3_default(n: int) -> tuple[int, ...]:
    """The engines' default taps (2, n//2, n−3) entering = the outputs of layers 1, n//2−1, n−4 — also what
    SpecForge, TorchSpec, Model-Optimizer and speculators train on when a config states no ids."""
    return (1, n // 2 - 1, n - 4)


@dataclass(frozen=True)
class Taps:
    outputs: tuple[int, ...] | None  # target layers whose output is tapped; None: not known (e.g. no target)
    how: str  # in words
    cite: str = ""
    error: str | None = None  # the engine cannot serve these taps at all (an fc shape error)
    default: bool = False  # the engine's (or producer's) default, not ids the config states

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Served:
    runner: str  # "V1" | "V2" | "worker"
    taps: Taps
    chosen: bool  # the runner this release uses for this launch (as far as the evidence tells)
    why: str  # why that runner (or why it is only the alternative)

    def to_dict(self) -> dict[str, Any]:
        return {"runner": self.runner, "taps": self.taps.to_dict(), "chosen": self.chosen, "why": self.why}


def _span(ids) -> str:
    return ", ".join("embeddings" if i < 0 else str(i) for i in ids)


def trained(d, n: int | None) -> Taps:
    """What the drafter was trained on, in output terms."""
    src = d.layer_ids_source
    if d.ids_written is not None and d.target_layer_ids is not None:
        conv = convention(src)
        how = f"{list(d.ids_written)} from {src} — {producer_names(src)} convention: " + (
            "id k names the output of layer k" if conv == "output" else "id k names the stream entering layer k"
        )
        cite = "; ".join(p["cite"] for p in producers(src))
        return Taps(tuple(d.target_layer_ids), how, cite)
    if src == "default" and d.target_layer_ids is not None:
        return Taps(tuple(d.target_layer_ids), "no ids stated: the DFlash reference's default rule", default=True)
    if d.method in EAGLE_METHODS:
        how = "no ids stated: SpecForge, TorchSpec, Model-Optimizer and speculators all train on their default"
        return Taps(eagle3_default(n) if n else None, how, default=True)
    return Taps(None, "the config states no target layer ids")


def release_rows(engine: str, version: str | None) -> list[dict[str, Any]]:
    """The [[engine]] rows (one per runner) covering this release; [] when the release was not read."""
    if not version:
        return []
    try:
        v = release_of(version)
    except VersionError:
        return []
    rows = [r for r in load().get("engine", []) if r["engine"] == engine.lower()]
    return [r for r in rows if release_of(r["min"]) <= v <= release_of(r["max"])]


def _read_by(row: dict[str, Any], placement: str | None) -> int | None:
    """The shift this row applies to ids in `placement`, or None when the row does not read it."""
    want = ALIASES.get(placement or "", placement) if row["engine"] == "vllm" else placement
    for where, shift in row["reads"]:
        if where == want:
            return int(shift)
    return None


def _target_shift(row: dict[str, Any], shift: int, ids: tuple[int, ...], target: tuple[str, ...]) -> tuple[int, str]:
    """SGLang 0.5.13+ DeepSeek-style targets add 1 only when the first id is 1 (deepseek_v2.py)."""
    kinds = set(row.get("first_id_one_targets", ()))
    if shift == 1 and kinds & set(target) and ids and ids[0] != 1:
        return 0, " (this target's set_eagle3_layers_to_capture adds 1 only when the first id is 1)"
    return shift, ""


def served_on(d, row: dict[str, Any], n: int | None, target: tuple[str, ...] = ()) -> Taps:
    """What one runner taps for this drafter (`target`: the target's architectures and model_type)."""
    where = f"{row['engine']} {row['runner']} ({row['cite'].split(';')[0]})"
    shift = _read_by(row, d.layer_ids_source) if d.ids_written is not None else None
    if shift is not None:
        shift, why = _target_shift(row, shift, d.ids_written, target)
        outputs = tuple(i + shift - 1 for i in d.ids_written)
        how = (
            f"reads {d.layer_ids_source} {list(d.ids_written)}"
            + (f" and adds {shift}" if shift else " unshifted")
            + f": taps the streams entering layers {[i + shift for i in d.ids_written]}{why}"
        )
        return Taps(outputs, how, where)
    said = f"does not read {d.layer_ids_source}" if d.ids_written is not None else "finds no ids"
    if d.method in DFLASH_METHODS:
        return _dflash_default(d, row, n, said, where)
    if not n:
        return Taps(None, f"{said}: taps its default (2, n//2, n−3) of a target not given", where, default=True)
    return Taps(eagle3_default(n), f"{said}: taps its default (2, {n // 2}, {n - 3})", where, default=True)


def _dflash_default(d, row: dict[str, Any], n: int | None, said: str, where: str) -> Taps:
    rule = row.get("dflash_default", "")
    layers = d.num_hidden_layers
    if rule == "dflash-default":
        if not n or not layers:
            return Taps(None, f"{said}: builds its default ids from the target's depth", where, default=True)
        outs = default_target_layer_ids(n, layers)
        return Taps(outs, f"{said}: builds its default {list(outs)} (build_target_layer_ids)", where, default=True)
    if rule == "fc-error":
        want = len(d.ids_written) if d.ids_written else layers
        if want == 3 and n:
            return Taps(eagle3_default(n), f"{said}: taps the EAGLE-3 default (2, n//2, n−3)", where, default=True)
        err = (
            f"{said}: its fc is sized for {want or '?'} tapped states and the runner taps the 3 EAGLE-3 defaults — "
            "the drafter fails with an fc shape error ('DFlash drafter expects … concatenated aux hidden features')"
        )
        return Taps(None, err, where, error=err, default=True)
    return Taps(None, f"{said}: what it taps then was not read", where, default=True)


# Where to restate ids, by the drafter's method, the producer's own field first (a restatement in the field the
# drafter's producer writes keeps the config readable by every engine that reads that field).
RESTATE_PLACEMENTS = {
    "eagle": ("eagle_aux_hidden_state_layer_ids", "eagle_config.eagle_aux_hidden_state_layer_ids"),
    "dflash": ("dflash_config.target_layer_ids", "target_layer_ids", "eagle_aux_hidden_state_layer_ids"),
}


@dataclass(frozen=True)
class Restatement:
    placement: str  # the config field to write
    ids: tuple[int, ...]  # the ids to write there
    runners: tuple[str, ...]  # the release's runners that then tap the trained layers
    replaces: bool  # the release reads the drafter's current field before this one: it must go


def restate(d, outputs: tuple[int, ...], rows: list[dict[str, Any]], n: int | None, target: tuple[str, ...] = ()):
    """Where and how to write ids so that the release's runners tap `outputs` (output terms): one Restatement per
    placement some runner reads, those read by every runner first. Each is checked by serving the restated
    drafter through the same rows (served_on), so the advice cannot contradict the table."""
    from dataclasses import replace

    family = "dflash" if d.method in DFLASH_METHODS else "eagle"
    found = []
    for placement in RESTATE_PLACEMENTS[family]:
        ids_by_row = {}
        for row in rows:
            shift = _read_by(row, placement)
            if shift is None:
                continue
            ids = tuple(o + 1 - shift for o in outputs)
            trial = replace(d, layer_ids_source=placement, ids_written=ids, target_layer_ids=tuple(outputs))
            if served_on(trial, row, n, target).outputs == tuple(outputs):
                ids_by_row[row["runner"]] = (ids, row)
        for ids in dict.fromkeys(v[0] for v in ids_by_row.values()):
            runners = tuple(r for r, v in ids_by_row.items() if v[0] == ids)
            replaces = any(_reads_first(ids_by_row[r][1], d.layer_ids_source, placement) for r in runners)
            found.append(Restatement(placement, ids, runners, replaces))
    found.sort(key=lambda r: -len(r.runners))
    return found


def _reads_first(row: dict[str, Any], current: str | None, placement: str) -> bool:
    """Whether the row reads the drafter's current field before `placement` (then the old field must go)."""
    order = [ALIASES.get(w, w) if row["engine"] == "vllm" else w for w, _ in row["reads"]]
    cur = ALIASES.get(current or "", current) if row["engine"] == "vllm" else current
    return cur in order and order.index(cur) < order.index(placement) and cur != placement


def _env_runner(env: dict[str, str] | None) -> str | None:
    v = (env or {}).get("VLLM_USE_V2_MODEL_RUNNER")
    return {"1": "V2", "0": "V1"}.get(str(v).strip()) if v is not None else None


def runner_choice(engine: str, version: str, env: dict[str, str] | None = None) -> tuple[str | None, str]:
    """(the runner a vLLM release uses for an EAGLE-3 / DFlash launch, why); None when it depends on the target."""
    if engine.lower() != "vllm":
        return "worker", "SGLang has one speculative worker"
    try:
        v = release_of(version)
    except VersionError:
        return None, f"{version!r} is not a release version: the runner is not known"
    if v >= release_of("0.34.0"):
        return "V2", "0.34 has only the V2 runner (v1/worker/gpu_model_runner.py is gone)"
    explicit = _env_runner(env)
    if explicit:
        return explicit, f"VLLM_USE_V2_MODEL_RUNNER={'1' if explicit == 'V2' else '0'}"
    if v < release_of("0.22.0"):
        return "V1", "VLLM_USE_V2_MODEL_RUNNER unset means 0 before 0.22"
    if v >= release_of("0.29.0"):
        return "V2", "V2 is the default runner from 0.29 (unless a V2-unsupported launch feature is on)"
    return None, "0.22–0.28 use V1 unless the target is one of the release's default-V2 architectures"


def rows_from_source(analysis, engine: str, version: str | None) -> list[dict[str, Any]]:
    """Rows like the table's, from an installed engine's own source (engines.auxreads): the source wins where
    it decided; the table answers for a runner it could not read. SGLang's source reading covers the EAGLE-3
    placement only, so the table's DFlash placements stay."""
    table = {r["runner"]: r for r in release_rows(engine, version)}
    out = []
    for runner, a in getattr(analysis, "aux_reads", {}).items():
        base = table.get(runner)
        if not a.decided:
            if base is not None:
                out.append(base)
            continue
        reads = [[p, s] for p, s in a.value if s is not None]
        if engine.lower() != "vllm" and base is not None:
            seen = {p for p, _ in reads}
            reads += [r for r in base["reads"] if r[0] not in seen]
        row = dict(base or {"engine": engine.lower(), "runner": runner, "default": "eagle3"})
        row.update(reads=reads, cite=f"the installed source: {a.cites[0] if a.cites else a.why}", verified="installed")
        row.pop("first_id_one_targets", None)  # the source followed this target's own setter
        if "dflash_default" not in row:
            row["dflash_default"] = "fc-error" if engine.lower() == "vllm" else "dflash-default"
        out.append(row)
    return out


def served(
    d,
    engine: str,
    version: str | None,
    n: int | None,
    env: dict[str, str] | None = None,
    target: tuple[str, ...] = (),
    rows: list[dict[str, Any]] | None = None,
) -> list[Served]:
    """What each runner of the release taps; `target` is the target's architectures and model_type; `rows`
    replaces the table's rows (an installed engine's source: rows_from_source)."""
    rows = release_rows(engine, version) if rows is None else rows
    if not rows:
        return []
    chosen, why = runner_choice(engine, version or "0", env)
    out = []
    for row in rows:
        is_chosen = (chosen is None and row["runner"] == "V1") or chosen == row["runner"]
        out.append(Served(row["runner"], served_on(d, row, n, target), is_chosen, why))
    out.sort(key=lambda s: not s.chosen)
    return out
