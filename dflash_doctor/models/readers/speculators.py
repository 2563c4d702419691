"""vllm-project/speculators configs: `speculators_model_type`, the decoder in `transformer_layer_config`,
`speculators_config.verifier.name_or_path` (the intended target), aux ids at the top level
(`eagle_aux_hidden_state_layer_ids` for EAGLE-3, `aux_hidden_state_layer_ids` for DFlash — vLLM maps
the latter onto the former, used as-is)."""

from __future__ import annotations

from .base import Reading, sink_keys, unknown_keys
from .fields import Fields

METHODS = {
    "eagle3": "eagle3",
    "dflash": "dflash",
    "eagle": "eagle",
    "hass": "eagle",
    "peagle": "peagle",
    "dspark": "dspark",
    "mtp": "mtp",
}
# Top-level keys this reader interprets, or that carry no pairing/acceptance meaning (provenance, training).
KNOWN = {
    "architectures",
    "auto_map",
    "speculators_model_type",
    "speculators_version",
    "speculators_config",
    "transformer_layer_config",
    "draft_vocab_size",
    "target_hidden_size",
    "eagle_aux_hidden_state_layer_ids",
    "aux_hidden_state_layer_ids",
    "mask_token_id",
    "block_size",
    "dtype",
    "torch_dtype",
    "transformers_version",
    "tie_word_embeddings",
    "norm_before_residual",
    "norm_before_fc",
    "fc_norm",
    "norm_output",
    "embed_requires_grad",
    "max_anchors",
    "layer_types",
    "use_sliding_window",
    "sliding_window",
    "model_type",
    "sliding_window_non_causal",
    "sample_from_anchor",
}


def matches(cfg: dict, archs: tuple[str, ...]) -> bool:
    return "speculators_model_type" in cfg


def read(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    kind = (f.str("speculators_model_type") or "").lower()
    method = METHODS.get(kind, "unknown")
    tlc = f.dict("transformer_layer_config") or {}
    # speculators DFlash may also state layer_types at the top level (vLLM copies them into the layer config)
    shape = dict(tlc)
    for k in ("layer_types", "use_sliding_window", "sliding_window"):
        if k in cfg and k not in shape:
            shape[k] = cfg[k]
    r = Reading(
        family=f"speculators {kind or '(type not stated)'}",
        method=method,
        shape=shape,
        shape_label="transformer_layer_config.",
    )
    if not tlc:
        f.w.append("speculators config without transformer_layer_config: the drafter's shape is not stated")
    for key in ("eagle_aux_hidden_state_layer_ids", "aux_hidden_state_layer_ids"):
        if key in cfg:
            r.ids = f.int_list(key, cfg, key)
            r.ids_source = key
            if r.ids is not None:
                break
    r.draft_vocab_size = f.int("draft_vocab_size")
    r.target_hidden_size = f.int("target_hidden_size")
    r.mask_token_id = f.int("mask_token_id")
    r.block_size = f.int("block_size")
    r.block_size_source = "block_size" if r.block_size is not None else None
    sc = f.dict("speculators_config") or {}
    ver = f.dict("verifier", sc, "speculators_config.verifier") or {}
    name = f.str("name_or_path", ver, "speculators_config.verifier.name_or_path")
    if name:
        r.intended_target, r.intended_target_source = name, "speculators_config.verifier.name_or_path"
    va = f.str_list("architectures", ver, "speculators_config.verifier.architectures")
    if va:
        r.notes.append(f"verifier architectures: {', '.join(va)}")
    pm = sc.get("proposal_methods")
    if isinstance(pm, list) and pm and isinstance(pm[0], dict):
        r.speculative_tokens = f.int(
            "speculative_tokens", pm[0], "speculators_config.proposal_methods[0].speculative_tokens"
        )
    # vLLM (0.26+, speculators/algos.py) maps this onto dflash_config.causal = not it (default: non-causal)
    nc = f.bool("sliding_window_non_causal") if "sliding_window_non_causal" in cfg else None
    if nc is not None and method == "dflash":
        r.dcfg = {**r.dcfg, "causal": not nc}
        r.notes.append(
            f"sliding_window_non_causal {str(nc).lower()}: vLLM 0.26+ reads it as dflash_config.causal "
            f"{str(not nc).lower()}; earlier releases ignore it (non-causal)"
        )
    r.attention_sinks = sink_keys(cfg, tlc)
    r.not_understood = unknown_keys(cfg, KNOWN)
    if method == "unknown":
        r.notes.append(f"speculators_model_type {kind!r} is not a method this tool reads")
    return r
