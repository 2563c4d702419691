"""What a drafter's and a target's config, model card and safetensors headers say (DrafterFacts,
TargetFacts, with their RoPE, per-layer attention and weight facts). The readers in models/ produce
them (models.facts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .serialise import fields_to_json

# Where ids written in the engines' capture-before ("entering") convention come from: id k is the stream entering
# target layer k, the output of layer k − 1 (speculators; aux_taps.toml's producers with convention "entering").
# Every other placement names layer outputs (SpecForge/TorchSpec/Model-Optimizer eagle_config, DFlash target_layer_ids).
AUX_SOURCES = frozenset({"eagle_aux_hidden_state_layer_ids", "aux_hidden_state_layer_ids"})


@dataclass(frozen=True)
class TensorInfo:
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class ShardFacts:
    file: str
    header_bytes: int | None = None
    expected_bytes: int | None = None  # 8 + header + data section, as the header declares
    actual_bytes: int | None = None
    tensors: int = 0
    truncated: bool = False
    header_only: bool = False  # truncated to exactly the header: shapes readable, no tensor data at all
    error: str | None = None


@dataclass(frozen=True)
class WeightFacts:
    JSON_PROPERTIES: ClassVar = {"truncated": ("truncated", None)}

    format: str  # "safetensors" | "pickle" | "none"
    index_file: str | None = None
    files: tuple[ShardFacts, ...] = ()
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # unreadable/truncated/missing shards, in one line each
    unread: tuple[str, ...] = ()  # files deliberately not opened (pickle)

    @property
    def truncated(self) -> tuple[str, ...]:
        return tuple(f.file for f in self.files if f.truncated)

    @property
    def complete(self) -> bool:
        return self.format == "safetensors" and not self.problems


@dataclass(frozen=True)
class LayerAttention:
    index: int
    attention: str  # "full" | "sliding"; a config no reader knows may also show "mamba", "linear", "conv", "mlp", "moe"
    window: int | None
    causal: bool


@dataclass(frozen=True)
class RopeFacts:
    theta: float | None  # the full-attention layers' theta when it differs per layer kind
    scaling: dict | None  # rope_scaling / non-default rope_parameters type
    partial_rotary_factor: float | None
    source: str  # which field the theta came from
    per_layer_type: dict[str, float] | None = None  # theta per attention kind (Gemma-3/4, MiMo-V2 swa_rope_theta)
    nope_kinds: tuple[str, ...] = ()  # attention kinds that apply no RoPE at all (EXAONE-4's global layers)
    notes: tuple[str, ...] = ()  # defaults applied and per-layer rules, in words


@dataclass(frozen=True)
class CardWarning:
    kind: str  # "under-training" | "preview" | "non-thinking"
    line: str


@dataclass(frozen=True)
class DrafterFacts:
    JSON_PROPERTIES: ClassVar = {"swa_layers": ("swa_layers", None), "swa_mix": ("swa_mix", None)}

    source: str
    config_path: str
    method: str  # dflash | dflash2 | eagle3 | eagle | mtp | medusa | unknown
    architectures: tuple[str, ...]
    model_type: str | None
    speculators_format: bool
    block_size: int | None
    block_size_source: str | None
    mask_token_id: int | None
    target_layer_ids: tuple[int, ...] | None  # 0-based target layers whose OUTPUT the drafter was trained on
    layer_ids_source: str | None  # which field; "default" when derived by the older reference's rule
    hf_hidden_state_indices: tuple[int, ...] | None  # index into transformers' hidden_states (+1 convention)
    raw_capture_indices: tuple[int, ...] | None  # what an engine passing ids raw reads (one layer early)
    num_target_layers: int | None
    num_hidden_layers: int | None
    hidden_size: int | None
    target_hidden_size: int | None
    head_dim: int | None
    num_attention_heads: int | None
    num_key_value_heads: int | None
    intermediate_size: int | None
    vocab_size: int | None
    draft_vocab_size: int | None
    rope: RopeFacts
    dtype: str | None
    layers: tuple[LayerAttention, ...]
    swa_config: str | None  # "layer_types" | "max_window_layers" | "use_swa" | None
    sliding_window: int | None
    card: tuple[CardWarning, ...]
    card_file: str | None
    weights: WeightFacts | None
    warnings: tuple[str, ...] = ()
    family: str = "unknown"  # the config format, in words ("z-lab DFlash", "speculators eagle3", …)
    intended_target: str | None = None  # the target the drafter names (verifier, base model)
    intended_target_source: str | None = None
    not_understood: tuple[str, ...] = ()  # keys that may matter to acceptance and that no reader interprets
    notes: tuple[str, ...] = ()  # what the reader inferred, and from what
    mtp_layers: int | None = None
    medusa_heads: int | None = None
    medusa_layers: int | None = None
    embedded_in_target: bool = False  # MTP layers inside the target checkpoint
    attention_sinks: tuple[str, ...] = ()
    backbone_rotary_base: float | None = None
    target_model_type: str | None = None
    speculative_tokens: int | None = None
    special_tokens: dict[str, tuple[int, ...]] | None = None  # bos/eos/pad ids stated in the config
    ids_written: tuple[int, ...] | None = None  # the ids exactly as the config writes them (layer_ids_source)

    @property
    def ids_capture_before(self) -> bool:
        """True when the config writes its ids in the engines' capture-before convention (id k = the stream
        entering layer k: speculators' top-level fields); `target_layer_ids` is then ids − 1."""
        return self.layer_ids_source in AUX_SOURCES

    @property
    def aux_ids_absent(self) -> bool:
        """An EAGLE-3-style drafter that states no aux ids: engines tap their default layers."""
        return self.method in ("eagle3", "peagle") and self.target_layer_ids is None

    @property
    def swa_layers(self) -> tuple[int, ...]:
        return tuple(la.index for la in self.layers if la.attention == "sliding")

    @property
    def swa_mix(self) -> str:
        """ "none" | "all" | "mixed" — what engines decide support on."""
        n = len(self.swa_layers)
        return "none" if n == 0 else ("all" if n == len(self.layers) else "mixed")

    @property
    def is_dflash(self) -> bool:
        return self.method in ("dflash", "dflash2")


@dataclass(frozen=True)
class TargetFacts:
    source: str
    config_path: str
    architectures: tuple[str, ...]
    model_type: str | None
    text_config_nested: bool
    num_hidden_layers: int | None
    hidden_size: int | None
    vocab_size: int | None
    layer_types: tuple[str, ...] | None
    layer_type_counts: dict[str, int]
    sliding_window: int | None  # the target's own window (None for GatedDeltaNet hybrids)
    rope: RopeFacts
    quantization: dict | None
    tokenizer_files: tuple[str, ...]
    special_token_ids: tuple[int, ...] | None  # ids of added/special tokens in the tokenizer files
    warnings: tuple[str, ...] = ()
    layer_kinds: tuple[str, ...] | None = None  # full | sliding | linear | mamba | conv | mlp, per layer
    layer_kinds_rule: str = ""  # how they were derived (the transformers rule, named)
    mtp_layers: int | None = None  # MTP layers shipped in the target (num_nextn_predict_layers, …)
    mtp_field: str | None = None
    special_tokens: dict[str, tuple[int, ...]] | None = None  # bos/eos/pad ids stated in the config
    name_or_path: str | None = None  # `_name_or_path` when the config states it
    tokenizer_names: dict[int, str] | None = None  # id -> token text for added/special tokens

    @property
    def hybrid_linear(self) -> bool:
        return bool(self.layer_kinds and any(k in ("linear", "mamba", "conv") for k in self.layer_kinds))

    @property
    def kind_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for k in self.layer_kinds or ():
            out[k] = out.get(k, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        d = fields_to_json(self)
        d["hybrid_linear"] = self.hybrid_linear
        if self.special_token_ids is not None and len(self.special_token_ids) > 64:
            d["special_token_ids"] = f"{len(self.special_token_ids)} ids"
        return d
