"""MTP drafters. Three shapes:
- MTP layers shipped inside the target (DeepSeek-V3/R1, GLM-4.5+, MiMo: `num_nextn_predict_layers`;
  Qwen3-Next, Qwen3.5: `mtp_num_hidden_layers`, possibly nested in `text_config`): the drafter is that
  many extra layers, not the target's decoder stack;
- stand-alone MTP draft checkpoints (SpecForge `Qwen3_5MTPDraftModel`, vLLM `*MTP*` architectures);
- Gemma-4 assistants (`Gemma4AssistantForCausalLM`, `backbone_hidden_size`, shape in `text_config`)."""

from __future__ import annotations

from .base import Reading, sink_keys
from .fields import Fields, text_config

ASSISTANT_ARCHS = {"Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM"}


def embedded_count(cfg: dict, f: Fields) -> tuple[int | None, str | None]:
    """(number of MTP layers in a target config, the field) — None when the target has none."""
    tc, _ = text_config(cfg)
    for key in ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers"):
        if key in tc:
            n = f.int(key, tc)
            if n:
                return n, key
    return None, None


def _is_mtp_arch(a: str) -> bool:
    low = a.lower()
    return "mtp" in low or "nextn" in low


def matches(cfg: dict, archs: tuple[str, ...]) -> bool:
    if any(a in ASSISTANT_ARCHS for a in archs) or str(cfg.get("model_type", "")).endswith("_assistant"):
        return True
    if any(_is_mtp_arch(a) for a in archs):
        return True
    tc, _ = text_config(cfg)
    return any(isinstance(tc.get(k), int) and not isinstance(tc.get(k), bool) and tc.get(k) > 0
               for k in ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers"))


def read(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    if any(a in ASSISTANT_ARCHS for a in archs) or str(cfg.get("model_type", "")).endswith("_assistant"):
        shape, _ = text_config(cfg)
        r = Reading(family="Gemma-4 assistant (MTP drafter)", method="mtp", shape=shape, shape_label="text_config.")
        r.target_hidden_size = f.int("backbone_hidden_size")
        r.mtp_layers = f.int("num_hidden_layers", shape, "text_config.num_hidden_layers")
        if r.target_hidden_size is None:
            r.notes.append("no backbone_hidden_size: transformers' default (1536) would apply")
        r.attention_sinks = sink_keys(shape)
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
    style = ("Qwen3-Next/Qwen3.5 mtp_num_hidden_layers" if key == "mtp_num_hidden_layers"
             else "DeepSeek/GLM/MiMo num_nextn_predict_layers")
    r = Reading(family=f"MTP inside the target ({style})", method="mtp", shape=shape,
                shape_label="text_config." if nested else "")
    r.mtp_layers, r.embedded_in_target = n, True
    r.attention_sinks = sink_keys(shape)
    r.notes.append(f"the drafter is the target's own {n} MTP layer(s) ({key}); the target's "
                   f"{shape.get('num_hidden_layers', '?')} decoder layers are the verifier, not the drafter")
    return r
