"""Drafter weights from safetensors headers: present, complete, and shaped as the config says."""

from __future__ import annotations

import re

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.model_facts import DrafterFacts

_LAYER = re.compile(r"^(?:model\.)?(?:layers|midlayer)\.?(\d*)\.")


class DrafterWeights(Check):
    id = "drafter-weights"
    area = "drafter"
    title = "Drafter weight headers match its config"
    needs = (DrafterFacts,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(DrafterFacts)
        d, w = ev.value, ev.value.weights
        refs = (ev.ref,)
        if w is None:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: weights were not read", refs=refs)]
        if w.format != "safetensors":
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: " + "; ".join(w.problems), refs=refs)]
        out = []
        cut = [f for f in w.files if f.truncated and not f.header_only]
        hollow = [f for f in w.files if f.header_only]
        broken = [f for f in w.files if f.error and not f.truncated]
        if cut or broken:
            out.append(
                self.finding(
                    Status.FAIL,
                    "drafter weights are incomplete: " + "; ".join(f"{f.file}: {f.error}" for f in cut + broken),
                    refs=refs,
                    details=tuple(p for p in w.problems if not any(p.startswith(f.file) for f in cut + broken)),
                    remedy="Re-download the checkpoint (an interrupted download leaves short shards).",
                )
            )
        elif w.problems and not hollow:
            out.append(
                self.finding(
                    Status.FAIL,
                    "drafter weights are incomplete: " + "; ".join(w.problems),
                    refs=refs,
                    remedy="Re-download the checkpoint.",
                )
            )
        if hollow:
            out.append(
                self.finding(
                    Status.WARN,
                    f"{len(hollow)} weight file(s) hold only a header, no tensor data: "
                    "shapes were checked, the weights are absent",
                    refs=refs,
                    details=tuple(f.file for f in hollow),
                    remedy="Fetch the full weights before serving this checkpoint.",
                )
            )
        if not w.tensors:
            return out or [self.finding(Status.COULD_NOT_CHECK, "could not check: no tensor headers read", refs=refs)]
        bad, good = [], []
        hid = d.hidden_size
        layer_ids = {m.group(1) for m in (_LAYER.match(k) for k in w.tensors) if m}
        if d.num_hidden_layers is not None and layer_ids and d.method in ("dflash", "dflash2"):
            if len(layer_ids) != d.num_hidden_layers:
                bad.append(f"weights hold {len(layer_ids)} decoder layers; config says {d.num_hidden_layers}")
            else:
                good.append(f"{len(layer_ids)} decoder layers")
        fc = w.tensors.get("fc.weight") or w.tensors.get("model.fc.weight") or w.tensors.get("encoder.fc.weight")
        n_ids = len(d.target_layer_ids) if d.target_layer_ids else (3 if d.method == "eagle3" else None)
        if fc is not None and hid and n_ids and len(fc.shape) == 2:
            th = d.target_hidden_size or hid
            if fc.shape[1] != n_ids * th:
                bad.append(f"fc takes {fc.shape[1]} inputs; {n_ids} taps × hidden {th} = {n_ids * th}")
            else:
                good.append(f"fc {list(fc.shape)} = {n_ids} taps × {th}")
        elif d.method in ("dflash", "dflash2", "eagle3") and fc is None:
            bad.append("no fc weight (the projection of the target features)")
        has_embed = any(k.endswith("embed_tokens.weight") for k in w.tensors)
        has_head = any(k.endswith("lm_head.weight") for k in w.tensors)
        if d.method in ("dflash", "dflash2"):
            if has_embed or has_head:
                good.append(
                    "ships its own "
                    + " and ".join(x for x, y in (("embeddings", has_embed), ("LM head", has_head)) if y)
                    + " (DFlash normally uses the target's)"
                )
            else:
                good.append("no embeddings or LM head (uses the target's)")
        dtypes = sorted({t.dtype for t in w.tensors.values()})
        msg_tail = f"{len(w.tensors)} tensors, dtypes {', '.join(dtypes)}"
        if bad:
            out.append(
                self.finding(
                    Status.FAIL,
                    "weight shapes disagree with the config: " + "; ".join(bad),
                    refs=refs,
                    details=tuple(good),
                    remedy="Check that config.json belongs to these weights.",
                )
            )
        else:
            out.append(
                self.finding(
                    Status.OK,
                    f"weight headers match the config: {', '.join(good) or msg_tail}",
                    refs=refs,
                    details=(msg_tail,),
                )
            )
        return out
