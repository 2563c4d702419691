"""The support table (models/engine_support.toml) and the source, side by side.

* `modes(analysis)`       the source analysis in the table's vocabulary (dflash, layer_map, drafter_swa, …),
                          None for a field the source could not decide;
* `compare(analysis, row)` the fields where a decided source answer and the table row differ, with both;
* `from_row(row)`         an EngineAnalysis built from a table row alone (answers LIKELY: the table is the
                          prior, it says what the release does, not what this install does), so one
                          outcome logic (outcome.decide) serves the table and the source alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..evidence.engine_facts import EngineAnalysis
from .answers import CERTAIN, LIKELY, Answer, Cite, VersionReading, undecided
from .vllm import RunnerRules, SwaRules

FIELDS = (
    "dflash",
    "dflash2",
    "layer_map",
    "drafter_swa",
    "v2_dflash",
    "runner_unset",
    "runner_default",
    "mixed_forces_v2",
    "dflash2_forces_v2",
    "v1_rejects_mixed",
)


def modes(a: EngineAnalysis) -> dict[str, Any]:
    out: dict[str, Any] = {f: None for f in FIELDS}
    if a.dflash.decided:
        out["dflash"] = bool(a.dflash.value)
        out["dflash2"] = "DFlash2DraftModel" in (a.dflash.value or ())
    if out["dflash"] is False:
        return {**out, "layer_map": "", "drafter_swa": ""}
    maps = {k: v.value for k, v in a.layer_map.items() if v.decided and v.value != "n/a"}
    if maps and len(set(maps.values())) == 1 and all(v.decided for v in a.layer_map.values()):
        out["layer_map"] = next(iter(maps.values()))
    rules = a.swa_for("DFlashDraftModel")
    if rules is not None and rules.reads_layer_types.decided and rules.mixed.decided:
        if rules.reads_layer_types.value is False:
            out["drafter_swa"] = "ignored"
        else:
            out["drafter_swa"] = {
                "refused": "uniform-only",
                "refused-unless-v2": "v2-runner",
                "allowed": "honoured",
            }.get(rules.mixed.value)
    rr = a.runner
    if rr is not None:
        if rr.v2_dflash.decided:
            out["v2_dflash"] = rr.v2_dflash.value
        if rr.unset.decided:
            out["runner_unset"] = rr.unset.value
        if rr.rules.decided:
            conds = [c for c, _ in rr.rules.value]
            out["mixed_forces_v2"] = ("mixed-dflash", "v2") in rr.rules.value
            out["dflash2_forces_v2"] = ("dflash2", "v2") in rr.rules.value
            if rr.unset.value == "engine":
                out["runner_default"] = (
                    "v1-unless-default-model"
                    if "not default-v2-model" in conds
                    else dict(rr.rules.value).get("otherwise")
                )
            else:
                out["runner_default"] = ""
        if rr.v1_rejects_mixed.decided:
            out["v1_rejects_mixed"] = rr.v1_rejects_mixed.value
    return out


def row_modes(row) -> dict[str, Any]:
    return {
        "dflash": row.dflash,
        "dflash2": row.dflash2,
        "layer_map": row.layer_map or "",
        "drafter_swa": row.drafter_swa or "",
        "v2_dflash": row.v2_dflash,
        "runner_unset": row.runner_unset or "",
        "runner_default": row.runner_default or "",
        "mixed_forces_v2": row.mixed_forces_v2,
        "dflash2_forces_v2": row.dflash2_forces_v2,
        "v1_rejects_mixed": row.v1_rejects_mixed,
    }


@dataclass(frozen=True)
class Disagreement:
    field: str
    table: Any
    source: Any
    certainty: str
    cites: tuple[Cite, ...]

    def describe(self) -> str:
        where = f" ({', '.join(str(c) for c in self.cites[:2])})" if self.cites else ""
        return f"{self.field}: the table says {self.table!r}, the installed source says {self.source!r}{where}"


_CITES = {
    "dflash": lambda a: a.dflash.cites,
    "dflash2": lambda a: a.dflash.cites,
    "layer_map": lambda a: next((v.cites for v in a.layer_map.values() if v.decided), ()),
    "drafter_swa": lambda a: a.swa_for(None).mixed.cites if a.swa_for(None) else (),
}


def compare(a: EngineAnalysis, row) -> list[Disagreement]:
    """Fields where the source (when it decided) and the table row disagree. vLLM-only fields are
    compared for vLLM only."""
    src, tab = modes(a), row_modes(row)
    out = []
    for f in FIELDS:
        if a.engine != "vllm" and f in (
            "v2_dflash",
            "runner_unset",
            "runner_default",
            "mixed_forces_v2",
            "dflash2_forces_v2",
            "v1_rejects_mixed",
        ):
            continue
        if src[f] is None or tab[f] is None:
            continue
        if src[f] != tab[f]:
            cites = tuple(_CITES.get(f, lambda a: ())(a))
            out.append(Disagreement(f, tab[f], src[f], CERTAIN, cites))
    return out


def from_row(row, target_architectures: tuple[str, ...] = ()) -> EngineAnalysis:
    """An analysis that says what the table says about this release (answers LIKELY, no file cites)."""
    why = (
        f"the engine-support table ({row.engine} {row.range}"
        + (f", read from {row.verified}" if row.verified else ", from the reference")
        + ")"
    )
    like = lambda value, what: Answer(value, LIKELY, f"{what} per {why}")  # noqa: E731
    archs: tuple[str, ...] = ()
    if row.dflash:
        archs = ("DFlashDraftModel",) + (("DFlash2DraftModel",) if row.dflash2 else ())
    dflash = like(archs, "DFlash drafters " + (", ".join(archs) if archs else "absent"))
    if row.layer_map:
        lm = like(row.layer_map, f"target_layer_ids {row.layer_map}")
    else:
        lm = Answer("n/a", LIKELY, "no DFlash") if not row.dflash else undecided(f"the layer map is not in {why}")
    layer_map = {"V1": lm, "V2": lm} if row.engine == "vllm" else {"worker": lm}
    if row.engine == "vllm" and row.v2_dflash is False:
        layer_map["V2"] = Answer("n/a", LIKELY, f"the V2 runner rejects method 'dflash' per {why}")
    swa: dict[str, SwaRules] = {}
    if row.dflash and row.drafter_swa:
        reads = like(row.drafter_swa != "ignored", "sliding windows " + row.drafter_swa)
        mixed_v = {
            "ignored": "allowed",
            "uniform-only": "refused",
            "v2-runner": "refused-unless-v2",
            "honoured": "allowed",
        }.get(row.drafter_swa)
        mixed = like(mixed_v, f"mixed drafters {mixed_v}") if mixed_v else undecided(f"not in {why}")
        causal = like("per-layer", "sliding layers causal, full layers not") if row.causal == "per-layer" else None
        rules = SwaRules(None, reads, mixed, row.mixed_error, causal)
        swa = {a: rules for a in archs}
    runner = None
    if row.engine == "vllm":
        rules_v: list[tuple[str, str]] = [("explicit", "env")]
        if row.mixed_forces_v2:
            rules_v.append(("mixed-dflash", "v2"))
        if row.dflash2_forces_v2:
            rules_v.append(("dflash2", "v2"))
        if row.runner_default == "v1-unless-default-model":
            rules_v += [("not default-v2-model", "v1"), ("v2-unsupported", "v1"), ("otherwise", "v2")]
        elif row.runner_default == "v2":
            rules_v += [("v2-unsupported", "v1"), ("otherwise", "v2")]
        v2 = row.v2_dflash
        runner = RunnerRules(
            env_parse=like("int", "VLLM_USE_V2_MODEL_RUNNER parsed with int()"),
            unset=like(row.runner_unset or "v1", f"unset means {row.runner_unset or 'v1'}"),
            rules=like(tuple(rules_v), "the runner rules"),
            v2_dflash=like(v2, "V2 accepts dflash") if v2 is not None else undecided(f"not in {why}"),
            v2_error=row.v2_error,
            v1_rejects_mixed=like(row.v1_rejects_mixed, "V1 rejects mixed drafters"),
            v1_error=row.v1_error,
        )
    return EngineAnalysis(
        row.engine,
        VersionReading(row.version, "the version named for the table lookup", ((("given", row.version)),)),
        dflash,
        layer_map,
        {},
        Answer(0, LIKELY, why),
        Answer(-1, LIKELY, why),
        swa,
        runner,
        tuple(target_architectures),
        (),
        "engine-support table",
    )
