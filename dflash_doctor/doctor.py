"""The diagnosis service: evidence -> checks -> ranking -> Report. Every command goes through here."""

from __future__ import annotations

from typing import Sequence

from . import __version__
from .check import Check, declared_observations, run_checks
from .evidence import EvidenceSet, Finding, Report, Status
from .rank.advice import advise_k
from .rank.knowledge import Knowledge
from .rank.scoring import rank
from .registry import load_checks
from .settings import DEFAULT, Settings


def build_report(evidence: EvidenceSet, checks: Sequence[Check] | None = None, knowledge: Knowledge | None = None,
                 areas: Sequence[str] | None = None, settings: Settings | None = None) -> tuple[Report, list[str]]:
    """Run checks over the evidence and rank causes. Returns the report and loader warnings.

    Knowledge and baselines come from `settings` (resolved once at the CLI) unless given; the knowledge's
    rules are validated against the observations the loaded checks declare."""
    settings = settings or DEFAULT
    warnings: list[str] = []
    full = checks is None
    if checks is None:
        reg = load_checks()
        checks, warnings = reg.checks, reg.warnings
    if knowledge is None:
        knowledge = settings.knowledge(frozenset(declared_observations(checks)) if full else None)
    if evidence._baselines is None:
        evidence.baselines = settings.baselines()
    if areas is not None:
        checks = [c for c in checks if c.area in areas]
    findings: list[Finding] = [
        Finding("inputs", Status.COULD_NOT_CHECK, f"could not check {what}: {reason}")
        for what, reason in evidence.collection_errors
    ]
    findings += run_checks(checks, evidence)
    ranking = rank(findings, evidence, knowledge)
    report = Report(
        target=evidence.label, verdict=ranking.verdict, acceptance=evidence.acceptance(),
        findings=tuple(findings), causes=ranking.causes, evidence=tuple(evidence), missing=tuple(evidence.missing_items),
        notes=tuple(evidence.notes) + ranking.notes, tool_version=__version__,
        advice={"num_speculative_tokens": k} if (k := advise_k(evidence)) else None,
    )
    return report, warnings


# Imported while a host works (the collectors' `meanwhile`): what the diagnosis needs once its answers arrive.
# pandas is not among them: summaries need numpy only, and on a loopback host the import's CPU is taken
# from the host's own work.
WARM_MODULES = ("numpy", "dflash_doctor.parse.frame", "dflash_doctor.models.facts",
                "dflash_doctor.models.engine_support", "dflash_doctor.render.json_report")


def warm_imports() -> None:
    """Import the modules used after a host's answers arrive (~0.4 s of imports), and the checks."""
    import importlib

    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # a module that cannot be imported reports that itself where it is needed
            pass
    try:
        load_checks(include_plugins=False)
    except Exception:
        pass
