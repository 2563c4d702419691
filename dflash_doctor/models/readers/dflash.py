"""z-lab DFlash / DFlash2 configs (and the DFlash-derived DSpark/Domino ones): `dflash_config` with
mask token and target layer ids, `block_size` at the top level or inside it, `is_causal`, MiMo-style
`use_swa` + `swa_window_size`, `backbone_rotary_base`, attention sinks. Also the layouts that keep the
DFlash fields at the top level: TorchSpec's (`num_target_layers` counts the taps there and
`target_num_hidden_layers` is the target's depth) and the Muse-Glimmer assistant
(`model_type: muse_glimmer_assistant`, `MuseGlimmerAssistantModel`: block_size, mask_token_id,
target_layer_ids at the top level, an `encoder.fc` over the taps)."""

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
    "MuseGlimmerAssistantModel": "dflash",
}
MUSE_TYPES = ("muse_glimmer_assistant",)
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
    return (
        any(a in ARCHS for a in archs)
        or isinstance(cfg.get("dflash_config"), dict)
        or cfg.get("model_type") in MUSE_TYPES
    )


def _family(method: str, cfg: dict, archs: tuple[str, ...]) -> str:
    if cfg.get("model_type") in MUSE_TYPES or "MuseGlimmerAssistantModel" in archs:
        return "Muse-Glimmer assistant (DFlash block drafter, fields at the top level)"
    if method == "dflash" and "target_num_hidden_layers" in cfg and "dflash_config" not in cfg:
        return "TorchSpec DFlash (fields at the top level)"
    return {
        "dflash": "z-lab DFlash",
        "dflash2": "z-lab DFlash2",
        "dspark": "DSpark (DFlash-derived)",
        "domino": "Domino (DFlash-derived)",
    }[method]


def read(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    method = next((ARCHS[a] for a in archs if a in ARCHS), "dflash")
    dcfg = f.dict("dflash_config") or {}
    r = Reading(family=_family(method, cfg, archs), method=method, shape=cfg, dcfg=dcfg)
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
    _target_depth(r, cfg, dcfg, f)
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
    if cfg.get("model_type") in MUSE_TYPES or "MuseGlimmerAssistantModel" in archs:
        _muse(r)
    if method in ("dspark", "domino"):
        r.notes.append(
            f"{archs[0] if archs else method} is a DFlash-derived drafter: its ids and mask are read as "
            "DFlash's, its own heads are not"
        )
    return r


def _target_depth(r: Reading, cfg: dict, dcfg: dict, f: Fields) -> None:
    """The target's layer count. z-lab's `num_target_layers` is the target's depth; TorchSpec's counts the taps
    (torchspec/models/draft/dflash.py: `proj_input_dim = num_target_layers * target_hidden_size`) and states
    the depth as `target_num_hidden_layers`."""
    stated = f.int("num_target_layers") or (
        f.int("num_target_layers", dcfg, "dflash_config.num_target_layers") if dcfg else None
    )
    depth = f.int("target_num_hidden_layers") if "target_num_hidden_layers" in cfg else None
    if depth is not None:
        r.num_target_layers = depth
        if stated is not None:
            r.notes.append(
                f"num_target_layers {stated} counts the tapped layers here (TorchSpec layout); the target's depth "
                f"is target_num_hidden_layers {depth}"
            )
        return
    taps = len(r.ids) if r.ids else None
    if stated is not None and taps == stated and r.ids and max(r.ids) >= stated:
        r.notes.append(
            f"num_target_layers {stated} equals the number of target_layer_ids and is smaller than the deepest id "
            f"{max(r.ids)}: it counts the taps, not the target's layers; the target's depth is not stated"
        )
        return
    r.num_target_layers = stated


def _muse(r: Reading) -> None:
    # vLLM 0.33.0 config/speculative.py:1159-1166 merges dflash_config {"causal": False} into this model_type
    # (a non-causal drafter); mlx-vlm's reference attends with a bidirectional sliding mask.
    if "causal" not in r.dcfg:
        r.dcfg = {**r.dcfg, "causal": False}
    r.notes.append(
        "Muse-Glimmer assistant: a DFlash block drafter whose block_size, mask_token_id and target_layer_ids sit at "
        "the top level; engines serve it with method dflash (vLLM 0.28+ as MuseGlimmerAssistantModel, SGLang "
        "0.5.18+), non-causal (vLLM 0.33 sets dflash_config.causal false for it)"
    )
