"""MTP drafters. Three shapes:
- MTP layers shipped inside the target (DeepSeek-V3/R1, GLM-4.5+/GLM-5, MiMo: `num_nextn_predict_layers`;
  Qwen3.5: `mtp_num_hidden_layers`, possibly nested in `text_config`; MiMo-V2 and Qwen3-Next, whose configs
  state no count): the drafter is that many extra layers, not the target's decoder stack;
- stand-alone MTP draft checkpoints (SpecForge `Qwen3_5MTPDraftModel`, vLLM `*MTP*` architectures);
- Gemma-4 assistants (`Gemma4AssistantForCausalLM`, `backbone_hidden_size`, shape in `text_config`)."""

from __future__ import annotations

from .base import Reading, sink_keys, unknown_keys
from .fields import Fields, text_config

ASSISTANT_ARCHS = {"Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM"}
# Top-level assistant keys read here or harmless to acceptance: the centroid head (num_centroids,
# centroid_intermediate_top_k, use_ordered_embeddings) only makes each draft step cheaper.
ASSISTANT_KNOWN = {
    "architectures",
    "model_type",
    "backbone_hidden_size",
    "text_config",
    "dtype",
    "torch_dtype",
    "transformers_version",
    "tie_word_embeddings",
    "num_centroids",
    "centroid_intermediate_top_k",
    "use_ordered_embeddings",
    "image_token_id",
    "audio_token_id",
    "video_token_id",
    "boi_token_id",
    "eoi_token_id",
    "boa_token_id",
    "eoa_token_id",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
}
# MiMo-V2 configs state no MTP layer count; vLLM (config/speculative.py, _MIMO_V2_FLASH_NUM_MTP_LAYERS) and
# SGLang (configs/model_config.py) both serve exactly one, built as a sliding-window layer with the SWA heads,
# swa_rope_theta and the SWA attention sink (vLLM models/mimo_v2_mtp.py).
MIMO_V2_ARCHS = {"MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM"}
# Qwen3-Next's published config states no MTP layer count (no mtp_num_hidden_layers, no num_nextn_predict_layers);
# vLLM builds `num_nextn_predict_layers` layers, default 1 (models/qwen3_next_mtp.py), SGLang sets it to 1 for a
# Qwen3NextForCausalLM draft (configs/model_config.py); both build it as a full-attention layer.
QWEN3_NEXT_ARCHS = {"Qwen3NextForCausalLM"}


def embedded_count(cfg: dict, f: Fields) -> tuple[int | None, str | None]:
    """(number of MTP layers in a target config, the field) — None when the target has none."""
    tc, _ = text_config(cfg)
    for key in ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers"):
        if key in tc:
            n = f.int(key, tc)
            if n:
                return n, key
    return _minimax_count(tc, f)


def _minimax_count(tc: dict, f: Fields) -> tuple[int | None, str | None]:
    """MiniMax-M2.x: `use_mtp` with `num_mtp_modules` modules of `mtp_transformer_layers` decoder layers each
    (MiniMaxAI's configuration_minimax_m2.py; vLLM derives n_predict from num_mtp_modules for MiniMax-M3)."""
    if tc.get("use_mtp") is not True:
        return None, None
    modules = f.int("num_mtp_modules", tc)
    per = f.int("mtp_transformer_layers", tc) if "mtp_transformer_layers" in tc else 1
    if not modules or not per:
        return None, None
    return modules * per, "num_mtp_modules"


def _is_mtp_arch(a: str) -> bool:
    low = a.lower()
    return "mtp" in low or "nextn" in low


def matches(cfg: dict, archs: tuple[str, ...]) -> bool:
    if any(a in ASSISTANT_ARCHS for a in archs) or str(cfg.get("model_type", "")).endswith("_assistant"):
        return True
    if any(_is_mtp_arch(a) for a in archs) or any(a in MIMO_V2_ARCHS or a in QWEN3_NEXT_ARCHS for a in archs):
        return True
    tc, _ = text_config(cfg)
    return any(
        isinstance(v := tc.get(k), int) and not isinstance(v, bool) and v > 0
        for k in ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers", "num_mtp_modules")
    ) and (tc.get("use_mtp") is not False)


def read(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    if any(a in ASSISTANT_ARCHS for a in archs) or str(cfg.get("model_type", "")).endswith("_assistant"):
        shape, _ = text_config(cfg)
        r = Reading(family="Gemma-4 assistant (MTP drafter)", method="mtp", shape=shape, shape_label="text_config.")
        r.target_hidden_size = f.int("backbone_hidden_size")
        r.mtp_layers = f.int("num_hidden_layers", shape, "text_config.num_hidden_layers")
        if r.target_hidden_size is None:
            r.notes.append("no backbone_hidden_size: transformers' default (1536) would apply")
        shared = f.int("num_kv_shared_layers", shape, "text_config.num_kv_shared_layers")
        if shared:
            r.notes.append(
                f"{shared} of its {r.mtp_layers or '?'} layers read the target's KV cache "
                "(text_config.num_kv_shared_layers): it drafts only on the Gemma-4 target whose hidden "
                "size is its backbone_hidden_size and whose attention kinds and KV heads it shares"
            )
        r.attention_sinks = sink_keys(shape)
        r.not_understood = unknown_keys(cfg, ASSISTANT_KNOWN)
        return r
    if any(_is_mtp_arch(a) for a in archs):
        r = Reading(family="MTP draft checkpoint", method="mtp", shape=cfg)
        r.mtp_layers = f.int("num_hidden_layers")
        mc = f.dict("mtp_config") or {}
        if mc.get("share_lm_head") is True:
            r.notes.append("mtp_config.share_lm_head: drafts with the target's LM head")
        r.attention_sinks = sink_keys(cfg)
        return r
    shape, nested = text_config(cfg)
    n, key = embedded_count(cfg, f)
    if n is None and any(a in MIMO_V2_ARCHS for a in archs):
        return _mimo_v2(cfg, f, archs)
    if n is None and any(a in QWEN3_NEXT_ARCHS for a in archs):
        return _qwen3_next(cfg, archs)
    style = {
        "mtp_num_hidden_layers": "Qwen3-Next/Qwen3.5 mtp_num_hidden_layers",
        "num_mtp_modules": "MiniMax use_mtp, num_mtp_modules × mtp_transformer_layers",
    }.get(key or "", "DeepSeek/GLM/MiMo num_nextn_predict_layers")
    r = Reading(
        family=f"MTP inside the target ({style})",
        method="mtp",
        shape=shape,
        shape_label="text_config." if nested else "",
    )
    r.mtp_layers, r.embedded_in_target = n, True
    r.attention_sinks = sink_keys(shape)
    what = f"{n} MTP layer(s) ({key})"
    if key == "num_mtp_modules":
        what = (
            f"{shape.get('num_mtp_modules')} MTP module(s) of {shape.get('mtp_transformer_layers', 1)} decoder "
            f"layer(s) each (num_mtp_modules × mtp_transformer_layers = {n})"
        )
    r.notes.append(
        f"the drafter is the target's own {what}; the target's "
        f"{shape.get('num_hidden_layers', '?')} decoder layers are the verifier, not the drafter"
    )
    return r


def _mimo_v2(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    # the MTP layer attends with the SWA heads (swa_num_attention_heads, swa_num_key_value_heads, swa_head_dim)
    swa = {k: cfg[f"swa_{k}"] for k in ("num_attention_heads", "num_key_value_heads", "head_dim") if f"swa_{k}" in cfg}
    r = Reading(family="MTP inside the target (MiMo-V2: count not in the config)", method="mtp", shape={**cfg, **swa})
    r.mtp_layers, r.embedded_in_target = 1, True
    window = f.int("sliding_window_size") if "sliding_window_size" in cfg else f.int("sliding_window")
    if window is not None:
        r.mtp_window = window
        r.mtp_window_source = (
            "sliding_window_size" if "sliding_window_size" in cfg else "sliding_window"
        ) + " (the MTP layer is built as a sliding-window layer)"
    sinks = cfg.get("add_swa_attention_sink_bias")
    r.attention_sinks = ("add_swa_attention_sink_bias",) if sinks not in (None, False, 0) else ()
    r.notes.append(
        f"{archs[0]} states no MTP layer count: vLLM and SGLang serve one MTP layer "
        "(num_nextn_predict_layers = 1), a sliding-window layer with the SWA heads and swa_rope_theta; "
        f"the target's {cfg.get('num_hidden_layers', '?')} decoder layers are the verifier"
    )
    return r


def _qwen3_next(cfg: dict, archs: tuple[str, ...]) -> Reading:
    r = Reading(family="MTP inside the target (Qwen3-Next: count not in the config)", method="mtp", shape=cfg)
    r.mtp_layers, r.embedded_in_target = 1, True
    r.attention_sinks = sink_keys(cfg)
    r.notes.append(
        f"{archs[0]} states no MTP layer count: vLLM (num_nextn_predict_layers, default 1) and SGLang "
        "serve one MTP layer, a full-attention layer; the target's "
        f"{cfg.get('num_hidden_layers', '?')} decoder layers are the verifier"
    )
    return r
