"""EAGLE-3 configs: yuhuili's (a one-layer `LlamaForCausalLM` config with `draft_vocab_size`),
SpecForge's (`LlamaForCausalLMEagle3`, aux ids nested in `eagle_config`), vLLM's `Eagle3*ForCausalLM`,
NVIDIA Model-Optimizer exports, P-EAGLE drafters. Model-Optimizer's exporter (modelopt/torch/export/plugins/
hf_spec_configs.py) writes `eagle_config` from a template whose `next_layer_regular: true` no other format
writes; `eagle_architecture_config` is the key of its training-time conversion config.

Aux ids: `eagle_config.eagle_aux_hidden_state_layer_ids` (what vLLM and SGLang read for SpecForge
checkpoints) or top-level `eagle_aux_hidden_state_layer_ids`; both in the engines' capture-before
convention. A drafter that states none is served with the engine default (2, n//2, n−3)."""

from __future__ import annotations

from .base import Reading, sink_keys, unknown_keys
from .fields import Fields

PEAGLE_ARCHS = {"PEagleDraftModel", "PeagleLlamaForCausalLM", "PeagleQwen3ForCausalLM"}
EAGLE_CONFIG_KNOWN = {
    "eagle_aux_hidden_state_layer_ids",
    "use_aux_hidden_state",
    "use_input_layernorm_in_first_layer",
    "use_last_layernorm",
    "use_mtp_layernorm",
    "draft_vocab_size",
    "parallel_draft_step",
    "parallel_draft_heads_num_layers",
    "eagle_decoder_type",
    "has_lm_head",
    "next_layer_regular",
}


def is_eagle3_arch(a: str) -> bool:
    return "eagle3" in a.lower()


def _ptd_token(cfg: dict) -> int | None:
    """vLLM's parallel-drafting token of an EAGLE checkpoint trained for it (P-EAGLE in vLLM's layout):
    llm_base_proposer reads `ptd_token_id` (0.19.0+) when the speculative config sets parallel_drafting."""
    v = cfg.get("ptd_token_id")
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def matches(cfg: dict, archs: tuple[str, ...]) -> bool:
    if any(is_eagle3_arch(a) or a in PEAGLE_ARCHS for a in archs):
        return True
    if isinstance(cfg.get("eagle_config"), dict) or isinstance(cfg.get("eagle_architecture_config"), dict):
        return True
    # yuhuili's EAGLE-3 checkpoints: a one-layer LlamaForCausalLM config with a draft vocabulary
    return archs == ("LlamaForCausalLM",) and cfg.get("num_hidden_layers") == 1 and "draft_vocab_size" in cfg


def read(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    ptd = _ptd_token(cfg)
    peagle = any(a in PEAGLE_ARCHS for a in archs) or (ptd is not None and any(is_eagle3_arch(a) for a in archs))
    ec = f.dict("eagle_config") or {}
    mo = f.dict("eagle_architecture_config") or {}
    if peagle:
        family = "P-EAGLE (parallel EAGLE-3)"
    elif mo or "next_layer_regular" in ec:
        family = "Model-Optimizer EAGLE-3 export"
    elif ec:
        family = "EAGLE-3, nested eagle_config (SpecForge/TorchSpec layout: ids name layer outputs)"
    elif archs == ("LlamaForCausalLM",):
        family = "yuhuili EAGLE-3 (one-layer LlamaForCausalLM)"
    else:
        family = "EAGLE-3"
    shape = cfg
    if mo:  # Model-Optimizer keeps the draft decoder's own config apart from the target's
        shape = {**cfg, **mo}
    r = Reading(family=family, method="peagle" if peagle else "eagle3", shape=shape)
    for where, key, label in (
        (ec, "eagle_aux_hidden_state_layer_ids", "eagle_config.eagle_aux_hidden_state_layer_ids"),
        (mo, "eagle_aux_hidden_state_layer_ids", "eagle_config.eagle_aux_hidden_state_layer_ids"),
        (cfg, "eagle_aux_hidden_state_layer_ids", "eagle_aux_hidden_state_layer_ids"),
    ):
        if where and key in where:
            r.ids = f.int_list(key, where, label)
            r.ids_source = label
            if r.ids is not None:
                break
    if ec and ec.get("use_aux_hidden_state") is False:
        r.notes.append(
            "eagle_config.use_aux_hidden_state is false: the drafter reads only the last hidden state (EAGLE-1 style)"
        )
    if ptd is not None:
        r.notes.append(
            f"ptd_token_id = {ptd}: trained for parallel drafting; vLLM (0.19.0+) drafts the positions in "
            'one pass only when the speculative config sets "parallel_drafting": true, otherwise it runs '
            "the drafter autoregressively like a plain EAGLE-3 head"
        )
    step = ec.get("parallel_draft_step")
    if isinstance(step, int) and not isinstance(step, bool) and step > 1:
        r.notes.append(
            f"eagle_config.parallel_draft_step = {step}: {step - 1} Model-Optimizer parallel-draft "
            "head(s) (Medusa-style) propose tokens after the EAGLE tokens"
        )
    r.draft_vocab_size = f.int("draft_vocab_size") or (
        f.int("draft_vocab_size", ec, "eagle_config.draft_vocab_size") if ec else None
    )
    r.target_hidden_size = f.int("target_hidden_size")
    r.target_model_type = f.str("target_model_type")
    r.attention_sinks = sink_keys(cfg, ec)
    r.not_understood = unknown_keys(ec, EAGLE_CONFIG_KNOWN, "eagle_config.")
    return r
