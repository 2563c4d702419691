"""Does the engine release tap the target layers the drafter was trained on?

Two conventions meet here (docs/layer-id-conventions.md): SpecForge, TorchSpec and Model-Optimizer write
EAGLE-3 ids naming layer OUTPUTS (nested `eagle_config`), speculators writes them naming the stream ENTERING
a layer (top level); each engine release and runner reads some placements, with or without a +1, and taps
its default (2, n//2, n−3) for the rest. The drafter's trained taps and the engine's served taps are both put
in output terms (models/aux_taps.py) and compared. DFlash ids in `dflash_config` are engine-layer-map's
question; this check covers the placements it does not (a top-level `target_layer_ids`, no ids at all).
"""

from __future__ import annotations

from functools import partial

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.engine_facts import EngineAnalysis
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import EngineId, Environment, LaunchConfig
from dflash_doctor.models import aux_taps
from dflash_doctor.models.aux_taps import eagle3_default

OBS = ("engine-layer-map:raw", "engine-layer-map:plus-one", "engine-aux-taps:other-layers", "engine-launch:refused")
DOC = "docs/layer-id-conventions.md"


class EngineAuxTaps(Check):
    id = "engine-aux-taps"
    area = "engine"
    title = "Engine taps the target layers the drafter was trained on"
    needs = (DrafterFacts, EngineId)
    wants = (TargetFacts, LaunchConfig, Environment, EngineAnalysis)
    observations = OBS

    def run(self, evidence: EvidenceSet):
        d, eng, t = evidence.require(DrafterFacts), evidence.require(EngineId), evidence.get(TargetFacts)
        assert d is not None and eng is not None  # both are in `needs`
        refs = tuple(
            e.ref for e in (evidence.require_item(DrafterFacts), evidence.require_item(EngineId)) if e is not None
        )
        skip = _not_this_check(d)
        if skip:
            return [self.finding(Status.NOT_APPLICABLE, skip, refs=refs)]
        who = f"{eng.name} {eng.version or '(version unknown)'}"
        n = t.num_hidden_layers if t is not None else None
        kind: tuple[str, ...] = (*t.architectures, t.model_type or "") if t is not None else ()
        src = evidence.get(EngineAnalysis)
        rows = aux_taps.rows_from_source(src, eng.name, eng.version) if src is not None else None
        src_ref = evidence.ref(EngineAnalysis) if src is not None else None
        if src_ref is not None:
            refs += (src_ref,)
        served = aux_taps.served(d, eng.name, eng.version, n, _env(evidence), kind, rows or None)
        if not served:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: which layers {who} taps for this drafter was not read from its source "
                    f"(aux_taps.toml covers vLLM 0.10.2+ and SGLang 0.5.2+)",
                    refs=refs,
                )
            ]
        trained = aux_taps.trained(d, n)
        table = rows or aux_taps.release_rows(eng.name, eng.version)
        advise = partial(_remedy, who, served, trained, d, table, n, kind)
        return [_verdict(self, d, trained, served, who, refs, advise)]


def _not_this_check(d) -> str | None:
    if d.embedded_in_target or d.method in ("mtp", "medusa", "eagle"):
        return f"the drafter is {d.method}: it reads no aux hidden states of chosen target layers"
    if d.method in ("dflash", "dflash2") and d.layer_ids_source in ("dflash_config.target_layer_ids",):
        return "dflash_config.target_layer_ids: engine-layer-map decides how they are mapped"
    if d.method in ("dflash", "dflash2") and d.layer_ids_source == "aux_hidden_state_layer_ids":
        return "speculators-format DFlash ids: engine-layer-map decides how they are mapped"
    return None


def _env(evidence: EvidenceSet) -> dict[str, str]:
    env: dict[str, str] = {}
    e = evidence.get(Environment)
    if e is not None:
        env.update({k: str(v) for k, v in e.variables.items()})
    launch = evidence.get(LaunchConfig)
    if launch is not None and launch.env:
        env.update({k: str(v) for k, v in launch.env.items()})
    return env


def _outs(ids) -> str:
    return ", ".join("embeddings" if i < 0 else str(i) for i in ids)


def _line(s, trained) -> str:
    where = f"{s.runner}{' (in use)' if s.chosen else ''}"
    if s.taps.error:
        return f"{where}: cannot serve it — {s.taps.error}"
    if s.taps.outputs is None:
        return f"{where}: {s.taps.how}"
    mark = "" if trained.outputs is None else (" ✓" if tuple(s.taps.outputs) == tuple(trained.outputs) else " ✗")
    return f"{where}: outputs of layers {_outs(s.taps.outputs)}{mark} ({s.taps.how})"


def _verdict(check, d, trained, served, who, refs, advise):
    chosen = next((s for s in served if s.chosen), served[0])
    details = (
        f"trained on: {'outputs of layers ' + _outs(trained.outputs) if trained.outputs is not None else 'unknown'} "
        f"({trained.how})",
        *(f"served on {_line(s, trained)}" for s in served),
        f"runner: {chosen.why}",
        f"conventions and sources: {DOC}",
    )
    if chosen.taps.error:
        msg = f"{who} ({chosen.runner}) cannot serve this drafter: {chosen.taps.error}"
        return check.finding(
            Status.FAIL,
            msg,
            refs=refs,
            details=details,
            remedy=advise(),
            observations=(Observation("engine-launch:refused", msg, refs),),
        )
    if trained.outputs is None or chosen.taps.outputs is None:
        why = "the target's layer count is needed (give --target)" if chosen.taps.outputs is None else trained.how
        depth = _default_depth(trained) if chosen.taps.default else None
        if depth:
            why += f"; {who} taps its default there, which is what the drafter was trained on only for a {depth}"
        return check.finding(Status.COULD_NOT_CHECK, "could not check: " + why, refs=refs, details=details)
    if tuple(chosen.taps.outputs) == tuple(trained.outputs):
        return _match(check, served, trained, chosen, who, refs, details, advise)
    return _mismatch(check, chosen, trained, who, refs, details, advise)


def _default_depth(trained) -> str | None:
    """The target depths n for which the engines' default taps equal the trained ones (no target given)."""

    outs = trained.outputs
    if outs is None or len(outs) != 3:
        return None
    ns = [n for n in (outs[2] + 4,) if eagle3_default(n) == tuple(outs)]
    return f"{ns[0]}-layer target" if ns else None


def _match(check, served, trained, chosen, who, refs, details, advise):
    other = [s for s in served if not s.chosen and s.taps.outputs is not None and s.taps.outputs != chosen.taps.outputs]
    msg = f"{who} taps the outputs of layers {_outs(chosen.taps.outputs)} on its {chosen.runner} runner, as trained"
    obs = (Observation("engine-layer-map:plus-one", msg, refs),)
    if other or any(s.taps.error for s in served if not s.chosen):
        alt = other[0] if other else next(s for s in served if s.taps.error)
        msg += f"; on the {alt.runner} runner it would not ({_line(alt, trained)})"
        return check.finding(Status.WARN, msg, refs=refs, details=details, remedy=advise(), observations=obs)
    return check.finding(Status.OK, msg, refs=refs, details=details, observations=obs)


def _mismatch(check, chosen, trained, who, refs, details, advise):
    got, want = tuple(chosen.taps.outputs), tuple(trained.outputs)
    early = len(got) == len(want) and all(g == w - 1 for g, w in zip(got, want, strict=True))
    msg = (
        f"{who} ({chosen.runner} runner) taps the outputs of layers {_outs(got)}; the drafter was trained on "
        f"{_outs(want)}" + (": every tap one layer early" if early else "")
    )
    name = "engine-layer-map:raw" if early else "engine-aux-taps:other-layers"
    return check.finding(
        Status.FAIL,
        msg,
        refs=refs,
        details=details,
        remedy=advise(),
        observations=(Observation(name, msg, refs),),
    )


def _remedy(who: str, served, trained, d, rows, n, kind) -> str:
    """Advice that follows the conventions: where the release's runners tap the trained layers, say so; else the
    ids restated in a field the release reads, in that field's convention, each restatement checked by serving it
    through the same table (aux_taps.restate), so the advice never contradicts the finding."""
    want = tuple(trained.outputs) if trained.outputs is not None else None
    ok = [s for s in served if s.taps.outputs is not None and tuple(s.taps.outputs) == want]
    parts = []
    if ok and not ok[0].chosen:
        env = {"V1": "VLLM_USE_V2_MODEL_RUNNER=0", "V2": "VLLM_USE_V2_MODEL_RUNNER=1"}.get(ok[0].runner)
        if env:
            parts.append(f"run on the {ok[0].runner} runner ({env}), which taps the trained layers")
    elif ok and ok[0].chosen:
        keep = {"V1": "VLLM_USE_V2_MODEL_RUNNER=0", "V2": "VLLM_USE_V2_MODEL_RUNNER=1"}.get(ok[0].runner)
        if keep:
            parts.append(f"keep the {ok[0].runner} runner ({keep} pins it), which taps the trained layers")
    if want is not None and all(i >= 0 for i in want):
        every = {s.runner for s in served}
        for r in aux_taps.restate(d, want, rows, n, kind)[:1]:
            on = "every runner of this release" if set(r.runners) >= every else f"its {', '.join(r.runners)} runner"
            how = (
                "the layer outputs, as trained"
                if r.ids == want
                else f"the outputs of layers {_outs(want)}, each + 1: the stream entering the next layer"
            )
            text = f"state the ids as {r.placement} = {list(r.ids)} ({how}; {who} reads that field on {on})"
            if r.replaces:
                text += f" and remove {d.layer_ids_source}, which this release reads first"
            if d.ids_written is not None and r.placement != d.layer_ids_source and tuple(d.ids_written) != r.ids:
                text += f" — copying {d.layer_ids_source} {list(d.ids_written)} unchanged would tap other layers"
            parts.append(text)
    text = "; or ".join(parts)
    return (text[:1].upper() + text[1:] + f" (see {DOC})") if text else f"See {DOC}."
