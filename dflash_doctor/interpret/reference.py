"""What trained drafters of each method reach at each k (reference.toml): cited figures, the healthy
band a verdict can use without a pair baseline, the dead band, and the prior over methods.

    band("eagle3", 3)                -> Band(low 2.03, typical 2.56, high 4, p1_low 0.59, …, figures …)
    band("dflash", 15, "mt-bench")   -> the band from the mt-bench figures only (all datasets when none)
    healthy_band(method, k, dataset, drafter=NAME) -> the pair's baseline band when baselines.toml knows
                                        the drafter, else the method band
    method_prior()                   -> {method: prior} for a log whose method is unknown

Loaded and validated at start; bad data fails loudly (KnowledgeError). How figures become a band is
documented at the top of reference.toml.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from statistics import median
from typing import TYPE_CHECKING, Any

from ..knowledge.causes import KnowledgeError
from .baselines import default_baselines

if TYPE_CHECKING:
    from ..schema import FigureShape

ALIASES = {
    "dflash2": "dflash",
    "dspark": "dflash",  # DeepSeek's DSpark: a block (parallel) drafter, judged with the DFlash family
    "eagle-3": "eagle3",
    "deepseek_mtp": "mtp",
    "draft_model": "draft",
    "peagle": "p-eagle",
}


@dataclass(frozen=True)
class Source:
    id: str
    title: str
    url: str
    kind: str


@dataclass(frozen=True)
class Figure:
    method: str
    k: int
    dataset: str
    tau: float
    role: str  # measured | threshold
    pair: str
    source: Source
    per_position: tuple[float, ...] = ()
    p1: float | None = None  # stated position-1 rate (per_position[0] or per_position_1)
    use: bool = True
    why: str = ""
    temperature: float | None = None  # sampling temperature of the measurement (None: greedy, the file's convention)
    thinking: bool | None = None  # thinking mode of the requests (None: not stated)
    specific: bool = False  # a workload of its own (structured output, …): shapes a band only when it is named

    def model(self) -> tuple[float, float]:
        """(p1, r) of the geometric model rate_i = p1 · r^(i−1) that reproduces τ at this k."""
        return _geometric(self.k, self.tau, self.p1)

    def tau_at(self, k: int) -> float:
        p1, r = self.model()
        return 1.0 + p1 * sum(r**j for j in range(k))

    def cite(self) -> str:
        return f"{self.pair}, {self.dataset}, k={self.k}: τ {self.tau:.2f} ({self.source.title}; {self.source.url})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "k": self.k,
            "dataset": self.dataset,
            "tau": self.tau,
            "role": self.role,
            "pair": self.pair,
            "per_position": list(self.per_position),
            "p1": self.p1,
            "use": self.use,
            "why": self.why,
            "temperature": self.temperature,
            "thinking": self.thinking,
            "source": {
                "id": self.source.id,
                "title": self.source.title,
                "url": self.source.url,
                "kind": self.source.kind,
            },
        }


@lru_cache(maxsize=4096)
def _geometric(k: int, tau: float, p1: float | None) -> tuple[float, float]:
    """Figure.model's arithmetic, kept per (k, τ, p1): a fleet ranks hundreds of engines against the same
    figures, and each solve is 60 bisection steps over a k-term sum (~3 of a 200-engine fleet's 5 s)."""
    excess = max(0.0, min(float(k), tau - 1.0))
    if p1 is None:
        a = _solve(lambda a: sum(a**i for i in range(1, k + 1)), excess)
        return a, a
    if p1 <= 0:
        return 0.0, 0.0
    if k == 1:
        # one position says nothing about the decay: assume the geometric curve (r = p1)
        return p1, p1
    r = _solve(lambda r: p1 * sum(r**j for j in range(k)), excess)
    return p1, r


def _solve(f, target: float) -> float:
    """x in [0, 1] with f(x) = target for f increasing on [0, 1] (bisection; clamps out-of-range)."""
    lo, hi = 0.0, 1.0
    if f(hi) <= target:
        return 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True)
class FigureAtK:
    figure: Figure
    tau: float  # the figure's model τ at the requested k (its own τ when k is the figure's k)
    p1: float | None
    extrapolated: bool  # k beyond the figure's own k

    def to_dict(self) -> dict[str, Any]:
        return {
            "tau_at_k": round(self.tau, 3),
            "p1": self.p1,
            "extrapolated": self.extrapolated,
            **self.figure.to_dict(),
        }


@dataclass(frozen=True)
class Band:
    """Where a deployment's τ should sit at k, for a method (or a known pair)."""

    method: str
    k: int
    dataset: str | None  # the dataset the figures were restricted to, None = all
    basis: str  # "method" | "pair"
    low: float | None  # below it: below what trained drafters of the kind reach
    typical: float | None
    high: float
    p1_low: float | None
    p1_typical: float | None
    dead_excess: float | None  # τ − 1 at or below: dead drafter (None for n-gram-like proposers)
    dead_position_1: float | None
    figures: tuple[FigureAtK, ...] = ()
    extrapolated: bool = False  # the low edge or typical rests on a figure extrapolated to this k
    sparse: bool = False  # fewer measured figures than rules.min_figures
    note: str = ""

    def contains(self, tau: float) -> bool:
        return self.low is not None and self.low <= tau <= self.high

    def is_dead(self, tau: float, p1: float | None = None) -> bool:
        if self.dead_excess is None:
            return False
        return tau - 1.0 <= self.dead_excess or (
            p1 is not None and self.dead_position_1 is not None and p1 <= self.dead_position_1
        )

    def describe(self) -> str:
        if self.low is None:
            return f"no healthy floor for {self.method} at k={self.k}: {self.note}"
        ds = f" on {self.dataset}" if self.dataset else ""
        who = (
            f"this pair (its published τ{ds}) reaches"
            if self.basis == "pair"
            else f"trained {self.method} drafters{ds} reach"
        )
        typ = f", typical {self.typical:.2f}" if self.typical is not None else ""
        extra = " (extrapolated from figures at smaller k)" if self.extrapolated else ""
        thin = "; few figures, treat the edge as rough" if self.sparse else ""
        return f"{who} τ ≥ {self.low:.2f} at k={self.k}{typ}{extra}{thin}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "k": self.k,
            "dataset": self.dataset,
            "basis": self.basis,
            "low": _r(self.low),
            "typical": _r(self.typical),
            "high": self.high,
            "p1_low": _r(self.p1_low),
            "p1_typical": _r(self.p1_typical),
            "dead_excess": self.dead_excess,
            "dead_position_1": self.dead_position_1,
            "extrapolated": self.extrapolated,
            "sparse": self.sparse,
            "note": self.note,
            "figures": [f.to_dict() for f in self.figures],
        }


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


@dataclass(frozen=True)
class MethodInfo:
    id: str
    learned: bool
    prior: float
    note: str = ""


@dataclass(frozen=True)
class Reference:
    version: str
    margin: float
    dead_excess: float
    dead_position_1: float
    min_figures: int
    methods: Mapping[str, MethodInfo]
    sources: Mapping[str, Source]
    figures: tuple[Figure, ...]

    def method_prior(self) -> dict[str, float]:
        return {m.id: m.prior for m in self.methods.values()}

    def figures_for(self, method: str, dataset: str | None = None, used_only: bool = True) -> list[Figure]:
        m = normalise_method(method)
        out = [f for f in self.figures if f.method == m and (f.use or not used_only)]
        if dataset:
            key = _norm(dataset)
            same = [f for f in out if _norm(f.dataset) == key]
            return same
        return [f for f in out if not f.specific]

    def band(
        self,
        method: str,
        k: int,
        dataset: str | None = None,
        temperature: float | None = None,
        thinking: bool | None = None,
    ) -> Band | None:
        m = normalise_method(method)
        info = self.methods.get(m)
        if info is None or k < 1:
            return None
        figs = self.figures_for(m, dataset) if dataset else []
        chosen_dataset = dataset if figs else None
        if not figs:
            figs = self.figures_for(m)
        figs = _matching(figs, temperature, thinking)
        if not info.learned:
            at = tuple(FigureAtK(f, f.tau_at(k), f.p1, k > f.k) for f in figs)
            return Band(
                method=m,
                k=k,
                dataset=chosen_dataset,
                basis="method",
                low=None,
                typical=None,
                high=float(k + 1),
                p1_low=None,
                p1_typical=None,
                dead_excess=None,
                dead_position_1=None,
                figures=at,
                note="its acceptance depends on how repetitive the text is; a low τ is "
                "normal on text without repeats, so the level cannot show breakage",
            )
        if not figs:
            return None
        at = _at_k(figs, k)
        # sampled requests accept less than greedy ones: a few figures measured at this temperature that sit above the
        # greedy ones do not make the band stricter than the greedy band
        unsampled = self.band(method, k, dataset, None, thinking) if temperature and temperature > 0 else None
        measured = [x for x in at if x.figure.role == "measured"]
        thresholds = [x for x in at if x.figure.role == "threshold"]
        # candidates for the low edge: margin × each measured τ at k, and each CI threshold at k
        candidates = [(self.margin * x.tau, x) for x in measured] + [(x.tau, x) for x in thresholds]
        low_value, low_from = min(candidates, key=lambda c: c[0]) if candidates else (None, None)
        low = max(1.0, low_value) if low_value is not None else None
        typical = median(x.tau for x in measured) if measured else None
        # A position-1 rate does not depend on k for chain drafting: stated rates only
        p1s = [x.figure.p1 for x in measured if x.figure.p1 is not None]
        p1_low = self.margin * min(p1s) if p1s else None
        p1_typ = median(p1s) if p1s else None
        extrapolated = bool(low_from and low_from.extrapolated)
        if unsampled is not None:
            if low is not None and unsampled.low is not None and unsampled.low < low:
                low, extrapolated = unsampled.low, unsampled.extrapolated
            if typical is not None and unsampled.typical is not None:
                typical = min(typical, unsampled.typical)
        return Band(
            method=m,
            k=k,
            dataset=chosen_dataset,
            basis="method",
            low=low,
            typical=typical,
            high=float(k + 1),
            p1_low=p1_low,
            p1_typical=p1_typ,
            dead_excess=self.dead_excess,
            dead_position_1=self.dead_position_1,
            figures=at,
            extrapolated=extrapolated,
            sparse=len(measured) < self.min_figures,
            note=info.note,
        )


def _matching(figs: list[Figure], temperature: float | None, thinking: bool | None) -> list[Figure]:
    """The figures measured like the deployment runs (temperature within 0.3, thinking mode), when some are; all of
    them otherwise (a band from other conditions is wider, never empty)."""
    out = figs
    if temperature is not None:
        same = [f for f in out if abs((f.temperature or 0.0) - temperature) <= 0.3]
        out = same or out
    if thinking is not None:
        same = [f for f in out if f.thinking in (None, thinking)]
        out = same or out
    return out


def _at_k(figs: list[Figure], k: int) -> tuple[FigureAtK, ...]:
    """Each figure's τ at k. A pair measured at several k (a per-k series: InferenceX golden AL, vLLM CI at two k) is
    read from its own measurements — the one at k, linear between two, the largest k's figure above it (acceptance
    saturates: a single MTP head reused, a block drafter past its block) — because the geometric model over-predicts
    across k (anchors-2026-12.md §5: Qwen3.5-397B MTP from k = 1 predicts 6.85 at k = 8, measured 5.21). A pair
    with one k is extrapolated by the geometric model, and says so."""
    series: dict[tuple[str, str, float | None, bool | None], dict[int, Figure]] = {}
    for f in figs:
        series.setdefault((f.pair, f.dataset, f.temperature, f.thinking), {})[f.k] = f
    out = []
    for f in figs:
        ks = series[(f.pair, f.dataset, f.temperature, f.thinking)]
        if len(ks) < 2:
            out.append(FigureAtK(f, f.tau_at(k), f.p1, k > f.k))
            continue
        if f.k != _nearest_k(ks, k):
            continue  # one entry per series: its figure nearest to k speaks for it
        out.append(FigureAtK(f, _series_tau(ks, k), f.p1, False))
    return tuple(out)


def _nearest_k(ks: dict[int, Figure], k: int) -> int:
    below = [x for x in ks if x <= k]
    return max(below) if below else min(ks)


def _series_tau(ks: dict[int, Figure], k: int) -> float:
    if k in ks:
        return ks[k].tau
    below, above = [x for x in ks if x < k], [x for x in ks if x > k]
    if not below:
        return ks[min(above)].tau_at(k)  # below the series: the smallest k's curve, truncated
    if not above:
        return ks[max(below)].tau  # above the series: saturated, never grown by the geometric model
    lo, hi = max(below), min(above)
    return ks[lo].tau + (ks[hi].tau - ks[lo].tau) * (k - lo) / (hi - lo)


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def normalise_method(method: str) -> str:
    m = method.strip().lower()
    return ALIASES.get(m, m)


def _rates(f: FigureShape, where: str) -> tuple[tuple[float, ...], float | None]:
    """(per-position rates, position-1 rate) a figure states."""
    rates = tuple(float(x) for x in f.per_position)
    if rates and len(rates) != f.k:
        raise KnowledgeError(f"{where}.per_position: must list k = {f.k} rates")
    if any(b > a + 1e-9 for a, b in zip(rates, rates[1:], strict=False)):
        raise KnowledgeError(f"{where}.per_position: must be non-increasing (rates are unconditional)")
    if f.per_position_1 is not None and rates:
        raise KnowledgeError(f"{where}: give per_position or per_position_1, not both")
    return rates, rates[0] if rates else f.per_position_1


def _parse_figure(
    f: FigureShape, where: str, methods: Mapping[str, MethodInfo], sources: Mapping[str, Source]
) -> list[Figure]:
    """One [[figure]], shaped: what the shape cannot say (names that exist, τ that fits k and the rates)."""
    if f.method not in methods:
        raise KnowledgeError(f"{where}.method: {f.method!r} is not one of the [[method]] ids")
    src = sources.get(f.source)
    if src is None:
        raise KnowledgeError(f"{where}.source: {f.source!r} names no [[source]] id")
    if not f.use and not f.why:
        raise KnowledgeError(f"{where}.use: use = false needs a `why`")
    rates, p1 = _rates(f, where)
    figures: list[Figure] = []
    for dataset, tau in f.tau.items():
        t = float(tau)
        if t > f.k + 1.0:
            raise KnowledgeError(f"{where}.tau.{dataset}: {t} is above k + 1 = {f.k + 1}")
        if rates and len(f.tau) == 1 and abs(1.0 + sum(rates) - t) > 0.05 * t:
            raise KnowledgeError(f"{where}: 1 + Σ per_position = {1 + sum(rates):.2f} disagrees with τ {t}")
        figures.append(
            Figure(
                method=f.method,
                k=f.k,
                dataset=dataset,
                tau=t,
                role=f.role,
                pair=f.pair,
                source=src,
                per_position=rates,
                p1=p1,
                use=f.use,
                why=f.why,
                temperature=None if f.temperature is None else float(f.temperature),
                thinking=f.thinking,
                specific=f.specific,
            )
        )
    return figures


def parse_reference(data: Mapping) -> Reference:
    """reference.toml, validated: shapes by schema.ReferenceFile, then what only the whole file can say."""
    from ..schema import ReferenceFile, convert  # msgspec: not at start-up (tests/core/test_startup.py)

    doc = convert(data, ReferenceFile, "reference.toml", KnowledgeError)
    methods: dict[str, MethodInfo] = {}
    for i, m in enumerate(doc.method):
        if m.id in methods:
            raise KnowledgeError(f"reference.toml: method[{i}].id: duplicate method {m.id!r}")
        methods[m.id] = MethodInfo(m.id, m.learned, float(m.prior), m.note)
    total = sum(m.prior for m in methods.values())
    if methods and not math.isclose(total, 1.0, abs_tol=1e-6):
        raise KnowledgeError(f"reference.toml: method: priors sum to {total:.3f}, not 1")
    sources: dict[str, Source] = {}
    for i, s in enumerate(doc.source):
        if s.id in sources:
            raise KnowledgeError(f"reference.toml: source[{i}].id: duplicate source {s.id!r}")
        sources[s.id] = Source(s.id, s.title, s.url, s.kind)
    figures: list[Figure] = []
    for i, f in enumerate(doc.figure):
        figures.extend(_parse_figure(f, f"reference.toml: figure[{i}]", methods, sources))
    for info in methods.values():
        if info.learned and not any(f.method == info.id and f.use for f in figures):
            raise KnowledgeError(
                f"reference.toml: learned method {info.id!r} has no figure in use: it could have no band"
            )
    return Reference(
        version=doc.version,
        margin=float(doc.rules.margin),
        dead_excess=float(doc.rules.dead_excess),
        dead_position_1=float(doc.rules.dead_position_1),
        min_figures=doc.rules.min_figures,
        methods=methods,
        sources=sources,
        figures=tuple(figures),
    )


@lru_cache(maxsize=1)
def default_reference() -> Reference:
    from ..schema import parse_toml

    text = resources.files("dflash_doctor.interpret").joinpath("reference.toml").read_bytes()
    return parse_reference(parse_toml(text, "reference.toml", KnowledgeError))


def band(
    method: str, k: int, dataset: str | None = None, temperature: float | None = None, thinking: bool | None = None
) -> Band | None:
    """The method's healthy band at k (None for an unknown method or one without figures)."""
    return default_reference().band(method, k, dataset, temperature, thinking)


def method_prior() -> dict[str, float]:
    return default_reference().method_prior()


def healthy_band(
    method: str | None,
    k: int,
    dataset: str | None = None,
    drafter: str | None = None,
    baselines=None,
    temperature: float | None = None,
    thinking: bool | None = None,
) -> Band | None:
    """A pair baseline (baselines.toml) when the drafter is known there — it overrides the method band —
    else the method band. Pair low edge: the same margin × the pair's reference τ at the served k."""
    ref = default_reference()
    if drafter:
        in_force = baselines or default_baselines()
        user = getattr(in_force, "user", None)
        b = user if user is not None and drafter == user.id else in_force.find(drafter)
        if b is not None and k >= 1:
            name, _tau, _exact = b.tau_for(dataset)
            curve = b.reference_curve(dataset, min(k, b.k))
            tau_k = 1.0 + sum(curve)
            return Band(
                method=b.method,
                k=k,
                dataset=name,
                basis="pair",
                low=ref.margin * tau_k,
                typical=tau_k,
                high=float(k + 1),
                p1_low=ref.margin * curve[0] if curve else None,
                p1_typical=curve[0] if curve else None,
                dead_excess=ref.dead_excess,
                dead_position_1=ref.dead_position_1,
                extrapolated=k > b.k,
                note=f"pair baseline {b.id} ({b.source})",
            )
    if not method:
        return None
    return ref.band(method, k, dataset, temperature, thinking)
