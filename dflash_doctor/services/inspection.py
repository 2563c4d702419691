"""`inspect-model` as a service: read the drafter (and target, and engine row), run the drafter,
pairing and engine checks through `doctor.build_report`, and shape the result for rendering.

No check logic lives here: the findings are exactly what `diagnose --drafter/--target/--engine`
would produce for the same inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..collect.builder import EvidenceBuilder
from ..collect.inputs import add_drafter, add_target, gather_engine, parse_engine_spec
from ..evidence import EvidenceSet, Report, Source, Status
from ..evidence.engine_facts import EngineSupport
from ..evidence.model_facts import DrafterFacts, TargetFacts
from ..evidence.payloads import LaunchConfig
from ..evidence.serialise import to_jsonable
from ..models import aux_taps
from ..models.architectures import support
from ..models.facts import drafter_facts, layer_span, target_facts
from .doctor import build_report

AREAS = ("drafter", "pairing", "engine")
SCHEMA = "dflash-doctor/inspect-model@1"


@dataclass(frozen=True)
class Inspection:
    drafter: DrafterFacts
    target: TargetFacts | None
    engine: EngineSupport | None
    engine_spec: str | None
    num_speculative_tokens: int | None
    report: Report
    loader_warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    arch: Any = None  # architectures.ArchSupport: can the named engine release load this drafter at all

    @property
    def engine_cannot_load(self) -> bool:
        return self.arch is not None and self.arch.loadable is False

    @property
    def failed(self) -> bool:
        return any(f.status == Status.FAIL for f in self.report.findings)

    @property
    def exit_code(self) -> int:
        """1 a check failed; 3 nothing could be judged (not a drafter any reader knows, or no check passed);
        0 otherwise."""
        if self.failed:
            return 1
        if self.drafter.method in (None, "unknown") or not any(f.status == Status.OK for f in self.report.findings):
            return 3
        return 0

    def silently_ignored(self) -> list[str]:
        """Drafter features the named engine release drops without a word."""
        d, e = self.drafter, self.engine
        out: list[str] = []
        if e is None or not d.is_dflash or not e.dflash or self.engine_cannot_load:
            return out

        if d.swa_layers and e.drafter_swa == "ignored":
            out.append(
                f"sliding windows on layers {layer_span(d.swa_layers)} (window {d.sliding_window}): "
                "run as full attention"
            )
            if any(la.causal for la in d.layers):
                out.append("the causal mask of the sliding layers: every layer runs non-causal")
        if e.layer_map == "raw" and not d.ids_capture_before:
            out.append("the +1 on target_layer_ids: each tap reads the layer before the trained one")
        return out

    def taps(self) -> tuple[Any, list[Any]]:
        """(what the drafter was trained on, what the named engine release serves on each runner): output terms."""

        d, t = self.drafter, self.target
        n = t.num_hidden_layers if t is not None else None
        trained = aux_taps.trained(d, n)
        served: list[Any] = []
        if self.engine_spec and not d.embedded_in_target and d.method not in (None, "unknown", "mtp", "medusa"):
            name, version = parse_engine_spec(self.engine_spec)
            kind = (*t.architectures, t.model_type or "") if t is not None else ()
            served = aux_taps.served(d, name, version, n, None, kind)
        return trained, served

    def eagle3_default_aux_ids(self) -> list[int] | None:
        """The aux ids an engine taps for an EAGLE-3 drafter that states none: (2, n//2, n−3), capture-before."""
        d, t = self.drafter, self.target
        if not d.aux_ids_absent or t is None or not t.num_hidden_layers:
            return None
        n = t.num_hidden_layers
        return [2, n // 2, n - 3]

    def warnings(self) -> list[str]:
        w = [f"drafter config: {x}" for x in self.drafter.warnings]
        if self.target is not None:
            w += [f"target config: {x}" for x in self.target.warnings]
        w += [f"model card: {c.line}" for c in self.drafter.card]
        if self.drafter.weights is not None:
            w += [f"weights: {p}" for p in self.drafter.weights.problems]
        w += list(self.loader_warnings)
        return w

    def to_dict(self) -> dict[str, Any]:
        d = self.drafter
        return {
            "schema": SCHEMA,
            "drafter_source": d.source,
            "method": d.method,
            "architectures": list(d.architectures),
            "block_size": d.block_size,
            "mask_token_id": d.mask_token_id,
            "target_layer_ids": list(d.target_layer_ids) if d.target_layer_ids is not None else None,
            "layer_ids_source": d.layer_ids_source,
            "hf_hidden_state_indices": list(d.hf_hidden_state_indices)
            if d.hf_hidden_state_indices is not None
            else None,
            "raw_capture_indices": list(d.raw_capture_indices) if d.raw_capture_indices is not None else None,
            "num_target_layers": d.num_target_layers,
            "eagle3_default_aux_ids": self.eagle3_default_aux_ids(),
            "ids_written": list(d.ids_written) if d.ids_written is not None else None,
            "trained_on": self.taps()[0].to_dict(),
            "served_as": [s.to_dict() for s in self.taps()[1]],
            "layers": to_jsonable(d.layers),
            "swa_layers": list(d.swa_layers),
            "sliding_window": d.sliding_window,
            "rope": to_jsonable(d.rope),
            "dtype": d.dtype,
            "drafter": to_jsonable(d),
            "target": to_jsonable(self.target),
            "engine": (
                {
                    "spec": self.engine_spec,
                    "support": to_jsonable(self.engine),
                    "architecture": to_jsonable(self.arch),
                    "silently_ignored": self.silently_ignored(),
                }
                if self.engine_spec
                else None
            ),
            "num_speculative_tokens": self.num_speculative_tokens,
            "warnings": self.warnings(),
            "findings": to_jsonable(self.report.findings),
            "causes": to_jsonable([c for c in self.report.causes if c.evidence_for]),
            "notes": [*self.notes, *self.report.notes],
        }


def inspect(
    drafter: str, target: str | None = None, engine: str | None = None, k: int | None = None, files=None, settings=None
) -> Inspection:
    """Raises DoctorError when the drafter or target cannot be read at all (the user named them)."""

    ev = EvidenceSet(label=f"inspect-model {drafter}")
    dfacts = drafter_facts(drafter, files)
    notes: list[str] = []
    if target is None and dfacts.embedded_in_target:
        target = drafter  # the MTP layers' own model is the target
        notes.append("the MTP layers ship inside this model: it is read as the target too")
    tfacts = target_facts(target, files) if target else None
    add_drafter(ev, dfacts, drafter, files)
    if tfacts is not None:
        assert target is not None  # tfacts is read only for a target
        add_target(ev, tfacts, target, files)
    else:
        ev.missing(TargetFacts, "no target given (--target PATH)")
    row = arch = None
    if engine:
        gather_engine(ev, engine)
        EvidenceBuilder(ev).add_engine_support()
        row = ev.get(EngineSupport)
        name, version = parse_engine_spec(engine)
        mt = tfacts.model_type if (dfacts.embedded_in_target and tfacts) else dfacts.model_type
        arch = support(name, version, dfacts.method, mt, dfacts.speculators_format, tuple(dfacts.architectures or ()))
    else:
        ev.missing(EngineSupport, "no engine given (--engine NAME==VERSION)")
    if k is not None:
        ev.add(
            f"num_speculative_tokens {k} (flag)",
            Source("flag", "--num-speculative-tokens"),
            LaunchConfig(engine=None, model=None, num_speculative_tokens=k),
        )
    report, warnings = build_report(ev, areas=AREAS, settings=settings)
    return Inspection(dfacts, tfacts, row, engine, k, report, tuple(warnings), tuple(notes), arch)
