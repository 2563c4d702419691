"""Can the named engine release serve this drafter, and does it honour its sliding windows? (the release
table's answer, through the same outcome logic as the source; engine-source-swa answers from the installed
source when a host was read, and outranks this)"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.evidence.engine_facts import EngineAnalysis, EngineSupport
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import Environment, LaunchConfig
from dflash_doctor.models.architectures import support_from_evidence

from ._engine_view import (
    LAUNCH_OBSERVATIONS,
    SWA_OBSERVATIONS,
    drafter_span,
    source_outcome,
    swa_finding,
    table_outcome,
)


class EngineDrafterSwa(Check):
    id = "engine-drafter-swa"
    area = "engine"
    title = "Engine can serve the drafter and honours its sliding windows"
    needs = (DrafterFacts, EngineSupport)
    wants = (Environment, AcceptanceSummary, EngineAnalysis, TargetFacts, LaunchConfig)
    observations = SWA_OBSERVATIONS + LAUNCH_OBSERVATIONS

    def run(self, evidence: EvidenceSet):
        dev, sev = evidence.require_item(DrafterFacts), evidence.require_item(EngineSupport)
        d, row = evidence.require(DrafterFacts), evidence.require(EngineSupport)
        refs = (dev.ref, sev.ref)
        src_o, _ = source_outcome(evidence)
        if src_o is not None and src_o.decided:
            # The installed source on the host outranks the release table (patched or source installs differ).
            tab = table_outcome(evidence, row)
            agree = "agrees" if tab.value == src_o.value else f"disagrees: the table alone says {tab.value}"
            return [
                self.finding(
                    Status.NOT_APPLICABLE,
                    f"the installed engine source was read ({src_o.value}); engine-source-swa "
                    f"decides, not the release table (which {agree})",
                    refs=refs + (evidence.ref(EngineAnalysis),),
                )
            ]

        arch = support_from_evidence(evidence)
        if arch is not None and arch.loadable is False:
            return [
                self.finding(
                    Status.NOT_APPLICABLE,
                    f"does not apply: {arch.sentence} (engine-loads-drafter reports it)",
                    refs=refs,
                )
            ]
        if not d.is_dflash:
            return [
                self.finding(
                    Status.NOT_APPLICABLE,
                    f"the drafter is {d.method}, not DFlash: the DFlash sliding-window "
                    "support of the engine does not apply",
                    refs=refs,
                )
            ]
        if not d.layers:
            return [
                self.finding(Status.COULD_NOT_CHECK, "could not check: the drafter's layers are unknown", refs=refs)
            ]
        o = table_outcome(evidence, row)
        where = f"the engine-support table ({row.engine} {row.range}" + (
            f", read from {row.verified} wheels)" if row.verified else ", from the reference)"
        )
        extra: tuple[str, ...] = ()
        if d.swa_layers and row.verified:
            extra = tuple(
                f"{row.engine} {row.verified} source: {x}"
                for x in row.source_about("sliding", "causal", "NotImplementedError")
            )
        return [swa_finding(self, o, refs, where, extra, lead=drafter_span(evidence))]
