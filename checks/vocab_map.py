"""EAGLE-3 draft vocabularies smaller than the target's need their d2t map; without it drafts collapse.
The map only means something for the tokenizer it was built on: the drafter's own `vocab_size` (the
target vocabulary it was trained against) must be the target's."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts


class DraftVocabMap(Check):
    id = "draft-vocab-map"
    area = "drafter"
    title = "Draft vocabulary mapped to the target's"
    needs = (DrafterFacts,)
    wants = (TargetFacts,)
    observations = ("vocab-map:missing", "vocab-map:ok")

    def run(self, evidence: EvidenceSet):
        dev, tev = evidence.require_item(DrafterFacts), evidence.item(TargetFacts)
        d = evidence.require(DrafterFacts)
        refs = tuple(e.ref for e in (dev, tev) if e is not None)
        if d.draft_vocab_size is None:
            msg = (
                "DFlash drafts with the target's own LM head: no draft vocabulary to map"
                if d.is_dflash
                else "no draft_vocab_size: the drafter uses the full vocabulary"
            )
            return [self.finding(Status.OK, msg, refs=refs, observations=(Observation("vocab-map:ok", msg, refs),))]
        target_vocab = tev.value.vocab_size if tev is not None else None
        built_for = d.vocab_size
        if target_vocab is not None and built_for is not None and built_for != target_vocab:
            msg = (
                f"the draft vocabulary ({d.draft_vocab_size} tokens) maps into a {built_for}-token vocabulary; this "
                f"target has {target_vocab}: its d2t/t2d point into another tokenizer"
            )
            return [
                self.finding(
                    Status.FAIL,
                    msg,
                    refs=refs,
                    observations=(Observation("vocab-map:missing", msg, refs),),
                    remedy="Use the drafter built for this target's tokenizer.",
                )
            ]
        if target_vocab is None:
            target_vocab = built_for
            if target_vocab is None:
                return [
                    self.finding(
                        Status.COULD_NOT_CHECK, "could not check: the target vocabulary size is unknown", refs=refs
                    )
                ]
        if d.draft_vocab_size >= target_vocab:
            msg = f"draft vocabulary {d.draft_vocab_size} covers the target's {target_vocab}"
            return [self.finding(Status.OK, msg, refs=refs, observations=(Observation("vocab-map:ok", msg, refs),))]
        w = d.weights
        if w is None or w.format != "safetensors" or not w.tensors:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: draft vocabulary {d.draft_vocab_size} < "
                    f"{target_vocab} needs a d2t tensor, and the weight headers could not be read",
                    refs=refs,
                )
            ]
        d2t = w.tensors.get("d2t") or w.tensors.get("model.d2t")
        if d2t is None:
            msg = (
                f"draft vocabulary {d.draft_vocab_size} < target {target_vocab} and no d2t tensor: draft ids "
                "cannot be mapped to target ids"
            )
            return [
                self.finding(
                    Status.FAIL,
                    msg,
                    refs=refs,
                    remedy="Use a checkpoint that ships d2t (the speculators/EAGLE-3 export), or one "
                    "with the full target vocabulary.",
                    observations=(Observation("vocab-map:missing", msg, refs),),
                )
            ]
        if d2t.shape and d2t.shape[0] != d.draft_vocab_size:
            msg = f"d2t has {d2t.shape[0]} entries but draft_vocab_size is {d.draft_vocab_size}"
            return [
                self.finding(
                    Status.FAIL,
                    msg,
                    refs=refs,
                    observations=(Observation("vocab-map:missing", msg, refs),),
                    remedy="The d2t tensor does not belong to this config; re-export the drafter.",
                )
            ]
        t2d = w.tensors.get("t2d") or w.tensors.get("model.t2d")
        if t2d is not None and t2d.shape and t2d.shape[0] != target_vocab:
            msg = f"t2d has {t2d.shape[0]} entries; the target vocabulary is {target_vocab}"
            return [
                self.finding(
                    Status.FAIL,
                    msg,
                    refs=refs,
                    observations=(Observation("vocab-map:missing", msg, refs),),
                    remedy="The vocabulary map was built for another tokenizer; use the matching drafter.",
                )
            ]
        msg = f"draft vocabulary {d.draft_vocab_size} mapped to the target's {target_vocab} by d2t {list(d2t.shape)}"
        return [self.finding(Status.OK, msg, refs=refs, observations=(Observation("vocab-map:ok", msg, refs),))]
