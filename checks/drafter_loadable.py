"""Can the named engine release load this drafter at all? (A DFlash2 drafter on a vLLM release before
0.28 is refused at load; everything else an engine "does" with it is moot.) From architectures.toml,
derived from the engines' model registries."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import EngineId
from dflash_doctor.models.architectures import support_from_evidence


class DrafterLoadable(Check):
    id = "engine-loads-drafter"
    area = "engine"
    title = "Engine release registers the drafter's architecture"
    needs = (DrafterFacts, EngineId)
    wants = (TargetFacts,)
    observations = ("engine-arch:registered", "engine-arch:unregistered")

    def run(self, evidence: EvidenceSet):
        dev, eng = evidence.require_item(DrafterFacts), evidence.require_item(EngineId)
        refs = (dev.ref, eng.ref)
        a = support_from_evidence(evidence)
        if a is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: the engine or its version is not one whose model registry was read",
                    refs=refs,
                )
            ]
        if a.loadable is True:
            return [
                self.finding(
                    Status.OK,
                    a.sentence,
                    refs=refs,
                    observations=(Observation("engine-arch:registered", a.sentence, refs),),
                )
            ]
        if a.loadable is False:
            return [
                self.finding(
                    Status.FAIL,
                    a.sentence,
                    refs=refs,
                    remedy="Use an engine release that registers this drafter architecture "
                    "(architectures.toml lists the first release of each).",
                    observations=(Observation("engine-arch:unregistered", a.sentence, refs),),
                )
            ]
        return [self.finding(Status.COULD_NOT_CHECK, f"could not check: {a.sentence}", refs=refs)]
