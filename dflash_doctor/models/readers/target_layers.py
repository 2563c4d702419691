"""Per-layer attention kinds of a target, derived the way transformers' own configuration classes
derive `layer_types` when a config does not list them (transformers/models/*/configuration_*.py).
The rule used is returned with the kinds, so the output can name it."""

from __future__ import annotations

from .fields import Fields

# layer kinds: "full" | "sliding" | "linear" (GatedDeltaNet / lightning) | "mamba" | "conv" | "mlp" | "moe"
# (the last two: no attention, a dense or mixture-of-experts feed-forward block)
_TYPE_NAMES = {
    "full_attention": "full",
    "sliding_attention": "sliding",
    "linear_attention": "linear",
    "chunked_attention": "sliding",
    "mamba": "mamba",
    "conv": "conv",
    "attention": "full",
    "hybrid": "full",
    "moe": "moe",
    "mlp": "mlp",
}
# Nemotron-H's hybrid_override_pattern letters (transformers configuration_nemotron_h.py: M mamba, * attention,
# - MLP, E MoE)
_NEMOTRON = {"M": "mamba", "*": "full", "-": "mlp", "E": "moe"}
INTERVAL_LINEAR = {"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"}
PATTERN_SLIDING = {"gemma3": 6, "gemma3_text": 6, "gemma4": 6, "gemma4_text": 6, "cohere2": 4, "exaone4": 4}
# sliding windows transformers assumes when the key is absent (Exaone4Config: 4096)
DEFAULT_WINDOW = {"exaone4": 4096}
ALTERNATING_SLIDING = {"gemma2", "gpt_oss"}  # layer i slides when (i + 1) % 2
MAX_WINDOW = {"qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "mimo", "qwen2_5_vl_text", "qwen3_vl_text"}
MODEL_WIDE = {"mistral", "mixtral", "phi3", "starcoder2", "qwen2_vl"}


Derived = tuple[tuple[str, ...] | None, str, int | None]


def derive(f: Fields, cfg: dict, n: int | None) -> Derived:
    """(kinds per layer or None, the rule named in words, the sliding window of the sliding layers).
    The rules are tried in transformers' order of precedence; the first that applies decides."""
    if not n:
        return None, "num_hidden_layers not stated", None
    for rule in _RULES:
        found = rule(f, cfg, n)
        if found is not None:
            return found
    return tuple("full" for _ in range(n)), "no layer-type fields: every layer full attention", None


def _layer_types(f: Fields, cfg: dict, n: int) -> Derived | None:
    lt = f.str_list("layer_types")
    if lt is None:
        return None
    if len(lt) != n:
        f.w.append(f"layer_types has {len(lt)} entries but num_hidden_layers is {n}; derived instead")
        return None
    unknown = sorted({t for t in lt if t not in _TYPE_NAMES})
    if unknown:
        f.w.append(f"layer_types has unknown kinds {unknown}; read as full attention")
    return tuple(_TYPE_NAMES.get(t, "full") for t in lt), "layer_types", f.int("sliding_window")


def _block_types(f: Fields, cfg: dict, n: int) -> Derived | None:
    lbt = f.str_list("layers_block_type")
    if lbt is not None and len(lbt) == n:
        return tuple(_TYPE_NAMES.get(t, "full") for t in lbt), "layers_block_type", f.int("sliding_window")
    return None


def _hybrid_override(f: Fields, cfg: dict, n: int) -> Derived | None:
    hop = cfg.get("hybrid_override_pattern")
    if not (isinstance(hop, str) and len(hop) == n):
        return None
    kinds = tuple(_NEMOTRON.get(c, "full") for c in hop)
    rule = "hybrid_override_pattern (M Mamba, * attention, - MLP, E MoE; nemotron_h)"
    return kinds, rule, f.int("sliding_window")


def _lfm2(f: Fields, cfg: dict, n: int) -> Derived | None:
    if not isinstance(cfg.get("full_attn_idxs"), list):
        return None
    idx = {i for i in cfg["full_attn_idxs"] if isinstance(i, int)}
    return tuple("full" if i in idx else "conv" for i in range(n)), "full_attn_idxs (lfm2: the rest are conv)", None


def _interval_linear(f: Fields, cfg: dict, n: int) -> Derived | None:
    if str(cfg.get("model_type") or "") not in INTERVAL_LINEAR and "full_attention_interval" not in cfg:
        return None
    k = f.int("full_attention_interval") or 4
    kinds = tuple("linear" if (i + 1) % k else "full" for i in range(n))
    given = "" if "full_attention_interval" in cfg else ", transformers' default"
    rule = (
        f"full_attention_interval = {k}{given} (layer i is full when (i + 1) % {k} == 0, else linear attention — "
        "GatedDeltaNet)"
    )
    return kinds, rule, None


def _jamba(f: Fields, cfg: dict, n: int) -> Derived | None:
    if "attn_layer_period" not in cfg and cfg.get("model_type") != "jamba":
        return None
    p, o = f.int("attn_layer_period") or 8, f.int("attn_layer_offset") or 4
    kinds = tuple("full" if i % p == o else "mamba" for i in range(n))
    return kinds, f"attn_layer_period {p} / attn_layer_offset {o} (jamba: the rest are Mamba)", None


def _pattern_sliding(f: Fields, cfg: dict, n: int) -> Derived | None:
    mt = str(cfg.get("model_type") or "")
    pat = cfg.get("sliding_window_pattern")
    if isinstance(pat, str):
        return _letter_pattern(f, pat, n)
    if mt not in PATTERN_SLIDING and "sliding_window_pattern" not in cfg:
        return None
    window = f.int("sliding_window") if "sliding_window" in cfg else DEFAULT_WINDOW.get(mt)
    if mt in DEFAULT_WINDOW and window is None:
        return tuple("full" for _ in range(n)), f"{mt}: sliding_window null: every layer full attention", None
    p = f.int("sliding_window_pattern") or PATTERN_SLIDING.get(mt, 6)
    kinds = tuple("sliding" if (i + 1) % p else "full" for i in range(n))
    if mt.startswith("gemma4") and kinds:
        kinds = kinds[:-1] + ("full",)  # transformers forces the last Gemma-4 layer to full attention
    given = "" if "sliding_window_pattern" in cfg else ", transformers' default"
    rule = f"sliding_window_pattern = {p}{given} (layer i is full when (i + 1) % {p} == 0)"
    if "sliding_window" not in cfg and mt in DEFAULT_WINDOW:
        rule += f"; sliding_window not stated: transformers' default {window}"
    return kinds, rule, window


def _letter_pattern(f: Fields, pat: str, n: int) -> Derived | None:
    """EXAONE-4's "LLLG": L local (sliding), G global, repeated (transformers Exaone4Config)."""
    if not pat or set(pat) - {"L", "G"}:
        f.w.append(f"sliding_window_pattern {pat[:20]!r} is not a string of L and G; ignored")
        return None
    window = f.int("sliding_window")
    if window is None:
        return tuple("full" for _ in range(n)), f"sliding_window_pattern {pat!r} but no sliding_window: all full", None
    kinds = tuple("sliding" if pat[i % len(pat)] == "L" else "full" for i in range(n))
    return kinds, f"sliding_window_pattern {pat!r} (L sliding, G full, repeated)", window


def _alternating(f: Fields, cfg: dict, n: int) -> Derived | None:
    mt = str(cfg.get("model_type") or "")
    if mt in ALTERNATING_SLIDING:
        kinds = tuple("sliding" if (i + 1) % 2 else "full" for i in range(n))
        return kinds, f"{mt}: alternating sliding/full (transformers' default layer_types)", f.int("sliding_window")
    if mt == "minimax":
        kinds = tuple("full" if (i + 1) % 2 else "linear" for i in range(n))
        return kinds, "minimax: alternating full/linear (transformers' default layer_types)", None
    return None


def _mimo_v2(f: Fields, cfg: dict, n: int) -> Derived | None:
    mt = str(cfg.get("model_type") or "")
    hlp = cfg.get("hybrid_layer_pattern")
    if not isinstance(hlp, list) and mt != "mimo_v2_flash":
        return None
    window = f.int("sliding_window")
    if isinstance(hlp, list) and len(hlp) == n and all(v in (0, 1) and not isinstance(v, bool) for v in hlp):
        # MiMo-V2: vLLM and SGLang build layer i as sliding-window attention when the entry is 1;
        # transformers ignores the field and derives its own default, so say whether the two agree
        kinds = tuple("sliding" if v else "full" for v in hlp)
        rule = "hybrid_layer_pattern (1 = sliding window, 0 = full; what vLLM and SGLang read)"
        if mt == "mimo_v2_flash":
            rule += (
                "; transformers' default gives the same"
                if kinds == _mimo_v2_default(n)
                else "; transformers ignores it and derives full on layer 0 and every 6th: engines and "
                "transformers disagree"
            )
        return kinds, rule, window
    if mt == "mimo_v2_flash":
        rule = "mimo_v2_flash: full on layer 0 and every 6th, sliding otherwise (transformers' default)"
        return _mimo_v2_default(n), rule, window
    return None


def _max_window(f: Fields, cfg: dict, n: int) -> Derived | None:
    if "use_sliding_window" not in cfg and "max_window_layers" not in cfg and cfg.get("model_type") not in MAX_WINDOW:
        return None
    window = f.int("sliding_window")
    use = f.bool("use_sliding_window")
    if not use:
        declared = f" (a window of {window} is declared but switched off)" if window is not None else ""
        state = "false" if use is False else "not set"
        return (
            tuple("full" for _ in range(n)),
            f"use_sliding_window is {state}: sliding_window ignored{declared}, all full attention",
            None,
        )
    if window is None:
        return tuple("full" for _ in range(n)), "use_sliding_window true but sliding_window null: all full", None
    mwl = f.int("max_window_layers")
    mwl = 28 if mwl is None else mwl
    kinds = tuple("sliding" if i >= mwl else "full" for i in range(n))
    return kinds, f"use_sliding_window + max_window_layers = {mwl} (layer i slides when i >= {mwl})", window


def _model_wide(f: Fields, cfg: dict, n: int) -> Derived | None:
    mt = str(cfg.get("model_type") or "")
    window = f.int("sliding_window")
    if window is not None and (mt in MODEL_WIDE or mt not in ("llama", "")):
        return (
            tuple("sliding" for _ in range(n)),
            f"model-wide sliding_window = {window} ({mt or 'model'}: every layer slides)",
            window,
        )
    return None


_RULES = (
    _layer_types,
    _block_types,
    _hybrid_override,
    _lfm2,
    _interval_linear,
    _jamba,
    _pattern_sliding,
    _alternating,
    _mimo_v2,
    _max_window,
    _model_wide,
)


def _mimo_v2_default(n: int) -> tuple[str, ...]:
    return tuple("full" if i == 0 or not (i + 1) % 6 else "sliding" for i in range(n))
