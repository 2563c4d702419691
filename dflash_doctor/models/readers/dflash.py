"""z-lab DFlash / DFlash2 configs (and the DFlash-derived DSpark/Domino ones): `dflash_config` with
mask token and target layer ids, `block_size` at the top level or inside it, `is_causal`, MiMo-style
`use_swa` + `swa_window_size`, `backbone_rotary_base`, attention sinks."""

from __future__ import annotations

from .base import Reading, sink_keys, unknown_keys
from .fields import Fields

ARCHS = {
    "DFlashDraftModel": "dflash",
    "DFlash2DraftModel": "dflash2",
    "Qwen3DFlash2DraftModel": "dflash2",
    "DFlash2BeamDraftModel": "dflash2",
    "DSparkDraftModel": "dspark",
    "Qwen3DSparkModel": "dspark",
    "DominoDraftModel": "domino",
}
# dflash_config keys read here; DFlash2's selector/conv keys shape its extra heads, not the pairing.
KNOWN = {
    "mask_token_id",
    "target_layer_ids",
    "block_size",
    "use_swa",
    "swa_window_size",
    "causal",
    "num_target_layers",
    "backbone_rotary_base",
}
DFLASH2_KNOWN = {
    "conv_group_size",
    "conv_kernel_size",
    "selector_rank",
    "selector_top_k",
    "selector_vocab_size",
    "num_anchors",
    "loss_decay_gamma",
    "selector_loss_weight",
}


def matches(cfg: dict, archs: tuple[str, ...]) -> bool:
    return any(a in ARCHS for a in archs) or isinstance(cfg.get("dflash_config"), dict)


def read(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    method = next((ARCHS[a] for a in archs if a in ARCHS), "dflash")
    dcfg = f.dict("dflash_config") or {}
    family = {
        "dflash": "z-lab DFlash",
        "dflash2": "z-lab DFlash2",
        "dspark": "DSpark (DFlash-derived)",
        "domino": "Domino (DFlash-derived)",
    }[method]
    r = Reading(family=family, method=method, shape=cfg, dcfg=dcfg)
    r.block_size, r.block_size_source = f.int("block_size"), "block_size"
    if r.block_size is None and dcfg:
        r.block_size, r.block_size_source = (
            f.int("block_size", dcfg, "dflash_config.block_size"),
            "dflash_config.block_size",
        )
    if r.block_size is not None and r.block_size < 2:
        f.w.append(f"block_size = {r.block_size} is too small for block drafting; ignored")
        r.block_size = None
    if r.block_size is None:
        r.block_size_source = None
    r.mask_token_id = f.int("mask_token_id", dcfg, "dflash_config.mask_token_id") if dcfg else None
    if r.mask_token_id is None:
        r.mask_token_id = f.int("mask_token_id")
    aux = f.int_list("eagle_aux_hidden_state_layer_ids", cfg, "eagle_aux_hidden_state_layer_ids")
    if aux is not None:
        r.ids, r.ids_source = aux, "eagle_aux_hidden_state_layer_ids"
    else:
        for where, label in ((dcfg, "dflash_config.target_layer_ids"), (cfg, "target_layer_ids")):
            if where and "target_layer_ids" in where:
                r.ids = f.int_list("target_layer_ids", where, label)
                r.ids_source = label
                if r.ids is not None:
                    break
    r.num_target_layers = f.int("num_target_layers") or (
        f.int("num_target_layers", dcfg, "dflash_config.num_target_layers") if dcfg else None
    )
    r.target_hidden_size = f.int("target_hidden_size")
    r.draft_vocab_size = f.int("draft_vocab_size")
    r.backbone_rotary_base = (
        f.num("backbone_rotary_base")
        if "backbone_rotary_base" in cfg
        else f.num("backbone_rotary_base", dcfg, "dflash_config.backbone_rotary_base")
        if dcfg
        else None
    )
    r.attention_sinks = sink_keys(cfg, dcfg)
    known = KNOWN | (DFLASH2_KNOWN if method == "dflash2" else set())
    r.not_understood = unknown_keys({k: v for k, v in dcfg.items() if "sink" not in k.lower()}, known, "dflash_config.")
    if method in ("dspark", "domino"):
        r.notes.append(
            f"{archs[0] if archs else method} is a DFlash-derived drafter: its ids and mask are read as "
            "DFlash's, its own heads are not"
        )
    return r
