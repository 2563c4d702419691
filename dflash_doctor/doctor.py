"""The diagnosis service: evidence -> checks -> ranking -> Report. Every command goes through here."""

from __future__ import annotations

from typing import Sequence

from . import __version__
from .check import Check, run_checks
from .evidence import EvidenceSet, Finding, Kind, Report, Status
from .rank.advice import advise_k
from .rank.knowledge import Knowledge, default_knowledge
from .rank.scoring import rank
from .registry import load_checks


def build_report(evidence: EvidenceSet, checks: Sequence[Check] | None = None, knowledge: Knowledge | None = None,
                 areas: Sequence[str] | None = None) -> tuple[Report, list[str]]:
    """Run checks over the evidence and rank causes. Returns the report and loader warnings."""
    warnings: list[str] = []
    if checks is None:
        reg = load_checks()
        checks, warnings = reg.checks, reg.warnings
    if areas is not None:
        checks = [c for c in checks if c.area in areas]
    findings: list[Finding] = [
        Finding("inputs", Status.COULD_NOT_CHECK, f"could not check {what}: {reason}")
        for what, reason in evidence.collection_errors
    ]
    findings += run_checks(checks, evidence)
    ranking = rank(findings, evidence, knowledge or default_knowledge())
    report = Report(
        target=evidence.label, verdict=ranking.verdict, acceptance=evidence.value(Kind.ACCEPTANCE),
        findings=tuple(findings), causes=ranking.causes, evidence=tuple(evidence), missing=tuple(evidence.missing_items),
        notes=tuple(evidence.notes) + ranking.notes, tool_version=__version__,
        advice={"num_speculative_tokens": k} if (k := advise_k(evidence)) else None,
    )
    return report, warnings
