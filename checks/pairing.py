"""Was the drafter built for this target? Layer ids, layer count, hidden size, vocabulary, mask token,
and the shape of the drafter's fc input — from configs and weight headers only."""

from __future__ import annotations


from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status


class DrafterTargetPairing(Check):
    id = "drafter-target-pairing"
    area = "pairing"
    title = "Drafter fits the target"
    needs = (Kind.DRAFTER, Kind.TARGET)
    observations = ("pairing:mismatch", "pairing:ok")

    def run(self, evidence: EvidenceSet):
        dev, tev = evidence.get(Kind.DRAFTER), evidence.get(Kind.TARGET)
        d, t = evidence.drafter(), evidence.target()
        refs = (dev.ref, tev.ref)
        bad: list[str] = []
        good: list[str] = []
        notes: list[str] = []
        n = t.num_hidden_layers
        if t.hybrid_linear:
            notes.append(f"target is a GatedDeltaNet hybrid ({t.layer_type_counts.get('linear_attention', 0)} "
                         f"linear_attention + {t.layer_type_counts.get('full_attention', 0)} full_attention layers): "
                         "linear attention is not sliding-window attention")
        if t.text_config_nested:
            notes.append(f"target text config read from text_config ({', '.join(t.architectures) or 'wrapper'})")
        ids = d.target_layer_ids
        if ids is not None and n is not None:
            out = [i for i in ids if i < 0 or i >= n]
            if out:
                bad.append(f"target_layer_ids {list(out)} do not exist in a {n}-layer target")
            elif d.layer_ids_source != "eagle_aux_hidden_state_layer_ids" and d.is_dflash and n - 1 in ids:
                bad.append(f"target_layer_ids tap the last layer ({n - 1}), whose output is the final-normed "
                           "state, not a feature the drafter can use")
            else:
                good.append(f"layer ids {list(ids)} within {n} target layers")
        if d.num_target_layers is not None and n is not None:
            if d.num_target_layers != n:
                bad.append(f"drafter was built for a {d.num_target_layers}-layer target; this target has {n}")
            else:
                good.append(f"num_target_layers {n}")
        want_h = d.target_hidden_size or d.hidden_size
        if want_h is not None and t.hidden_size is not None:
            if want_h != t.hidden_size:
                bad.append(f"drafter expects target hidden size {want_h}; target has {t.hidden_size}")
            else:
                good.append(f"hidden size {want_h}")
        fc = _fc_in(d)
        if fc is not None and ids and t.hidden_size:
            want = len(ids) * t.hidden_size
            if fc != want:
                bad.append(f"fc weight takes {fc} inputs; {len(ids)} taps × target hidden {t.hidden_size} = {want}")
            else:
                good.append(f"fc input {fc} = {len(ids)} × {t.hidden_size}")
        dv, tv = d.vocab_size, t.vocab_size
        if dv is not None and tv is not None and d.draft_vocab_size is None:
            if dv == tv:
                good.append(f"vocabulary {tv}")
            elif _padding_only(dv, tv):
                notes.append(f"vocab sizes differ only by padding ({dv} vs {tv}); token ids agree")
            else:
                bad.append(f"drafter vocabulary {dv} vs target {tv}")
        mask = d.mask_token_id
        if mask is not None and tv is not None:
            if mask >= tv:
                bad.append(f"mask_token_id {mask} is outside the target's vocabulary ({tv})")
            elif t.special_token_ids is not None:
                if mask in t.special_token_ids:
                    good.append(f"mask_token_id {mask} is a named token in the target's tokenizer")
                else:
                    notes.append(f"mask_token_id {mask} is not a named token in {', '.join(t.tokenizer_files)}: an "
                                 f"unused embedding slot below vocab {tv} (fine with this exact target)")
            else:
                notes.append(f"mask_token_id {mask} < vocab {tv}; no tokenizer files beside the target to confirm it")
        if not bad and not good:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: neither config states comparable layer, "
                                 "hidden-size or vocabulary fields", refs=refs, details=tuple(notes))]
        if bad:
            msg = "drafter does not fit this target: " + "; ".join(bad)
            return [self.finding(Status.FAIL, msg, refs=refs, details=tuple(notes + [f"agrees: {g}" for g in good]),
                                 remedy="Serve the drafter with the target it was trained for (its model card "
                                        "names it), or pick the drafter built for this target.",
                                 observations=(Observation("pairing:mismatch", "; ".join(bad), refs),))]
        msg = "drafter fits this target: " + ", ".join(good)
        return [self.finding(Status.OK, msg, refs=refs, details=tuple(notes),
                             observations=(Observation("pairing:ok", msg, refs),))]


def _fc_in(d) -> int | None:
    w = d.weights
    if w is None:
        return None
    for name in ("fc.weight", "model.fc.weight"):
        info = w.tensors.get(name)
        if info is not None and len(info.shape) == 2:
            return info.shape[1]
    return None


def _padding_only(a: int, b: int) -> bool:
    """Vocab sizes differing only by padding to a multiple (64/128/256) of the same tokenizer."""
    lo, hi = min(a, b), max(a, b)
    return hi - lo < 1024 and any(hi % m == 0 for m in (64, 128, 256))


