"""num_speculative_tokens against the drafter's block size (DFlash trains k = block_size − 1)."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.acceptance import StartupFacts
from dflash_doctor.evidence.model_facts import DrafterFacts
from dflash_doctor.evidence.payloads import LaunchConfig
from dflash_doctor.models.launch_view import launch_k


class SpecTokensVsBlock(Check):
    id = "spec-tokens-vs-block"
    area = "drafter"
    title = "num_speculative_tokens fits the block size"
    needs = (DrafterFacts,)
    wants = (LaunchConfig, StartupFacts)

    def run(self, evidence: EvidenceSet):
        dev = evidence.require_item(DrafterFacts)
        d = evidence.require(DrafterFacts)
        k, kev = launch_k(evidence)
        refs = tuple(e.ref for e in (dev, kev) if e is not None)
        if not d.is_dflash:
            return [self.finding(Status.NOT_APPLICABLE, f"{d.method} drafter: no block size to match", refs=refs)]
        if d.block_size is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK, "could not check: the drafter config states no block_size", refs=refs
                )
            ]
        if k is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: block size {d.block_size} "
                    f"(expects k = {d.block_size - 1}); the launch's k is not known "
                    "(give --launch or --num-speculative-tokens)",
                    refs=refs,
                )
            ]
        want = d.block_size - 1
        if k == want:
            return [self.finding(Status.OK, f"k = {k}, the drafter's block size {d.block_size} − 1", refs=refs)]
        if k > want:
            return [
                self.finding(
                    Status.FAIL,
                    f"k = {k} exceeds the block size {d.block_size} − 1 = "
                    f"{want}: positions past the trained block draft noise",
                    refs=refs,
                    remedy=f"Launch with k = {want} (num_speculative_tokens in --speculative-config).",
                )
            ]
        return [
            self.finding(
                Status.WARN,
                f"k = {k} is below the block size {d.block_size} − 1 = {want}: "
                "fine, but the drafter can propose more per step",
                refs=refs,
                remedy=f"k = {want} matches training.",
            )
        ]
