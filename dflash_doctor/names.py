"""The deployment's names as the evidence gives them (drafter, target, their revisions, engine release, host,
logs): what the report's suggested commands are filled with, and what a saved probe's pair is compared with."""

from __future__ import annotations

from dataclasses import dataclass, field

from .evidence import EvidenceSet
from .evidence.acceptance import StartupFacts
from .evidence.engine_facts import EngineAnalysis
from .evidence.model_facts import DrafterFacts, TargetFacts
from .evidence.payloads import EngineId, HostSummary, LaunchConfig, ScanStats
from .evidence.serialise import serial
from .model_ref import model_identity


@dataclass(frozen=True)
class Names:
    """The deployment's names as the evidence gives them, for commands a user can paste."""

    drafter: str | None = None
    drafter_revision: str | None = None
    target: str | None = None
    target_revision: str | None = None
    engine: str | None = None
    engine_version: str | None = None
    engine_source_read: bool = False
    host: str | None = None  # ssh://… or local, when the evidence came from a host
    # local log files the evidence was read from (not in the report: paths on the user's machine)
    logs: tuple[str, ...] = field(default=(), metadata=serial(omit=True))

    @property
    def engine_spec(self) -> str | None:
        if not self.engine:
            return None
        return f"{self.engine}=={self.engine_version}" if self.engine_version else None


def _identity(facts, said: tuple, field: str, named: str | None) -> tuple[str | None, str | None]:
    """A model's (name, revision): its facts' source, else what the launch/startup lines say, else the flag."""
    if facts is not None and (found := model_identity(facts.source or facts.config_path))[0]:
        return found
    for src in said:
        if src is not None and getattr(src, field):
            return model_identity(getattr(src, field))
    return model_identity(named) if named else (None, None)


def names_of(evidence: EvidenceSet) -> Names:
    launch, st = evidence.get(LaunchConfig), evidence.get(StartupFacts)
    drafter, drev = _identity(evidence.get(DrafterFacts), (launch, st), "drafter", evidence.named(DrafterFacts))
    target, trev = _identity(evidence.get(TargetFacts), (launch, st), "model", evidence.named(TargetFacts))
    eng = evidence.get(EngineId)
    engine = eng.name if eng is not None else (st.engine if st is not None else None)
    version = eng.version if eng is not None else (st.version if st is not None else None)
    h = evidence.item(HostSummary)
    host = None
    if h is not None:
        host = h.source.location if not h.source.location.endswith("(bundle)") else None
    logs = tuple(
        e.source.location for e in evidence.all(ScanStats) if e.source.kind == "file" and e.source.host is None
    )
    return Names(
        drafter=drafter,
        drafter_revision=drev,
        target=target,
        target_revision=trev,
        engine=engine,
        engine_version=version,
        engine_source_read=evidence.has(EngineAnalysis),
        host=host,
        logs=tuple(x for part in logs for x in part.split(", ") if x and x != "-"),
    )
