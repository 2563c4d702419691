"""Was the drafter built for this target? Layer ids and counts, hidden size and the fc input, vocabulary
and tokenizer identity (sizes, special-token ids, the mask token, t2d length, the target the drafter
names) — from configs, tokenizer files and weight headers only.

A fact missing on either side is "could not check", never a pass: the check says "fits" only when the
essentials (hidden size, vocabulary) were compared and agree.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts


class DrafterTargetPairing(Check):
    id = "drafter-target-pairing"
    area = "pairing"
    title = "Drafter fits the target"
    needs = (DrafterFacts, TargetFacts)
    observations = ("pairing:mismatch", "pairing:unloadable", "pairing:ok")

    def run(self, evidence: EvidenceSet):
        dev, tev = evidence.require_item(DrafterFacts), evidence.require_item(TargetFacts)
        d, t = evidence.require(DrafterFacts), evidence.require(TargetFacts)
        refs = (dev.ref, tev.ref)
        p = _Pairing()
        if t.hybrid_linear:
            counts = ", ".join(f"{n} {k}" for k, n in t.kind_counts.items())
            p.notes.append(
                f"target is a hybrid ({counts}; {t.layer_kinds_rule}): linear/Mamba layers are not "
                "sliding-window attention"
            )
        if t.text_config_nested:
            p.notes.append(f"target text config read from text_config ({', '.join(t.architectures) or 'wrapper'})")
        _layers(d, t, p)
        _hidden(d, t, p)
        _vocab(d, t, p)
        _special_tokens(d, t, p)
        _mask(d, t, p)
        _intended(d, t, p)
        details = tuple(p.notes + [f"agrees: {g}" for g in p.good] + [f"could not check: {u}" for u in p.unknown])
        if p.bad:
            msg = "drafter does not fit this target: " + "; ".join(p.bad)
            obs = [Observation("pairing:mismatch", "; ".join(p.bad), refs)]
            if p.unloadable:
                obs.append(Observation("pairing:unloadable", "; ".join(p.unloadable), refs))
            return [
                self.finding(
                    Status.FAIL,
                    msg,
                    refs=refs,
                    details=details,
                    remedy="Serve the drafter with the target it was trained for (its config or model "
                    "card names it), or pick the drafter built for this target.",
                    observations=tuple(obs),
                )
            ]
        if not p.good:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: neither config states comparable layer, "
                    "hidden-size or vocabulary fields" + (f" ({'; '.join(p.unknown)})" if p.unknown else ""),
                    refs=refs,
                    details=details,
                )
            ]
        if p.essential_unknown:
            msg = f"could not confirm the pairing: agrees on {', '.join(p.good)}; could not check " + "; ".join(
                p.unknown
            )
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    msg,
                    refs=refs,
                    details=details,
                    remedy="Compare the drafter's model card (the target it was trained on) and the "
                    "tokenizers of both before serving.",
                )
            ]
        msg = "drafter fits this target: " + ", ".join(p.good)
        return [
            self.finding(
                Status.OK, msg, refs=refs, details=details, observations=(Observation("pairing:ok", msg, refs),)
            )
        ]


class _Pairing:
    def __init__(self):
        self.bad: list[str] = []
        self.good: list[str] = []
        self.unknown: list[str] = []
        self.notes: list[str] = []
        self.essential_unknown = False
        self.unloadable: list[str] = []  # shape mismatches: the drafter's tensors cannot take the target's states

    def cannot(self, what: str, essential: bool = False) -> None:
        self.unknown.append(what)
        self.essential_unknown |= essential


def _layers(d, t, p: _Pairing) -> None:
    n = t.num_hidden_layers
    if d.embedded_in_target:
        p.notes.append("MTP layers ship inside the target: layer ids and counts do not apply")
        return
    ids = d.target_layer_ids
    if ids is not None and n is not None:
        out = [i for i in ids if i < 0 or i >= n]
        if out:
            p.bad.append(
                f"{'aux ids' if d.ids_capture_before else 'target_layer_ids'} {list(out)} do not exist in a "
                f"{n}-layer target"
            )
        elif not d.ids_capture_before and d.is_dflash and n - 1 in ids:
            p.bad.append(
                f"target_layer_ids tap the last layer ({n - 1}), whose output is the final-normed state, not "
                "a feature the drafter can use"
            )
        else:
            p.good.append(f"layer ids {list(ids)} within {n} target layers")
    elif ids is not None:
        p.cannot("the target's layer count (num_hidden_layers not stated)")
    if d.num_target_layers is not None and n is not None:
        if d.num_target_layers != n:
            p.bad.append(f"drafter was built for a {d.num_target_layers}-layer target; this target has {n}")
        else:
            p.good.append(f"num_target_layers {n}")


def _hidden(d, t, p: _Pairing) -> None:
    want_h = d.target_hidden_size or (None if d.method == "medusa" and d.hidden_size is None else d.hidden_size)
    if want_h is not None and t.hidden_size is not None:
        if want_h != t.hidden_size:
            p.bad.append(f"drafter expects target hidden size {want_h}; target has {t.hidden_size}")
            p.unloadable.append(p.bad[-1])
        else:
            p.good.append(f"hidden size {want_h}")
    elif not d.embedded_in_target:
        p.cannot(
            "hidden size (" + ("the drafter states none" if want_h is None else "the target states none") + ")",
            essential=True,
        )
    fc = _fc_in(d)
    n_taps = len(d.target_layer_ids) if d.target_layer_ids else (3 if d.method in ("eagle3", "peagle") else None)
    if fc is not None and n_taps and t.hidden_size:
        want = n_taps * t.hidden_size
        if fc != want:
            p.bad.append(f"fc weight takes {fc} inputs; {n_taps} taps × target hidden {t.hidden_size} = {want}")
            p.unloadable.append(p.bad[-1])
        else:
            p.good.append(f"fc input {fc} = {n_taps} × {t.hidden_size}")


def _vocab(d, t, p: _Pairing) -> None:
    dv, tv = d.vocab_size, t.vocab_size
    if d.embedded_in_target:
        return
    if dv is None or tv is None:
        p.cannot(
            "vocabulary ("
            + ("the drafter states no vocab_size" if dv is None else "the target states no vocab_size")
            + ")",
            essential=True,
        )
    elif dv == tv:
        p.good.append(f"vocabulary {tv}")
    else:
        lo, hi = min(dv, tv), max(dv, tv)
        if hi - lo < 1024:
            # Two sizes alone cannot tell padding of one tokenizer from two tokenizers of similar size.
            p.cannot(
                f"token identity: vocab sizes differ by {hi - lo} ({dv} drafter vs {tv} target) — padding of one "
                "tokenizer or two different tokenizers; the special-token ids and the tokenizers decide",
                essential=True,
            )
        else:
            p.bad.append(f"drafter vocabulary {dv} vs target {tv}: different tokenizers")
    w = d.weights
    tensors = w.tensors if w is not None and w.format == "safetensors" else {}
    t2d = tensors.get("t2d") or tensors.get("model.t2d")
    if t2d is not None and t2d.shape and tv is not None:
        if t2d.shape[0] != tv:
            p.bad.append(f"t2d has {t2d.shape[0]} entries (one per target token) but the target vocabulary is {tv}")
        else:
            p.good.append(f"t2d length {tv}")
    d2t = tensors.get("d2t") or tensors.get("model.d2t")
    if d2t is not None and d2t.shape and d.draft_vocab_size is not None and d2t.shape[0] != d.draft_vocab_size:
        p.bad.append(f"d2t has {d2t.shape[0]} entries but draft_vocab_size is {d.draft_vocab_size}")


def _special_tokens(d, t, p: _Pairing) -> None:
    """bos/eos ids from both configs. One tokenizer often lists different eos ids in different files
    (<|endoftext|> vs <|im_end|>), so disagreeing ids are evidence only when an id is not even in the
    target's vocabulary, or when the vocabulary sizes disagree as well."""
    ds, ts = d.special_tokens or {}, t.special_tokens or {}
    tv = t.vocab_size
    sizes_differ = d.vocab_size is not None and tv is not None and d.vocab_size != tv
    compared = False
    for key in ("bos_token_id", "eos_token_id"):
        if key not in ds:
            continue
        outside = [i for i in ds[key] if tv is not None and i >= tv]
        if outside:
            p.bad.append(f"the drafter's {key} {_ids(ds[key])} is outside the target's vocabulary ({tv})")
            continue
        if key not in ts:
            continue
        compared = True
        if set(ds[key]) & set(ts[key]):
            p.good.append(f"{key} {_ids(ts[key])}")
        elif sizes_differ:
            p.bad.append(
                f"{key} {_ids(ds[key])} (drafter) vs {_ids(ts[key])} (target) and the vocabulary sizes "
                "differ: different tokenizers"
            )
        else:
            p.notes.append(
                f"{key} {_ids(ds[key])} (drafter) vs {_ids(ts[key])} (target): the same tokenizer often "
                "names different end tokens in different files; not evidence by itself"
            )
    if not compared and (ds or ts):
        p.notes.append("special-token ids: only one side states bos/eos ids; not compared")


def _mask(d, t, p: _Pairing) -> None:
    mask, tv = d.mask_token_id, t.vocab_size
    if mask is None:
        return
    if tv is None:
        p.cannot(f"mask_token_id {mask} (the target states no vocab_size)")
        return
    if mask >= tv:
        p.bad.append(f"mask_token_id {mask} is outside the target's vocabulary ({tv})")
    elif t.special_token_ids is not None:
        name = (t.tokenizer_names or {}).get(mask)
        if mask in t.special_token_ids:
            p.good.append(
                f"mask_token_id {mask} is a named token in the target's tokenizer" + (f" ({name!r})" if name else "")
            )
        else:
            p.notes.append(
                f"mask_token_id {mask} is not a named token in {', '.join(t.tokenizer_files)}: an unused "
                f"embedding slot below vocab {tv} (fine with this exact target)"
            )
    else:
        p.notes.append(f"mask_token_id {mask} < vocab {tv}; no tokenizer files beside the target to confirm it")


def _intended(d, t, p: _Pairing) -> None:
    want = d.intended_target
    if not want:
        return
    src = d.intended_target_source
    if want.startswith(("/", ".", "~")) or "/" not in want:
        p.notes.append(f"the drafter names its target as {want!r} ({src}): a local path, not comparable")
        return
    have = [x for x in (t.name_or_path, t.source) if x]
    base = _base(want)
    if any(_base(h) == base for h in have):
        p.good.append(f"the drafter names this target ({want})")
    else:
        p.notes.append(
            f"the drafter names {want!r} as its target ({src}); this target is "
            f"{t.name_or_path or t.source} — same model under another name, or another model: check"
        )


def _base(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1].lower()


def _ids(ids) -> str:
    return str(ids[0]) if len(ids) == 1 else str(list(ids))


def _fc_in(d) -> int | None:
    w = d.weights
    if w is None:
        return None
    for name in ("fc.weight", "model.fc.weight", "encoder.fc.weight"):  # encoder.fc: the Muse-Glimmer assistant
        info = w.tensors.get(name)
        if info is not None and len(info.shape) == 2:
            return info.shape[1]
    return None
