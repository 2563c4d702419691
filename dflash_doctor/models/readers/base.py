"""What a config-family reader states about a drafter, before the shared fields (shape, RoPE, layers,
weights, model card) are read the same way for every family."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Where ids written in the engines' capture-before ("entering") convention come from: id k is the stream entering
# target layer k, the output of layer k − 1 (speculators; aux_taps.toml's producers with convention "entering").
# Every other placement names layer outputs (SpecForge/TorchSpec/Model-Optimizer eagle_config, DFlash target_layer_ids).
AUX_SOURCES = frozenset({"eagle_aux_hidden_state_layer_ids", "aux_hidden_state_layer_ids"})


@dataclass
class Reading:
    family: str  # which config format, in words ("z-lab DFlash", "speculators eagle3", …)
    method: str  # dflash | dflash2 | eagle3 | peagle | eagle | medusa | mtp | dspark | domino | unknown
    shape: dict[str, Any]  # the dict the decoder shape/RoPE/layer fields live in
    shape_label: str = ""  # prefix for warnings about fields read from `shape` ("transformer_layer_config.")
    dcfg: dict[str, Any] = field(default_factory=dict)  # dflash_config (or {}), for MiMo-style SWA and causality
    block_size: int | None = None
    block_size_source: str | None = None
    mask_token_id: int | None = None
    ids: tuple[int, ...] | None = None  # as written in the config
    ids_source: str | None = None  # the field they came from (AUX_SOURCES: the entering convention)
    num_target_layers: int | None = None
    draft_vocab_size: int | None = None
    target_hidden_size: int | None = None
    intended_target: str | None = None
    intended_target_source: str | None = None
    mtp_layers: int | None = None
    medusa_heads: int | None = None
    medusa_layers: int | None = None
    embedded_in_target: bool = False  # MTP layers shipped inside the target checkpoint itself
    attention_sinks: tuple[str, ...] = ()  # config keys that turn attention sinks on
    backbone_rotary_base: float | None = None
    target_model_type: str | None = None
    speculative_tokens: int | None = None  # what the checkpoint proposes (speculators proposal_methods)
    mtp_window: int | None = None  # MTP layers the engines build as sliding-window layers (MiMo-V2), their window
    mtp_window_source: str | None = None
    not_understood: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def unknown_keys(d: dict[str, Any], known: set[str] | frozenset[str], prefix: str = "") -> list[str]:
    """Keys of `d` this tool does not interpret, shown to the user as "not understood"."""
    return [f"{prefix}{k}" for k in sorted(d) if k not in known]


def sink_keys(cfg: dict[str, Any], *more: dict[str, Any]) -> tuple[str, ...]:
    """Keys that switch attention sinks on (MiMo/gpt-oss style); a false/0 value is not a sink."""
    out = []
    for d in (cfg, *more):
        for k, v in d.items():
            if "sink" in k.lower() and v not in (None, False, 0, [], {}):
                out.append(k)
    return tuple(dict.fromkeys(out))
