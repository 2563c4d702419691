"""Drafter and target facts read from config.json, the model card and safetensors headers.

Every field placement the reference names is accepted (top level or `dflash_config`, `rope_theta`
or `rope_parameters`, nested `text_config`, speculators' `eagle_aux_hidden_state_layer_ids`), and
every sliding-window variant (`layer_types`; `use_sliding_window` + `max_window_layers` as
transformers derives it; MiMo-style `dflash_config.use_swa`). A mistyped or absurd field becomes a
warning and is treated as absent — never a crash, never a guess.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import replace
from typing import Any

from ..errors import UsageError
from ..evidence.model_facts import (
    AUX_SOURCES,
    CardWarning,
    DrafterFacts,
    LayerAttention,
    RopeFacts,
    TargetFacts,
    WeightFacts,
)
from ..probe.config import default_target_layer_ids  # torch-free; the probe's own rule
from ..textsafe import plain
from .file_access import FileAccess, LocalFiles, describe_os_error
from .locate import Checkpoint, locate
from .readers import read_drafter, target_layers
from .readers.fields import Fields, text_config
from .readers.mtp import embedded_count
from .safetensors_header import read_weights

MAX_CONFIG_BYTES = 4 << 20
MAX_CARD_BYTES = 1 << 20
MAX_TOKENIZER_BYTES = 64 << 20


def layer_span(indices) -> str:
    """ "0–3" for a run of consecutive layers, "0, 2, 5" otherwise."""
    idx = list(indices)
    if not idx:
        return "none"
    if len(idx) > 1 and idx == list(range(idx[0], idx[-1] + 1)):
        return f"{idx[0]}–{idx[-1]}"
    return ", ".join(str(i) for i in idx)


# --- reading ------------------------------------------------------------------------------------


def load_config(files: FileAccess, path: str, role: str) -> dict[str, Any]:
    try:
        raw = files.read(path, MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {role} config {path}: {describe_os_error(exc)}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise UsageError(f"{role} config {path} is larger than {MAX_CONFIG_BYTES >> 20} MiB; not a config.json")
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{role} config {path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{role} config {path} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:  # a 5000-digit number, nesting 100k deep
        raise UsageError(f"{role} config {path} is not usable JSON: {str(exc)[:100]}") from None
    if not isinstance(obj, dict):
        raise UsageError(f"{role} config {path} is a JSON {type(obj).__name__}, not an object")
    return obj


_Fields = Fields


# rope types that rotate positions unscaled: "proportional" (Gemma-4) only changes which dimensions rotate,
# which partial_rotary_factor already says (transformers modeling_rope_utils)
UNSCALED_ROPE = (None, "default", "proportional")


# transformers' defaults when a config omits rope_theta (the configuration classes' `default_theta` /
# `rope_theta` default, transformers 5.x; tests/models/test_rope_defaults.py checks this table against them).
# Per attention kind where the class keeps two (Gemma-3: global 1e6, local 1e4). A model type not listed gets
# no assumed theta: its default is the class's own.
DEFAULT_THETA: dict[str, float | dict[str, float]] = {
    **dict.fromkeys(
        (
            "llama",
            "qwen2",
            "qwen2_moe",
            "qwen3",
            "qwen3_moe",
            "mistral",
            "gemma",
            "gemma2",
            "deepseek_v2",
            "deepseek_v3",
            "phi3",
            "exaone4",
            "glm4_moe",
            "qwen3_next",
            "olmo2",
            "cohere2",
            "granite",
            "starcoder2",
        ),
        10000.0,
    ),
    "mixtral": 1e6,
    "minimax": 1e6,
    "minimax_m2": 5e6,
    "gpt_oss": 150000.0,
    "gemma3": {"full_attention": 1e6, "sliding_attention": 1e4},
    "gemma3_text": {"full_attention": 1e6, "sliding_attention": 1e4},
}
# transformers' partial_rotary_factor defaults of the classes that rotate part of each head by default
DEFAULT_PARTIAL = {"glm4_moe": 0.5, "qwen3_next": 0.25}


def read_rope(f: _Fields) -> RopeFacts:
    """RoPE as transformers reads it. `rope_parameters` may be keyed by attention kind (Gemma-4:
    {"full_attention": {...}, "sliding_attention": {...}}); MiMo-V2 gives sliding layers their own
    `swa_rope_theta`; Gemma-3 its sliding layers `rope_local_base_freq`. `theta` is the full-attention
    layers' value; the others are in `per_layer_type`. Omitted values are transformers' defaults, said so."""
    params = f.dict("rope_parameters") or {}
    kinds = {k: v for k, v in params.items() if k.endswith("_attention") and isinstance(v, dict)}
    r = _rope_per_kind(f, kinds) if kinds else _rope_flat(f, params)
    return _rope_rules(f, r)


def _rope_flat(f: _Fields, params: dict) -> RopeFacts:
    per_kind = None
    theta, src = f.num("rope_theta"), "rope_theta"
    if theta is None and params:
        theta, src = f.num("rope_theta", params, "rope_parameters.rope_theta"), "rope_parameters.rope_theta"
    swa = f.num("swa_rope_theta") if "swa_rope_theta" in f.cfg else None
    if swa is not None and theta is not None and swa != theta:
        per_kind = {"full_attention": theta, "sliding_attention": swa}
        src += f"; sliding layers {swa:g} from swa_rope_theta"
    scaling = f.dict("rope_scaling")
    if scaling is None and params.get("rope_type") not in UNSCALED_ROPE:
        scaling = {k: v for k, v in params.items() if k not in ("rope_theta",)}
    prf = f.num("partial_rotary_factor")
    if prf is None and params:
        prf = f.num("partial_rotary_factor", params, "rope_parameters.partial_rotary_factor")
    prf = _rotary_fraction(f, prf)
    return RopeFacts(theta, scaling, prf, src if theta is not None else "absent", per_kind)


def _rope_rules(f: _Fields, r: RopeFacts) -> RopeFacts:
    """Model-specific rules on top of the fields: defaults, Gemma-3's local base, rotary_dim, EXAONE-4's NoPE."""

    mt = str(f.cfg.get("model_type") or "")
    notes = list(r.notes)
    if r.per_layer_type is None and mt in ("gemma3", "gemma3_text"):
        r = _gemma3_local(f, r, notes)
    if r.theta is None and mt in DEFAULT_THETA:
        d = DEFAULT_THETA[mt]
        theta = d["full_attention"] if isinstance(d, dict) else d
        notes.append(f"rope_theta not stated: transformers' default for {mt} is {theta:g}")
        r = replace(r, theta=theta, source=f"transformers' default for {mt}")
    elif r.theta is None:
        notes.append("rope_theta not stated, and its default depends on the model class: not assumed")
    prf = r.partial_rotary_factor
    if prf is None:
        prf = _rotary_dim_fraction(f, notes)
    if prf is None and mt in DEFAULT_PARTIAL:
        prf = DEFAULT_PARTIAL[mt]
        notes.append(f"partial_rotary_factor not stated: transformers' default for {mt} is {prf:g}")
    nope = _nope(f, mt, notes)
    return replace(r, partial_rotary_factor=prf, nope_kinds=nope, notes=tuple(notes))


def _gemma3_local(f: _Fields, r: RopeFacts, notes: list[str]) -> RopeFacts:
    """Gemma-3: the sliding layers rotate with rope_local_base_freq (default 1e4), unscaled; the full layers with
    rope_theta (default 1e6) and rope_scaling (transformers Gemma3TextConfig)."""

    local = f.num("rope_local_base_freq")
    if local is None:
        local = 10000.0
        notes.append("rope_local_base_freq not stated: transformers' default 10000 for Gemma-3's sliding layers")
    full = r.theta if r.theta is not None else 1e6
    if r.theta is None:
        notes.append("rope_theta not stated: transformers' default for gemma3_text is 1e+06 (full-attention layers)")
    if r.scaling:
        notes.append("rope_scaling applies to the full-attention layers only; the sliding layers rotate unscaled")
    source = r.source if r.theta is not None else "transformers' default for gemma3_text"
    return replace(
        r,
        theta=full,
        source=source + f"; sliding layers {local:g} (rope_local_base_freq)",
        per_layer_type={"full_attention": full, "sliding_attention": local},
    )


def _rotary_dim_fraction(f: _Fields, notes: list[str]) -> float | None:
    """`rotary_dim` of `head_dim` (MiniMax-M2: 64 of 128): the same partial rotation, stated in dimensions."""
    rd = f.int("rotary_dim") if "rotary_dim" in f.cfg else None
    hd = f.int("head_dim")
    if hd is None and f.int("hidden_size") and f.int("num_attention_heads"):
        hidden, heads = f.int("hidden_size"), f.int("num_attention_heads")
        assert hidden is not None and heads is not None  # both read just above
        hd = hidden // heads
    if rd is None or not hd:
        return None
    if not 0 < rd <= hd:
        f.w.append(f"rotary_dim = {rd} is not in (0, head_dim {hd}]; ignored")
        return None
    notes.append(f"partial rotary {rd / hd:g} from rotary_dim {rd} of head_dim {hd}")
    return rd / hd


def _nope(f: _Fields, mt: str, notes: list[str]) -> tuple[str, ...]:
    """EXAONE-4: with a sliding window, the full-attention (global) layers apply no RoPE (transformers
    modeling_exaone4.py: rotary only when sliding_window is None or the layer slides)."""
    window = f.cfg.get("sliding_window", 4096)  # Exaone4Config's default when the key is absent
    if mt in ("exaone4", "exaone4_5_text") and window is not None:
        notes.append("EXAONE-4: the full-attention layers apply no RoPE (NoPE); only the sliding layers rotate")
        return ("full_attention",)
    return ()


def _rope_per_kind(f: _Fields, kinds: dict[str, dict]) -> RopeFacts:
    per_kind: dict[str, float] = {}
    for kind, p in kinds.items():
        v = f.num("rope_theta", p, f"rope_parameters.{kind}.rope_theta")
        if v is not None:
            per_kind[kind] = v
    # the full-attention layers carry the long-context RoPE
    main = "full_attention" if "full_attention" in kinds else sorted(kinds)[0]
    p = kinds[main]
    theta = per_kind.get(main)
    others = ", ".join(f"{k} {v:g}" for k, v in sorted(per_kind.items()) if k != main)
    rope_type = p.get("rope_type")
    src = (
        f"rope_parameters.{main}.rope_theta"
        + (f" ({rope_type})" if rope_type not in (None, "default") else "")
        + (f"; {others}" if others else "")
    )
    scaling = {k: v for k, v in p.items() if k != "rope_theta"} if rope_type not in UNSCALED_ROPE else None
    prf = _rotary_fraction(f, f.num("partial_rotary_factor", p, f"rope_parameters.{main}.partial_rotary_factor"))
    return RopeFacts(theta, scaling, prf, src if theta is not None else "absent", per_kind or None)


def _rotary_fraction(f: _Fields, prf: float | None) -> float | None:
    if prf is not None and not 0 < prf <= 1:
        f.w.append(f"partial_rotary_factor = {prf} is not in (0, 1]; ignored")
        return None
    return prf


def _layers(
    f: _Fields, cfg: dict, dcfg: dict, n_layers: int | None, is_dflash: bool
) -> tuple[tuple[LayerAttention, ...], str | None, int | None]:
    """Per-layer attention, from whichever config variant the checkpoint uses."""
    if n_layers is None:
        return (), None, None
    use_swa = f.bool("use_swa", dcfg) if dcfg else None
    swa_window = f.int("swa_window_size", dcfg, "dflash_config.swa_window_size") if dcfg else None
    use_sw = f.bool("use_sliding_window")
    sw = f.int("sliding_window")
    is_causal = f.bool("is_causal")
    # dflash_config.causal (vLLM) or is_causal (reference, SGLang) set every layer's causality
    causal_override = f.bool("causal", dcfg) if dcfg else None
    if causal_override is None:
        causal_override = is_causal
    layer_types = f.str_list("layer_types")
    if layer_types is not None and len(layer_types) != n_layers:
        f.w.append(f"layer_types has {len(layer_types)} entries but num_hidden_layers is {n_layers}; ignored")
        layer_types = None
    kinds: list[str]
    source: str | None = None
    window = swa_window if swa_window is not None else sw
    if layer_types is not None and any(t == "sliding_attention" for t in layer_types):
        kinds = ["sliding" if t == "sliding_attention" else "full" for t in layer_types]
        source = "layer_types"
        unknown = sorted({t for t in layer_types if t not in ("sliding_attention", "full_attention")})
        if unknown:
            f.w.append(f"layer_types has unknown kinds {unknown}; read as full attention")
    elif use_swa:
        kinds, source = ["sliding"] * n_layers, "use_swa"
        if window is None:
            f.w.append("dflash_config.use_swa is set but no swa_window_size/sliding_window; window unknown")
    elif layer_types is None and use_sw:
        # transformers (Qwen2/Qwen3 configs): layers with index >= max_window_layers slide
        if sw is None and "sliding_window" not in cfg:
            sw = window = 4096  # transformers' default when the key is absent
        mwl = f.int("max_window_layers")
        if mwl is None:
            mwl = 28
        kinds = ["sliding" if sw is not None and i >= mwl else "full" for i in range(n_layers)]
        source = "max_window_layers" if "sliding" in kinds else None
    else:
        kinds = ["full"] * n_layers
    layers = []
    for i, k in enumerate(kinds):
        if not is_dflash:
            causal = True  # autoregressive drafters (EAGLE, MTP) attend causally
        elif causal_override is not None:
            causal = causal_override
        else:
            # newer reference: sliding layers causal, full layers non-causal; MiMo's use_swa is non-causal
            causal = k == "sliding" and source != "use_swa"
        layers.append(LayerAttention(i, k, window if k == "sliding" else None, causal))
    return tuple(layers), source, (window if source else None)


def _disabled_window(cfg: dict, method: str, notes: list[str]) -> None:
    """A window declared and switched off (Qwen2-style `use_sliding_window: false`): said, not read as sliding."""
    sw = cfg.get("sliding_window")
    if cfg.get("use_sliding_window") is False and isinstance(sw, int) and not isinstance(sw, bool) and sw > 0:
        notes.append(
            f"sliding_window {sw} is declared but use_sliding_window is false: the window is off and every layer "
            "attends in full (transformers' rule)"
        )


def _layers_as_target(
    f: _Fields, cfg: dict, n_layers: int | None, notes: list[str]
) -> tuple[tuple[LayerAttention, ...], str | None, int | None]:
    """A config no drafter reader knows: its layer kinds as transformers derives a model's (Mamba, MLP and MoE
    blocks are not attention layers), never assumed full attention."""
    kinds, rule, window = target_layers.derive(f, cfg, n_layers)
    if not kinds:
        return (), None, None
    notes.append(f"layer kinds derived as for any model: {rule}")
    layers = tuple(LayerAttention(i, k, window if k == "sliding" else None, True) for i, k in enumerate(kinds))
    sliding = any(k == "sliding" for k in kinds)
    return layers, (rule if sliding else None), (window if sliding else None)


_CARD_PATTERNS = (
    (
        "under-training",
        re.compile(
            r"\b(still|currently|being|is)\s+(under|in)\s+training\b|\bunder\s+training\b|"
            r"\bstill\s+(being\s+)?train(ed|ing)\b|\btraining\s+(is\s+)?(still\s+)?in\s+progress\b",
            re.I,
        ),
    ),
    ("preview", re.compile(r"\bpreview\b|\bexperimental\s+(checkpoint|release|model)\b", re.I)),
    (
        "non-thinking",
        re.compile(
            r"\bwithout\s+thinking\b|\bnon[- ]thinking\b|\bno\s+thinking\b|"
            r"\bthinking\s+(mode\s+)?(disabled|off)\b|enable_thinking\s*=\s*false",
            re.I,
        ),
    ),
)


def read_card(text: str) -> tuple[CardWarning, ...]:
    out: list[CardWarning] = []
    seen: set[str] = set()
    for line in text.splitlines()[:20000]:
        for kind, rx in _CARD_PATTERNS:
            if kind not in seen and rx.search(line):
                seen.add(kind)
                text = line.replace("**", "").replace("__", "").strip().lstrip("#>*- ").strip()
                out.append(CardWarning(kind, plain(text)[:200]))
    return tuple(out)


def drafter_facts(spec: str, files: FileAccess | None = None, with_weights: bool = True) -> DrafterFacts:
    files = files or LocalFiles()
    ckpt = locate(spec, files, "drafter")
    raw = load_config(files, ckpt.config_path, "drafter")
    return drafter_facts_from_config(raw, ckpt, files, with_weights)


def drafter_facts_from_config(
    raw: dict, ckpt: Checkpoint, files: FileAccess, with_weights: bool = True
) -> DrafterFacts:
    warnings: list[str] = []
    top = Fields(raw, warnings)
    archs = top.str_list("architectures") or ()
    r = read_drafter(raw, top, archs)
    shape = r.shape
    f = Fields(shape, warnings)
    if r.shape_label:  # say where a bad shape field was found
        f = _LabelledFields(shape, warnings, r.shape_label)
    method = r.method
    is_dflash = method in ("dflash", "dflash2")
    n_layers = f.int("num_hidden_layers")
    if r.embedded_in_target or (method == "mtp" and r.mtp_layers is not None):
        n_layers = r.mtp_layers
    n_target = r.num_target_layers

    ids, ids_src = _output_ids(r, is_dflash, n_target, n_layers, warnings)
    hf_idx = tuple(i + 1 for i in ids) if ids is not None else None
    raw_idx = ids if is_dflash and ids is not None else None
    if ids is None and method in ("eagle3", "peagle"):
        warnings.append(
            "no eagle_aux_hidden_state_layer_ids (top level or in eagle_config): engines tap their "
            "default target layers (2, n//2, n−3); if the drafter was trained on other layers, "
            "acceptance collapses — check the training recipe"
        )

    if r.embedded_in_target:
        # MTP layers are decoder layers of their own, whatever the target's pattern is: full attention,
        # unless the reader knows the engines build them sliding (MiMo-V2). The target's layer_types
        # describe the target's stack, not these layers.
        kind = "sliding" if r.mtp_window is not None else "full"
        layers = tuple(LayerAttention(i, kind, r.mtp_window, True) for i in range(n_layers or 0))
        swa_src, window = (r.mtp_window_source, r.mtp_window) if r.mtp_window is not None else (None, None)
    elif method == "unknown":
        layers, swa_src, window = _layers_as_target(f, shape, n_layers, r.notes)
    else:
        layers, swa_src, window = _layers(f, shape, r.dcfg, n_layers, is_dflash)
    _disabled_window(shape, method, r.notes)
    card, card_file = _card(files, ckpt.directory)
    weights = None
    if with_weights:
        try:
            names = files.list_dir(ckpt.directory)
        except OSError as exc:
            weights = WeightFacts("none", problems=(f"cannot list {ckpt.directory}: {describe_os_error(exc)}",))
        else:
            weights = read_weights(files, ckpt.directory, names)

    dtype = top.str("torch_dtype") or top.str("dtype") or f.str("torch_dtype") or f.str("dtype")
    vocab = f.int("vocab_size") if "vocab_size" in shape else top.int("vocab_size")
    draft_vocab = r.draft_vocab_size
    if draft_vocab is None and "draft_vocab_size" in raw and method not in ("eagle3", "peagle"):
        draft_vocab = top.int("draft_vocab_size")
    special = _own_special_tokens(_special_tokens(Fields(raw, warnings), f), vocab, warnings)
    not_understood = list(r.not_understood)
    if method == "unknown":
        not_understood += [k for k in ("speculators_model_type", "dflash_config", "eagle_config") if k in raw]
    return DrafterFacts(
        source=ckpt.spec,
        config_path=ckpt.config_path,
        method=method,
        architectures=archs,
        model_type=top.str("model_type"),
        speculators_format="speculators_model_type" in raw,
        block_size=r.block_size,
        block_size_source=r.block_size_source,
        mask_token_id=r.mask_token_id,
        target_layer_ids=ids,
        layer_ids_source=ids_src,
        hf_hidden_state_indices=hf_idx,
        raw_capture_indices=raw_idx,
        num_target_layers=n_target,
        num_hidden_layers=n_layers,
        hidden_size=f.int("hidden_size"),
        target_hidden_size=r.target_hidden_size,
        head_dim=f.int("head_dim"),
        num_attention_heads=f.int("num_attention_heads"),
        num_key_value_heads=f.int("num_key_value_heads"),
        intermediate_size=f.int("intermediate_size"),
        vocab_size=vocab,
        draft_vocab_size=draft_vocab,
        rope=read_rope(f),
        dtype=dtype,
        layers=layers,
        swa_config=swa_src,
        sliding_window=window,
        card=card,
        card_file=card_file,
        weights=weights,
        warnings=tuple(warnings),
        family=r.family,
        intended_target=r.intended_target,
        intended_target_source=r.intended_target_source,
        not_understood=tuple(not_understood),
        notes=tuple(r.notes),
        mtp_layers=r.mtp_layers,
        medusa_heads=r.medusa_heads,
        medusa_layers=r.medusa_layers,
        embedded_in_target=r.embedded_in_target,
        attention_sinks=r.attention_sinks,
        backbone_rotary_base=r.backbone_rotary_base,
        target_model_type=r.target_model_type,
        speculative_tokens=r.speculative_tokens,
        special_tokens=special,
        ids_written=r.ids,
    )


def _output_ids(
    r, is_dflash: bool, n_target: int | None, n_layers: int | None, warnings: list[str]
) -> tuple[tuple[int, ...] | None, str | None]:
    """The target layers whose OUTPUT the drafter reads, and the field they came from. Ids written in the
    capture-before convention (speculators' top-level fields: id k = the stream entering layer k) are
    ids − 1; every other placement names outputs already (aux_taps.toml, docs/layer-id-conventions.md)."""
    ids, src = r.ids, r.ids_source
    if ids is not None and src in AUX_SOURCES:
        return tuple(i - 1 for i in ids), src
    if ids is None and is_dflash and n_target and n_layers:
        ids = default_target_layer_ids(n_target, n_layers)
        warnings.append(
            "target_layer_ids absent: derived by the older reference's default rule "
            f"{list(ids)}; newer checkpoints state them (SGLang applies the same default; vLLM has none: "
            "its fc expects one state per drafter layer and the runner taps three — a shape error)"
        )
        return ids, "default"
    return ids, src


class _LabelledFields(Fields):
    """Fields read from a nested dict: warnings name the nesting (`transformer_layer_config.hidden_size`)."""

    def __init__(self, cfg, warnings, label: str):
        super().__init__(cfg, warnings)
        self.label = label

    def int(self, key, where=None, label=None):
        return super().int(key, where, label or (self.label + key if where is None else None))

    def num(self, key, where=None, label=None):
        return super().num(key, where, label or (self.label + key if where is None else None))


def _own_special_tokens(
    special: dict[str, tuple[int, ...]] | None, vocab: int | None, warnings: list[str]
) -> dict[str, tuple[int, ...]] | None:
    """Drop bos/eos/pad ids that lie outside the drafter's own vocabulary: such a field was copied from
    another model's config (SpecForge's DeepSeek-V3 EAGLE-3 config carries Qwen's 151643/151645 beside
    vocab_size 129280). It contradicts the config itself, so it is no evidence about the target."""
    if not special or vocab is None:
        return special
    out = {}
    for key, ids in special.items():
        bad = [i for i in ids if i >= vocab]
        if bad:
            warnings.append(
                f"{key} {bad[0] if len(ids) == 1 else list(ids)} is outside the drafter's own vocabulary "
                f"({vocab}): copied from another model's config; not used to compare tokenizers"
            )
        else:
            out[key] = ids
    return out or None


def _special_tokens(*fs: Fields) -> dict[str, tuple[int, ...]] | None:
    out: dict[str, tuple[int, ...]] = {}
    for f in fs:
        for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
            if key not in out and key in f.cfg:
                v = f.token_ids(key)
                if v is not None:
                    out[key] = v
    return out or None


def _card(files: FileAccess, directory: str) -> tuple[tuple[CardWarning, ...], str | None]:
    path = posixpath.join(directory, "README.md")
    try:
        text = files.read(path, MAX_CARD_BYTES).decode("utf-8", "replace")
    except OSError:
        return (), None
    return read_card(text), path


def target_facts(spec: str, files: FileAccess | None = None) -> TargetFacts:
    files = files or LocalFiles()
    ckpt = locate(spec, files, "target")
    raw = load_config(files, ckpt.config_path, "target")
    warnings: list[str] = []
    top = Fields(raw, warnings)
    archs = top.str_list("architectures") or ()
    cfg, nested = text_config(raw)
    f = Fields(cfg, warnings)
    n = f.int("num_hidden_layers")
    kinds, rule, window = target_layers.derive(f, cfg, n)
    lt = f.str_list("layer_types") if isinstance(cfg.get("layer_types"), list) else None
    counts: dict[str, int] = {}
    names = {
        "full": "full_attention",
        "sliding": "sliding_attention",
        "linear": "linear_attention",
        "mamba": "mamba",
        "conv": "conv",
        "mlp": "mlp",
        "moe": "moe",
    }
    for k in kinds or ():
        counts[names[k]] = counts.get(names[k], 0) + 1
    sw = window if kinds and "sliding" in kinds else None
    quant = top.dict("quantization_config")
    tok_files, special, tok_names = _tokenizer_ids(files, ckpt.directory, warnings)
    mtp_n, mtp_field = _mtp_count(cfg, f)
    return TargetFacts(
        source=ckpt.spec,
        config_path=ckpt.config_path,
        architectures=archs,
        model_type=top.str("model_type"),
        text_config_nested=nested,
        num_hidden_layers=n,
        hidden_size=f.int("hidden_size"),
        vocab_size=f.int("vocab_size"),
        layer_types=lt,
        layer_type_counts=counts,
        sliding_window=sw,
        rope=read_rope(f),
        quantization=quant,
        tokenizer_files=tok_files,
        special_token_ids=special,
        warnings=tuple(warnings),
        layer_kinds=kinds,
        layer_kinds_rule=rule,
        mtp_layers=mtp_n,
        mtp_field=mtp_field,
        special_tokens=_special_tokens(top, f),
        name_or_path=top.str("_name_or_path"),
        tokenizer_names=tok_names,
    )


def _mtp_count(cfg: dict, f: Fields) -> tuple[int | None, str | None]:
    return embedded_count(cfg, f)


def _tokenizer_ids(
    files: FileAccess, directory: str, warnings: list[str]
) -> tuple[tuple[str, ...], tuple[int, ...] | None, dict[int, str] | None]:
    """Ids (and texts) of added/special tokens, from tokenizer_config.json and tokenizer.json's added_tokens."""
    found: list[str] = []
    ids: set[int] = set()
    texts: dict[int, str] = {}
    for name in ("tokenizer_config.json", "tokenizer.json"):
        path = posixpath.join(directory, name)
        try:
            raw = files.read(path, MAX_TOKENIZER_BYTES + 1)
        except OSError:
            continue
        if len(raw) > MAX_TOKENIZER_BYTES:
            warnings.append(f"{name} larger than {MAX_TOKENIZER_BYTES >> 20} MiB; not read")
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # not UTF-8, not JSON, absurd numbers or nesting
            warnings.append(f"{name} is not valid JSON; not read")
            continue
        if not isinstance(obj, dict):
            continue
        found.append(name)
        dec = obj.get("added_tokens_decoder")
        if isinstance(dec, dict):
            for k, v in dec.items():
                if isinstance(k, str) and k.isdigit() and len(k) < 9:
                    ids.add(int(k))
                    if isinstance(v, dict) and isinstance(v.get("content"), str):
                        texts.setdefault(int(k), v["content"][:64])
        added = obj.get("added_tokens")
        if isinstance(added, list):
            for t in added:
                if isinstance(t, dict) and isinstance(t.get("id"), int) and not isinstance(t.get("id"), bool):
                    ids.add(t["id"])
                    if isinstance(t.get("content"), str):
                        texts.setdefault(t["id"], t["content"][:64])
    return tuple(found), (tuple(sorted(ids)) if found else None), (texts if found else None)
