"""What a drafter × target pair should reach (baselines.toml): published τ per dataset, reference
per-position curves, the cost model behind the k advice, and effect sizes of known faults.

Loaded and validated at start; bad data fails loudly (KnowledgeError). Also finds which pair a
deployment runs from whatever evidence names the drafter (log startup lines, launch, drafter config).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ..evidence.acceptance import AcceptanceSummary, StartupFacts
from ..evidence.model_facts import DrafterFacts
from ..evidence.payloads import LaunchConfig, Workload
from ..evidence.serialise import serial
from ..knowledge.causes import KnowledgeError
from ..models.launch_view import launch_method

if TYPE_CHECKING:
    from ..schema import DrafterBaselineShape

TRUST = ("published", "community", "yours")  # "yours": a reference the user gave (--reference)
ANY_DATASET = "any"


@dataclass(frozen=True)
class CostModel:
    verify_per_draft_position: float
    one_pass_draft: float
    chained_draft_per_position: float
    one_pass_methods: tuple[str, ...] = field(metadata=serial(omit=True))
    chained_methods: tuple[str, ...] = field(metadata=serial(omit=True))

    def is_one_pass(self, method: str | None) -> bool | None:
        if not method:
            return None
        m = method.lower()
        if m in self.one_pass_methods:
            return True
        if m in self.chained_methods:
            return False
        return None

    def step_cost(self, k: int, one_pass: bool) -> float:
        """Cost of one draft+verify step with k draft tokens, in plain target decode steps."""
        draft = self.one_pass_draft if one_pass else self.chained_draft_per_position * k
        return 1.0 + self.verify_per_draft_position * k + draft


@dataclass(frozen=True)
class DrafterBaseline:
    id: str
    aliases: tuple[str, ...]
    method: str
    target: str | None
    k: int
    trust: str
    source: str
    tau: Mapping[str, float]  # dataset -> published τ at k
    curve: tuple[float, ...] | None = None  # explicit reference curve, else geometric from τ
    # τ measured at several k (a per-k series: an InferenceX golden-AL file, a profile's accept_length_by_k): read at
    # the served k from these, never by the geometric model (which over-predicts across k)
    by_k: Mapping[int, float] | None = None

    def names(self) -> tuple[str, ...]:
        return (self.id, *self.aliases)

    def tau_for(self, dataset: str | None) -> tuple[str, float, bool]:
        """(dataset label, τ, exact). Without a known dataset, the lowest published τ: it keeps
        "far below" and "at baseline" conservative in both directions."""
        if dataset:
            key = normalise_dataset(dataset)
            for name, tau in self.tau.items():
                if normalise_dataset(name) == key:
                    return name, tau, True
        name = min(self.tau, key=lambda n: self.tau[n])
        return name, self.tau[name], len(self.tau) == 1 and name == ANY_DATASET

    def reference_curve(self, dataset: str | None, k: int | None = None) -> list[float]:
        k = k or self.k
        if self.curve:
            return list(self.curve[:k])
        _, tau, _ = self.tau_for(dataset)
        a = geometric_ratio(tau, self.k)
        return [a**i for i in range(1, k + 1)]

    def tau_at_k(self, dataset: str | None, k: int | None) -> float:
        """Reference τ at the served k (a shorter block accepts fewer tokens at best)."""
        if self.by_k and k:
            return _series_at(self.by_k, k)
        return 1.0 + sum(self.reference_curve(dataset, min(k or self.k, self.k)))


def _series_at(by_k: Mapping[int, float], k: int) -> float:
    """τ at k from a per-k series: measured, linear between two measured k, the largest k's above them (acceptance
    saturates), the smallest k's below them (fewer positions accept no more)."""
    if k in by_k:
        return by_k[k]
    below, above = [x for x in by_k if x < k], [x for x in by_k if x > k]
    if not below:
        return by_k[min(above)]
    if not above:
        return by_k[max(below)]
    lo, hi = max(below), min(above)
    return by_k[lo] + (by_k[hi] - by_k[lo]) * (k - lo) / (hi - lo)


@dataclass(frozen=True)
class Baselines:
    schema: int
    version: str
    cost: CostModel
    effect: Mapping[str, float]
    drafters: tuple[DrafterBaseline, ...]
    user: DrafterBaseline | None = None  # the user's own reference (--reference): it judges this deployment

    def find(self, name: str | None) -> DrafterBaseline | None:
        """The baseline whose id or alias is `name`, a path ending in it, or a repo id naming it."""
        if not name:
            return None
        tail = re.split(r"[\\/]", str(name).rstrip("/\\"))[-1].lower()
        full = str(name).strip().lower()
        for d in self.drafters:
            for n in d.names():
                n_l = n.lower()
                if full == n_l or tail == n_l.split("/")[-1] or full.endswith("/" + n_l):
                    return d
        return None


def normalise_dataset(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def geometric_ratio(tau: float, k: int) -> float:
    """The a in (0, 1] with 1 + Σ_{i=1..k} a^i = τ (bisection; monotone in a)."""
    target = max(0.0, min(float(k), tau - 1.0))
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        s = sum(mid**i for i in range(1, k + 1))
        lo, hi = (mid, hi) if s < target else (lo, mid)
    return (lo + hi) / 2


def _drafter(d: DrafterBaselineShape, where: str) -> DrafterBaseline:
    """One [[drafter]], shaped: what the shape cannot say (τ within k + 1, a curve that never rises)."""
    for name, tau in d.tau.items():
        if tau > d.k + 1.0:
            raise KnowledgeError(f"{where}.tau.{name}: {tau} is above k + 1 = {d.k + 1}")
    curve = d.curve
    if curve and any(b > a + 1e-9 for a, b in zip(curve, curve[1:], strict=False)):
        raise KnowledgeError(f"{where}.curve: must be non-increasing (rates are unconditional)")
    return DrafterBaseline(
        id=d.id,
        aliases=d.aliases,
        method=d.method.lower(),
        target=d.target,
        k=d.k,
        trust=d.trust,
        source=d.source,
        tau={name: float(t) for name, t in d.tau.items()},
        curve=tuple(float(x) for x in curve) if curve else None,
    )


def parse_baselines(data: Mapping, extra: Sequence[Mapping] | None = None, names: tuple[str, ...] = ()) -> Baselines:
    """The packaged baselines (`data`) and extra files (named by `names` in messages), validated."""
    from ..schema import BaselinesFile, convert  # msgspec: not at start-up (tests/core/test_startup.py)

    extras = list(extra or [])
    sources = [
        "baselines.toml",
        *(names[i] if i < len(names) else f"extra baselines #{i + 1}" for i in range(len(extras))),
    ]
    docs = [convert(doc, BaselinesFile, src, KnowledgeError) for doc, src in zip([data, *extras], sources, strict=True)]
    if data.get("schema") != 1:
        raise KnowledgeError("baselines.toml: schema: must be 1")
    c = docs[0].cost_model
    if c is None:
        raise KnowledgeError("baselines.toml: missing 'cost_model'")
    cost = CostModel(
        verify_per_draft_position=float(c.verify_per_draft_position),
        one_pass_draft=float(c.one_pass_draft),
        chained_draft_per_position=float(c.chained_draft_per_position),
        one_pass_methods=c.one_pass_methods,
        chained_methods=c.chained_methods,
    )
    drafters: list[DrafterBaseline] = []
    seen: set[str] = set()
    for doc, src in zip(docs, sources, strict=True):
        for i, d in enumerate(doc.drafter):
            where = f"{src}: drafter[{i}]"
            if d.id.lower() in seen:
                raise KnowledgeError(f"{where}.id: duplicate drafter id {d.id!r}")
            seen.add(d.id.lower())
            drafters.append(_drafter(d, where))
    effect = {k: float(v) for k, v in docs[0].effect.items()}
    return Baselines(schema=1, version=docs[0].version, cost=cost, effect=effect, drafters=tuple(drafters))


@cache
def default_baselines(extra: tuple[str, ...] = ()) -> Baselines:
    """The packaged baselines plus extra TOML files (DFLASH_DOCTOR_BASELINES, os.pathsep-separated)."""
    from ..schema import SchemaError, parse_toml, read_toml

    text = resources.files("dflash_doctor.interpret").joinpath("baselines.toml").read_bytes()
    docs = []
    for p in extra:
        try:
            docs.append(read_toml(p))
        except OSError as exc:
            raise KnowledgeError(f"cannot read baselines file {p}: {exc.strerror or exc}") from None
        except SchemaError as exc:
            raise KnowledgeError(f"baselines file {exc}") from None
    return parse_baselines(parse_toml(text, "baselines.toml", KnowledgeError), docs, tuple(Path(p).name for p in extra))


@dataclass(frozen=True)
class PairContext:
    """What the baseline checks need to know about the deployment, with where each fact came from."""

    baseline: DrafterBaseline | None
    drafter_name: str | None
    drafter_ref: str | None
    dataset: str | None
    temperature: float | None
    thinking: bool | None
    k: int | None
    method: str | None
    refs: tuple[str, ...] = ()


def drafter_names(evidence) -> list[tuple[str, str | None]]:
    """(name, evidence ref) candidates for the drafter, most specific first: the drafter config's source
    (a repo id or path), then the drafter the launch command or the log's startup lines name."""

    out: list[tuple[str, str | None]] = []
    for ev in reversed(evidence.all(DrafterFacts)):
        out += [(ev.value.source, ev.ref), (ev.source.location, ev.ref)]
    for kind in (LaunchConfig, StartupFacts):
        for ev in reversed(evidence.all(kind)):
            if ev.value.drafter:
                out.append((ev.value.drafter, ev.ref))
    named = evidence.named(DrafterFacts)  # `--drafter org/name` not in the cache still names the pair
    if named:
        out.append((named, None))
    return out


def in_force(evidence) -> Baselines:
    """The baselines of this diagnosis: those set on the evidence (Settings, at the CLI), else the packaged ones."""
    if evidence.baselines is None:
        evidence.baselines = default_baselines()
    return evidence.baselines


def pair_context(evidence, baselines: Baselines) -> PairContext:
    found: DrafterBaseline | None = baselines.user
    name = ref = None
    for cand, cref in drafter_names(evidence) if found is None else ():
        b = baselines.find(cand)
        if b is not None:
            found, name, ref = b, cand, cref
            break
        if name is None:
            name, ref = cand, cref

    w = evidence.get(Workload)
    acc = evidence.get(AcceptanceSummary)
    method, _, _ = launch_method(evidence)
    refs = tuple(r for r in (ref, evidence.ref(Workload)) if r)
    return PairContext(
        baseline=found,
        drafter_name=name,
        drafter_ref=ref,
        dataset=w.dataset if w else None,
        temperature=w.temperature if w else None,
        thinking=w.thinking if w else None,
        k=acc.k if acc else None,
        method=method or (found.method if found else None),
        refs=refs,
    )
