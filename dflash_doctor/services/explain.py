"""`dflash-doctor explain NAME`: what a cause or a check means, the evidence that moves it and its fix — from the
same knowledge (causes.toml) and check registry the diagnosis uses, so the explanation cannot drift from it."""

from __future__ import annotations

import difflib
import inspect
import math
from dataclasses import dataclass, field

from ..errors import UsageError
from ..evidence import kind_of


@dataclass(frozen=True)
class Explanation:
    kind: str  # "cause" | "check"
    id: str
    title: str
    about: str = ""  # what it is, in prose
    fields: tuple[tuple[str, str], ...] = ()  # (label, value) lines
    evidence: tuple[tuple[float, str, str], ...] = ()  # (weight, observation, what it says), strongest first
    fix: str | None = None
    next_step: str | None = None
    related: tuple[str, ...] = field(default=())  # the checks that speak to a cause / the causes a check moves

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "id": self.id,
            "title": self.title,
            "about": self.about,
            "fields": dict(self.fields),
            "evidence": [{"weight": w, "observation": o, "text": t} for w, o, t in self.evidence],
            "fix": self.fix,
            "next_step": self.next_step,
            "related": list(self.related),
        }


def explain(name: str, knowledge, checks) -> Explanation:
    """The cause or check called `name`; an unknown name is a usage error naming the closest ones."""
    by_check = {c.id: c for c in checks}
    declared: dict[str, list[str]] = {}
    for c in checks:
        for o in getattr(c, "observations", ()) or ():
            declared.setdefault(o, []).append(c.id)
    if name in knowledge.causes:
        return _cause(knowledge.causes[name], knowledge, declared)
    if name in by_check:
        return _check(by_check[name], knowledge)
    known = sorted({*knowledge.causes, *by_check})
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    raise UsageError(
        f"no cause or check is called {name!r}" + (f"; did you mean {' or '.join(close)}?" if close else ""),
        hint="the causes are listed in a report's JSON (`causes`), the checks by `dflash-doctor checks list`",
    )


def _cause(spec, knowledge, declared: dict[str, list[str]]) -> Explanation:
    rules = sorted((r for r in knowledge.rules if r.cause == spec.id), key=lambda r: (-abs(r.weight), r.observation))
    prior = 1 / (1 + math.exp(-spec.prior))
    fields = [("prior", f"{prior:.2f} before any evidence")]
    if spec.methods:
        fields.append(("methods", ", ".join(spec.methods)))
    if spec.decided_by:
        fields.append(("decided by", ", ".join(spec.decided_by)))
    if spec.ablation:
        fields.append(("probe ablation", f"--ablate {spec.ablation}"))
    related = sorted({c for r in rules for c in declared.get(r.observation, ())})
    return Explanation(
        kind="cause",
        id=spec.id,
        title=spec.title,
        fields=tuple(fields),
        evidence=tuple((r.weight, r.observation, r.text) for r in rules),
        fix=spec.fix,
        next_step=spec.next_step,
        related=tuple(related),
    )


def _check(check, knowledge) -> Explanation:
    doc = inspect.getdoc(type(check)) or inspect.getdoc(inspect.getmodule(type(check))) or ""
    if doc == inspect.getdoc(_base(check)):
        doc = inspect.getdoc(inspect.getmodule(type(check))) or ""
    obs = tuple(getattr(check, "observations", ()) or ())
    fields = [("area", check.area), ("needs", ", ".join(kind_of(k).value for k in check.needs) or "nothing")]
    wants = getattr(check, "wants", ()) or ()
    if wants:
        fields.append(("uses if present", ", ".join(kind_of(k).value for k in wants)))
    rules = sorted((r for r in knowledge.rules if r.observation in obs), key=lambda r: (r.cause, -r.weight))
    return Explanation(
        kind="check",
        id=check.id,
        title=check.title,
        about=" ".join(doc.split()),
        fields=tuple(fields),
        evidence=tuple((r.weight, r.observation, f"{r.cause}: {r.text}") for r in rules),
        related=tuple(sorted({r.cause for r in rules})),
    )


def _base(check):
    for cls in type(check).__mro__[1:]:
        if cls.__name__ == "Check":
            return cls
    return object
