"""Per-layer attention kinds of a target, derived the way transformers' own configuration classes
derive `layer_types` when a config does not list them (transformers/models/*/configuration_*.py).
The rule used is returned with the kinds, so the output can name it."""

from __future__ import annotations

from .fields import Fields

# layer kinds: "full" | "sliding" | "linear" (GatedDeltaNet / lightning) | "mamba" | "conv" | "mlp" (no attention)
_TYPE_NAMES = {
    "full_attention": "full",
    "sliding_attention": "sliding",
    "linear_attention": "linear",
    "chunked_attention": "sliding",
    "mamba": "mamba",
    "conv": "conv",
    "attention": "full",
    "hybrid": "full",
    "moe": "mlp",
    "mlp": "mlp",
}
INTERVAL_LINEAR = {"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"}
PATTERN_SLIDING = {"gemma3": 6, "gemma3_text": 6, "gemma4": 6, "gemma4_text": 6, "cohere2": 4}
ALTERNATING_SLIDING = {"gemma2", "gpt_oss"}  # layer i slides when (i + 1) % 2
MAX_WINDOW = {"qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "mimo", "qwen2_5_vl_text", "qwen3_vl_text"}
MODEL_WIDE = {"mistral", "mixtral", "phi3", "starcoder2", "qwen2_vl"}


def derive(f: Fields, cfg: dict, n: int | None) -> tuple[tuple[str, ...] | None, str, int | None]:
    """(kinds per layer or None, the rule named in words, the sliding window of the sliding layers)."""
    if not n:
        return None, "num_hidden_layers not stated", None
    mt = str(cfg.get("model_type") or "")
    window = f.int("sliding_window")
    lt = f.str_list("layer_types")
    if lt is not None:
        if len(lt) == n:
            unknown = sorted({t for t in lt if t not in _TYPE_NAMES})
            if unknown:
                f.w.append(f"layer_types has unknown kinds {unknown}; read as full attention")
            return tuple(_TYPE_NAMES.get(t, "full") for t in lt), "layer_types", window
        f.w.append(f"layer_types has {len(lt)} entries but num_hidden_layers is {n}; derived instead")
    lbt = f.str_list("layers_block_type")
    if lbt is not None and len(lbt) == n:
        return tuple(_TYPE_NAMES.get(t, "full") for t in lbt), "layers_block_type", window
    hop = cfg.get("hybrid_override_pattern")
    if isinstance(hop, str) and len(hop) == n:
        kinds = tuple({"M": "mamba", "*": "full", "-": "mlp", "E": "mlp"}.get(c, "full") for c in hop)
        return kinds, "hybrid_override_pattern (M mamba, * attention, - MLP; nemotron_h)", window
    if isinstance(cfg.get("full_attn_idxs"), list):
        idx = {i for i in cfg["full_attn_idxs"] if isinstance(i, int)}
        return tuple("full" if i in idx else "conv" for i in range(n)), "full_attn_idxs (lfm2: the rest are conv)", None
    if mt in INTERVAL_LINEAR or "full_attention_interval" in cfg:
        k = f.int("full_attention_interval") or 4
        kinds = tuple("linear" if (i + 1) % k else "full" for i in range(n))
        given = "" if "full_attention_interval" in cfg else ", transformers' default"
        return (
            kinds,
            f"full_attention_interval = {k}{given} (layer i is full when (i + 1) % {k} == 0, else linear "
            "attention — GatedDeltaNet)",
            None,
        )
    if "attn_layer_period" in cfg or mt == "jamba":
        p, o = f.int("attn_layer_period") or 8, f.int("attn_layer_offset") or 4
        return (
            tuple("full" if i % p == o else "mamba" for i in range(n)),
            f"attn_layer_period {p} / attn_layer_offset {o} (jamba: the rest are Mamba)",
            None,
        )
    if mt in PATTERN_SLIDING or "sliding_window_pattern" in cfg:
        p = f.int("sliding_window_pattern") or PATTERN_SLIDING.get(mt, 6)
        kinds = tuple("sliding" if (i + 1) % p else "full" for i in range(n))
        if mt.startswith("gemma4") and kinds:
            kinds = kinds[:-1] + ("full",)  # transformers forces the last Gemma-4 layer to full attention
        given = "" if "sliding_window_pattern" in cfg else ", transformers' default"
        return kinds, f"sliding_window_pattern = {p}{given} (layer i is full when (i + 1) % {p} == 0)", window
    if mt in ALTERNATING_SLIDING:
        return (
            tuple("sliding" if (i + 1) % 2 else "full" for i in range(n)),
            f"{mt}: alternating sliding/full (transformers' default layer_types)",
            window,
        )
    if mt == "minimax":
        return (
            tuple("full" if (i + 1) % 2 else "linear" for i in range(n)),
            "minimax: alternating full/linear (transformers' default layer_types)",
            None,
        )
    hlp = cfg.get("hybrid_layer_pattern")
    if isinstance(hlp, list) and len(hlp) == n and all(v in (0, 1) and not isinstance(v, bool) for v in hlp):
        # MiMo-V2: vLLM and SGLang build layer i as sliding-window attention when the entry is 1;
        # transformers ignores the field and derives its own default, so say whether the two agree
        kinds = tuple("sliding" if v else "full" for v in hlp)
        rule = "hybrid_layer_pattern (1 = sliding window, 0 = full; what vLLM and SGLang read)"
        if mt == "mimo_v2_flash":
            agree = kinds == _mimo_v2_default(n)
            rule += (
                "; transformers' default gives the same"
                if agree
                else "; transformers ignores it and derives full on layer 0 and every 6th: engines and "
                "transformers disagree"
            )
        return kinds, rule, window
    if mt == "mimo_v2_flash":
        return (
            _mimo_v2_default(n),
            "mimo_v2_flash: full on layer 0 and every 6th, sliding otherwise (transformers' default)",
            window,
        )
    if "use_sliding_window" in cfg or "max_window_layers" in cfg or mt in MAX_WINDOW:
        use = f.bool("use_sliding_window")
        if not use:
            return (
                tuple("full" for _ in range(n)),
                "use_sliding_window is "
                + ("false" if use is False else "not set")
                + ": sliding_window ignored, all full attention",
                None,
            )
        if window is None:
            return tuple("full" for _ in range(n)), "use_sliding_window true but sliding_window null: all full", None
        mwl = f.int("max_window_layers")
        mwl = 28 if mwl is None else mwl
        kinds = tuple("sliding" if i >= mwl else "full" for i in range(n))
        return kinds, f"use_sliding_window + max_window_layers = {mwl} (layer i slides when i >= {mwl})", window
    if window is not None and (mt in MODEL_WIDE or mt not in ("llama", "")):
        return (
            tuple("sliding" for _ in range(n)),
            f"model-wide sliding_window = {window} ({mt or 'model'}: every layer slides)",
            window,
        )
    return tuple("full" for _ in range(n)), "no layer-type fields: every layer full attention", None


def _mimo_v2_default(n: int) -> tuple[str, ...]:
    return tuple("full" if i == 0 or not (i + 1) % 6 else "sliding" for i in range(n))
