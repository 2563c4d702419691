"""Sliding-window drafter layers, and whether the named engine release honours them.

The seed case: a drafter with 4 sliding layers (window 2048) served by an engine that silently runs
them as full, non-causal attention. Neither fact appears in any log; both come from the drafter's
config and the engine-support table.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.model_facts import DrafterFacts
from dflash_doctor.models.facts import layer_span


class DrafterSwa(Check):
    id = "drafter-swa"
    area = "drafter"
    title = "Drafter sliding-window layers"
    needs = (DrafterFacts,)
    observations = ("drafter-swa:present", "drafter-swa:absent")

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(DrafterFacts)
        d = evidence.require(DrafterFacts)
        if not d.layers:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: the drafter config has no usable num_hidden_layers, so its layers are unknown",
                    refs=(ev.ref,),
                )
            ]
        swa = d.swa_layers
        other = sorted({la.attention for la in d.layers} - {"full", "sliding"})
        if other:
            counts = ", ".join(
                f"{sum(1 for la in d.layers if la.attention == k)} {k}" for k in ("full", "sliding", *other)
            )
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: the layers are not all attention layers ({counts}); no drafter "
                    "reader knows this shape",
                    refs=(ev.ref,),
                )
            ]
        if not swa:
            what = "the drafter's single layer is" if len(d.layers) == 1 else f"all {len(d.layers)} drafter layers are"
            return [
                self.finding(
                    Status.OK,
                    f"{what} full attention",
                    refs=(ev.ref,),
                    observations=(
                        Observation("drafter-swa:absent", f"{len(d.layers)} layers, none sliding", (ev.ref,)),
                    ),
                )
            ]
        causal = "causal" if all(d.layers[i].causal for i in swa) else "non-causal"
        which = f"drafter layer {layer_span(swa)} is" if len(swa) == 1 else f"drafter layers {layer_span(swa)} are"
        msg = (
            f"{which} sliding-window attention (window {d.sliding_window}, "
            f"{causal}); {len(d.layers) - len(swa)} full (from {d.swa_config})"
        )
        return [
            self.finding(
                Status.WARN if d.swa_mix == "mixed" else Status.OK,
                msg,
                refs=(ev.ref,),
                remedy="Serve it with an engine release that honours drafter layer_types "
                "(`--engine NAME==VERSION` says whether yours does).",
                observations=(Observation("drafter-swa:present", msg, (ev.ref,)),),
            )
        ]
