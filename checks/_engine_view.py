"""Shared by the engine checks: the deployment as the evidence describes it, and the outcome findings.

The installed source (ENGINE_SOURCE, an engines.EngineAnalysis read on the host) and the support table
(ENGINE_SUPPORT, a release row) answer the same questions; both go through engines.outcome.decide, so
the table path and the source path cannot drift apart. The source outranks the table when it decided;
the table is the prior otherwise, and a disagreement is shown with both.
"""

from __future__ import annotations

from typing import Any

from dflash_doctor.engines.answers import CERTAIN
from dflash_doctor.engines.outcome import (
    ABSENT,
    HONOURED,
    IGNORED,
    NOT_APPLICABLE,
    REFUSED,
    Deployment,
    Outcome,
    decide,
)
from dflash_doctor.engines.table import compare, from_row
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.engine_facts import EngineAnalysis
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import Environment, LaunchConfig
from dflash_doctor.models.facts import layer_span
from dflash_doctor.models.launch_view import launch_method

LAUNCH_OBSERVATIONS = ("engine-launch:refused", "engine-launch:absent")
SWA_OBSERVATIONS = ("engine-swa:ignored", "engine-swa:honoured")
MAP_OBSERVATIONS = ("engine-layer-map:raw", "engine-layer-map:plus-one")


def source_analysis(evidence: EvidenceSet) -> tuple[EngineAnalysis | None, Any]:
    return evidence.get(EngineAnalysis), evidence.item(EngineAnalysis)


def deployment(evidence: EvidenceSet) -> Deployment:
    d, t = evidence.get(DrafterFacts), evidence.get(TargetFacts)
    swa_mix = d.swa_mix if d is not None and d.layers else None
    env: dict[str, str] = {}
    env_known = False
    e = evidence.get(Environment)
    if e is not None:
        env.update({k: str(v) for k, v in e.variables.items()})
        env_known = evidence.require_item(Environment).source.location.startswith("/proc/")  # the process's own
    launch = evidence.get(LaunchConfig)
    if launch is not None and launch.env:
        env.update({k: str(v) for k, v in launch.env.items()})
    return Deployment(
        drafter_architectures=tuple(d.architectures or ()) if d is not None else (),
        drafter_method=d.method if d is not None else None,
        swa_mix=swa_mix,
        target_architectures=tuple(t.architectures or ()) if t is not None else (),
        target_hybrid=t.hybrid_linear if t is not None else None,
        env=env,
        env_known=env_known,
    )


def drafter_method(evidence: EvidenceSet) -> str | None:
    d = evidence.get(DrafterFacts)
    m = d.method if d is not None else None
    if isinstance(m, str) and m != "unknown":
        return m
    lm, _, _ = launch_method(evidence)
    return lm


def not_dflash(evidence: EvidenceSet) -> str | None:
    """The method when the drafter is known not to be DFlash (the DFlash questions do not apply)."""
    m = drafter_method(evidence)
    if isinstance(m, str) and m not in ("dflash", "dflash2", "unknown"):
        return m
    return None


def origin(a: EngineAnalysis) -> str:
    return f"the installed source ({a.source}; version from {a.version.source or 'nowhere'})"


def cites(o: Outcome, n: int = 3) -> tuple[str, ...]:
    return tuple(c.describe() for c in o.cites[:n])


def launch_finding(check, o: Outcome, refs, origin: str):
    """refused / absent as a failing finding: the engine's own text and the launch that works."""
    details = ((f"the engine says: {o.error}",) if o.error else ()) + cites(o)
    if o.runner_why:
        details += (f"runner: {o.runner or 'either'} ({o.runner_why})",)
    details += (f"from {origin}",)
    name = "engine-launch:refused" if o.value == REFUSED else "engine-launch:absent"
    what = (
        "the server cannot run this drafter with this launch"
        if o.value == REFUSED
        else "this release cannot run the drafter at all"
    )
    return check.finding(
        Status.FAIL,
        f"{o.sentence}: {what}",
        refs=refs,
        details=details,
        remedy=o.works or "",
        observations=(Observation(name, o.sentence, refs),),
    )


def drafter_span(evidence: EvidenceSet) -> str | None:
    """'layers 0–3 are sliding (window 2048)' for a drafter with sliding layers, else None."""

    d = evidence.get(DrafterFacts)
    if d is None or not d.swa_layers:
        return None
    return f"layers {layer_span(d.swa_layers)} are sliding (window {d.sliding_window})"


def swa_finding(check, o: Outcome, refs, origin: str, extra: tuple[str, ...] = (), lead: str | None = None):
    if o.value in (REFUSED, ABSENT):
        return launch_finding(check, o, refs, origin)
    note = "" if o.certainty == CERTAIN or origin.startswith("the engine-support table") else f" ({o.certainty})"
    details = cites(o) + extra + (f"from {origin}",)
    if o.value == IGNORED:
        msg = (f"{lead}, but " if lead else "") + o.sentence + note
        return check.finding(
            Status.FAIL,
            msg,
            refs=refs,
            details=details,
            observations=(Observation("engine-swa:ignored", o.sentence, refs),),
            remedy="Use an engine release that honours drafter layer_types (vLLM >= 0.26, which runs a "
            "mixed sliding/full drafter on the V2 model runner — leave VLLM_USE_V2_MODEL_RUNNER "
            "unset or 1; SGLang >= 0.5.14), or a drafter without sliding layers.",
        )
    if o.value == HONOURED:
        return check.finding(
            Status.OK,
            (f"{lead}; " if lead else "") + o.sentence + note,
            refs=refs,
            details=details,
            observations=(Observation("engine-swa:honoured", o.sentence, refs),),
        )
    if o.value == NOT_APPLICABLE:
        return check.finding(Status.NOT_APPLICABLE, o.sentence, refs=refs, details=details)
    return check.finding(Status.COULD_NOT_CHECK, o.sentence, refs=refs, details=details)


def map_finding(check, o: Outcome, refs, origin: str, who: str, extra: tuple[str, ...] = ()):
    """The target_layer_ids mapping on the runner this launch uses (none for a refused/absent launch)."""
    if o.value in (REFUSED, ABSENT):
        return check.finding(
            Status.NOT_APPLICABLE,
            f"not applicable: {o.sentence} (the launch is reported by the sliding-window check)",
            refs=refs,
        )
    lm = o.layer_map
    if lm is None or not lm.decided:
        why = lm.why if lm is not None else o.sentence
        return check.finding(
            Status.COULD_NOT_CHECK,
            f"could not decide how {who} maps target_layer_ids: {why}",
            refs=refs,
            details=tuple(c.describe() for c in (lm.cites if lm else ())[:3]),
        )
    on = f" on the {o.runner} runner" if o.runner else ""
    # table answers are the prior by construction; only a source answer says how sure it is
    note = (
        ""
        if lm.certainty == CERTAIN or origin.startswith("the engine-support table")
        else f" ({lm.certainty}: {lm.why})"
    )
    details = tuple(c.describe() for c in lm.cites[:4]) + extra + (f"from {origin}",)
    if lm.value == "plus-one":
        msg = f"{who} reads hidden states at target_layer_ids + 1{on}, as the drafter was trained{note}"
        return check.finding(
            Status.OK,
            msg,
            refs=refs,
            details=details,
            observations=(Observation("engine-layer-map:plus-one", msg, refs),),
        )
    if lm.value == "raw":
        msg = f"{who} passes target_layer_ids raw{on}: every tap is one layer early{note}"
        return check.finding(
            Status.FAIL,
            msg,
            refs=refs,
            details=details,
            remedy="Upgrade to a release that adds 1 (vLLM >= 0.22, PR #40727); do not shift the ids in "
            "the drafter config by hand on a fixed release.",
            observations=(Observation("engine-layer-map:raw", msg, refs),),
        )
    if lm.value == "n/a":
        return check.finding(Status.NOT_APPLICABLE, f"not applicable: {lm.why}", refs=refs)
    return check.finding(
        Status.FAIL,
        f"{who} taps the target {lm.value} from the layers the drafter was trained on{on}{note}",
        refs=refs,
        details=details,
    )


def source_outcome(evidence: EvidenceSet) -> tuple[Outcome | None, EngineAnalysis | None]:
    a, _ = source_analysis(evidence)
    if a is None:
        return None, None
    return decide(a, deployment(evidence)), a


def analysed_outcome(evidence: EvidenceSet, a: EngineAnalysis) -> Outcome:
    """What the engine source `a` decides for this deployment (for the checks that need EngineAnalysis)."""
    return decide(a, deployment(evidence))


def table_outcome(evidence: EvidenceSet, row) -> Outcome:
    dep = deployment(evidence)
    return decide(from_row(row, dep.target_architectures), dep)


def table_note(a: EngineAnalysis, row, fields: tuple[str, ...]) -> tuple[str, ...]:
    """'the table says X, the source says Y (file:line)' for each field where they differ."""
    if row is None:
        return ()

    out = []
    for d in compare(a, row):
        if d.field in fields:
            out.append(
                f"the engine-support table ({row.engine} {row.range}) says {d.field} {d.table!r}; the installed "
                f"source says {d.source!r}" + (f" ({d.cites[0]})" if d.cites else "") + ": the source decides"
            )
    return tuple(out)
