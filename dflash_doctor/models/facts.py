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
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..probe.config import default_target_layer_ids  # torch-free; the probe's own rule
from .files import FileAccess, LocalFiles, describe_os_error
from .locate import Checkpoint, locate
from .safetensors_header import WeightFacts, read_weights

MAX_CONFIG_BYTES = 4 << 20
MAX_CARD_BYTES = 1 << 20
MAX_TOKENIZER_BYTES = 64 << 20

# Bounds beyond which a number is a corrupt config, not a model.
LIMITS = {"hidden_size": 1 << 17, "num_hidden_layers": 4096, "num_target_layers": 4096, "vocab_size": 1 << 24,
          "draft_vocab_size": 1 << 24, "intermediate_size": 1 << 20, "num_attention_heads": 4096,
          "num_key_value_heads": 4096, "head_dim": 8192, "block_size": 4096, "sliding_window": 1 << 31,
          "max_window_layers": 1 << 16, "mask_token_id": 1 << 24, "target_hidden_size": 1 << 17,
          "swa_window_size": 1 << 31}

DFLASH_ARCHS = {"DFlashDraftModel": "dflash", "DFlash2DraftModel": "dflash2"}


@dataclass(frozen=True)
class LayerAttention:
    index: int
    attention: str  # "full" | "sliding"
    window: int | None
    causal: bool

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "attention": self.attention, "window": self.window, "causal": self.causal}


@dataclass(frozen=True)
class RopeFacts:
    theta: float | None
    scaling: dict | None  # rope_scaling / non-default rope_parameters type
    partial_rotary_factor: float | None
    source: str  # which field the theta came from

    def to_dict(self) -> dict[str, Any]:
        return {"theta": self.theta, "scaling": self.scaling, "partial_rotary_factor": self.partial_rotary_factor,
                "source": self.source}


@dataclass(frozen=True)
class CardWarning:
    kind: str  # "under-training" | "preview" | "non-thinking"
    line: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "line": self.line}


@dataclass(frozen=True)
class DrafterFacts:
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

    @property
    def swa_layers(self) -> tuple[int, ...]:
        return tuple(la.index for la in self.layers if la.attention == "sliding")

    @property
    def swa_mix(self) -> str:
        """"none" | "all" | "mixed" — what engines decide support on."""
        n = len(self.swa_layers)
        return "none" if n == 0 else ("all" if n == len(self.layers) else "mixed")

    @property
    def is_dflash(self) -> bool:
        return self.method in ("dflash", "dflash2")

    def to_dict(self) -> dict[str, Any]:
        from ..evidence import to_jsonable
        d = {f: to_jsonable(getattr(self, f)) for f in self.__dataclass_fields__}
        d["swa_layers"] = list(self.swa_layers)
        d["swa_mix"] = self.swa_mix
        return d


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

    @property
    def hybrid_linear(self) -> bool:
        return self.layer_type_counts.get("linear_attention", 0) > 0

    def to_dict(self) -> dict[str, Any]:
        from ..evidence import to_jsonable
        d = {f: to_jsonable(getattr(self, f)) for f in self.__dataclass_fields__}
        d["hybrid_linear"] = self.hybrid_linear
        if self.special_token_ids is not None and len(self.special_token_ids) > 64:
            d["special_token_ids"] = f"{len(self.special_token_ids)} ids"
        return d


def layer_span(indices) -> str:
    """"0–3" for a run of consecutive layers, "0, 2, 5" otherwise."""
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
        raise UsageError(f"{role} config {path} is not valid JSON: {exc.msg} (line {exc.lineno}, "
                         f"column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # a 5000-digit number, nesting 100k deep
        raise UsageError(f"{role} config {path} is not usable JSON: {str(exc)[:100]}") from None
    if not isinstance(obj, dict):
        raise UsageError(f"{role} config {path} is a JSON {type(obj).__name__}, not an object")
    return obj


class _Fields:
    """Typed access to a config dict; problems become warnings, bad values read as absent."""

    def __init__(self, cfg: dict[str, Any], warnings: list[str]):
        self.cfg = cfg
        self.w = warnings

    def int(self, key: str, where: dict | None = None, label: str | None = None) -> int | None:
        src = self.cfg if where is None else where
        if key not in src or src[key] is None:
            return None
        v = src[key]
        name = label or key
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                self.w.append(f"{name} is {_show(v)}, expected an integer; ignored")
                return None
        limit = LIMITS.get(key)
        if v < 0 or (limit is not None and v > limit):
            self.w.append(f"{name} = {v} is outside any plausible range; ignored")
            return None
        return v

    def num(self, key: str, where: dict | None = None, label: str | None = None) -> float | None:
        src = self.cfg if where is None else where
        v = src.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
            self.w.append(f"{label or key} is {_show(v)}, expected a number; ignored")
            return None
        return float(v)

    def _typed(self, key: str, where: dict | None, kind: type, expected: str):
        """The value of key (in where, else the config) when it is a `kind`; otherwise a warning and None."""
        v = (self.cfg if where is None else where).get(key)
        if v is None or isinstance(v, kind):
            return v
        self.w.append(f"{key} is {_show(v)}, expected {expected}; ignored")
        return None

    def bool(self, key: str, where: dict | None = None) -> bool | None:
        return self._typed(key, where, bool, "true/false")

    def str(self, key: str) -> str | None:
        v = self._typed(key, None, str, "a string")
        return None if v is None else v[:200]

    def dict(self, key: str, where: dict | None = None) -> dict | None:
        return self._typed(key, where, dict, "an object")

    def int_list(self, key: str, where: dict, label: str) -> tuple[int, ...] | None:
        v = where.get(key)
        if v is None:
            return None
        if not isinstance(v, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
            self.w.append(f"{label} is {_show(v)}, expected a list of integers; ignored")
            return None
        if len(v) > 4096 or any(i < 0 or i > 1 << 16 for i in v):
            self.w.append(f"{label} has implausible entries; ignored")
            return None
        return tuple(v)

    def str_list(self, key: str, where: dict | None = None) -> tuple[str, ...] | None:
        src = self.cfg if where is None else where
        v = src.get(key)
        if v is None:
            return None
        if not isinstance(v, list) or not all(isinstance(i, str) for i in v) or len(v) > 65536:
            self.w.append(f"{key} is {_show(v)}, expected a list of strings; ignored")
            return None
        return tuple(s[:64] for s in v)


def _show(v: Any) -> str:
    s = json.dumps(v) if not isinstance(v, str) else repr(v)
    return (s[:40] + "…") if len(s) > 40 else s


def text_config(cfg: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Multimodal wrappers (e.g. Qwen3_5ForConditionalGeneration) nest the LM's config."""
    tc = cfg.get("text_config")
    if isinstance(tc, dict):
        merged = {k: v for k, v in cfg.items() if k != "text_config"}
        merged.update(tc)
        return merged, True
    return cfg, False


def read_rope(f: _Fields) -> RopeFacts:
    params = f.dict("rope_parameters") or {}
    theta, src = f.num("rope_theta"), "rope_theta"
    if theta is None and params:
        theta, src = f.num("rope_theta", params, "rope_parameters.rope_theta"), "rope_parameters.rope_theta"
    scaling = f.dict("rope_scaling")
    if scaling is None and params.get("rope_type") not in (None, "default"):
        scaling = {k: v for k, v in params.items() if k not in ("rope_theta",)}
    prf = f.num("partial_rotary_factor")
    if prf is None and params:
        prf = f.num("partial_rotary_factor", params, "rope_parameters.partial_rotary_factor")
    if prf is not None and not 0 < prf <= 1:
        f.w.append(f"partial_rotary_factor = {prf} is not in (0, 1]; ignored")
        prf = None
    return RopeFacts(theta, scaling, prf, src if theta is not None else "absent")


def _method(cfg: dict[str, Any], archs: tuple[str, ...], spec_type: str | None) -> str:
    for a in archs:
        if a in DFLASH_ARCHS:
            return DFLASH_ARCHS[a]
    low = " ".join(archs).lower()
    if spec_type:
        st = spec_type.lower()
        if "dflash" in st:
            return "dflash"
        if "eagle3" in st:
            return "eagle3"
        if "eagle" in st:
            return "eagle"
    if "dflash" in low:
        return "dflash"
    if "eagle3" in low:
        return "eagle3"
    if "eagle" in low:
        return "eagle"
    if "medusa" in low or "medusa_num_heads" in cfg:
        return "medusa"
    if "mtp" in low or "nextn" in low or cfg.get("num_nextn_predict_layers"):
        return "mtp"
    if isinstance(cfg.get("dflash_config"), dict):
        return "dflash"
    return "unknown"


def _layers(f: _Fields, cfg: dict, dcfg: dict, n_layers: int | None, is_dflash: bool) -> tuple[tuple[LayerAttention, ...], str | None, int | None]:
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


_CARD_PATTERNS = (
    ("under-training", re.compile(r"\b(still|currently|being|is)\s+(under|in)\s+training\b|\bunder\s+training\b|"
                                  r"\bstill\s+(being\s+)?train(ed|ing)\b|\btraining\s+(is\s+)?(still\s+)?in\s+progress\b",
                                  re.I)),
    ("preview", re.compile(r"\bpreview\b|\bexperimental\s+(checkpoint|release|model)\b", re.I)),
    ("non-thinking", re.compile(r"\bwithout\s+thinking\b|\bnon[- ]thinking\b|\bno\s+thinking\b|"
                                r"\bthinking\s+(mode\s+)?(disabled|off)\b|enable_thinking\s*=\s*false", re.I)),
)


def read_card(text: str) -> tuple[CardWarning, ...]:
    from ..textsafe import plain
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


def drafter_facts_from_config(raw: dict, ckpt: Checkpoint, files: FileAccess, with_weights: bool = True) -> DrafterFacts:
    warnings: list[str] = []
    cfg, _nested = text_config(raw)
    f = _Fields(cfg, warnings)
    archs = f.str_list("architectures") or ()
    dcfg = f.dict("dflash_config") or {}
    spec_type = f.str("speculators_model_type")
    method = _method(cfg, archs, spec_type)
    is_dflash = method in ("dflash", "dflash2")
    n_layers = f.int("num_hidden_layers")
    n_target = f.int("num_target_layers") or f.int("num_target_layers", dcfg, "dflash_config.num_target_layers")

    block, block_src = f.int("block_size"), "block_size"
    if block is None and dcfg:
        block, block_src = f.int("block_size", dcfg, "dflash_config.block_size"), "dflash_config.block_size"
    if block is not None and block < 2:
        warnings.append(f"block_size = {block} is too small for block drafting; ignored")
        block = None
    mask = f.int("mask_token_id", dcfg, "dflash_config.mask_token_id") if dcfg else None
    if mask is None:
        mask = f.int("mask_token_id")

    ids: tuple[int, ...] | None = None
    ids_src: str | None = None
    aux = f.int_list("eagle_aux_hidden_state_layer_ids", cfg, "eagle_aux_hidden_state_layer_ids")
    if aux is not None:
        # already in capture-before form (shifted +1); engines use them as-is and they win
        ids_src = "eagle_aux_hidden_state_layer_ids"
        ids = tuple(i - 1 for i in aux) if is_dflash else aux
        hf_idx = aux
    else:
        for where, label in ((dcfg, "dflash_config.target_layer_ids"), (cfg, "target_layer_ids")):
            if where and "target_layer_ids" in where:
                ids = f.int_list("target_layer_ids", where, label)
                ids_src = label
                if ids is not None:
                    break
        if ids is None and is_dflash and n_target and n_layers:
            ids = default_target_layer_ids(n_target, n_layers)
            ids_src = "default"
            warnings.append("target_layer_ids absent: derived by the older reference's default rule "
                            f"{list(ids)}; newer checkpoints state them")
        hf_idx = tuple(i + 1 for i in ids) if ids is not None and is_dflash else ids
    raw_idx = ids if is_dflash and ids is not None else None

    layers, swa_src, window = _layers(f, cfg, dcfg, n_layers, is_dflash)
    card, card_file = _card(files, ckpt.directory)
    weights = None
    if with_weights:
        try:
            names = files.list_dir(ckpt.directory)
        except OSError as exc:
            weights = WeightFacts("none", problems=(f"cannot list {ckpt.directory}: {describe_os_error(exc)}",))
        else:
            weights = read_weights(files, ckpt.directory, names)

    dtype = f.str("torch_dtype") or f.str("dtype")
    return DrafterFacts(
        source=ckpt.spec, config_path=ckpt.config_path, method=method, architectures=archs,
        model_type=f.str("model_type"), speculators_format=spec_type is not None,
        block_size=block, block_size_source=block_src if block is not None else None, mask_token_id=mask,
        target_layer_ids=ids, layer_ids_source=ids_src, hf_hidden_state_indices=hf_idx, raw_capture_indices=raw_idx,
        num_target_layers=n_target, num_hidden_layers=n_layers, hidden_size=f.int("hidden_size"),
        target_hidden_size=f.int("target_hidden_size"), head_dim=f.int("head_dim"),
        num_attention_heads=f.int("num_attention_heads"), num_key_value_heads=f.int("num_key_value_heads"),
        intermediate_size=f.int("intermediate_size"), vocab_size=f.int("vocab_size"),
        draft_vocab_size=f.int("draft_vocab_size"), rope=read_rope(f), dtype=dtype, layers=layers,
        swa_config=swa_src, sliding_window=window, card=card, card_file=card_file, weights=weights,
        warnings=tuple(warnings))


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
    top = _Fields(raw, warnings)
    archs = top.str_list("architectures") or ()
    cfg, nested = text_config(raw)
    f = _Fields(cfg, warnings)
    n = f.int("num_hidden_layers")
    lt = f.str_list("layer_types")
    if lt is not None and n is not None and len(lt) != n:
        warnings.append(f"layer_types has {len(lt)} entries but num_hidden_layers is {n}")
    counts: dict[str, int] = {}
    for t in lt or ():
        counts[t] = counts.get(t, 0) + 1
    sw = f.int("sliding_window") if f.bool("use_sliding_window") is not False else None
    if not counts.get("sliding_attention") and f.bool("use_sliding_window") is not True:
        sw = None  # a window with no sliding layers is not used (e.g. hybrids, Qwen3 defaults)
    quant = top.dict("quantization_config")
    tok_files, special = _tokenizer_ids(files, ckpt.directory, warnings)
    return TargetFacts(
        source=ckpt.spec, config_path=ckpt.config_path, architectures=archs, model_type=top.str("model_type"),
        text_config_nested=nested, num_hidden_layers=n, hidden_size=f.int("hidden_size"),
        vocab_size=f.int("vocab_size"), layer_types=lt, layer_type_counts=counts, sliding_window=sw,
        rope=read_rope(f), quantization=quant, tokenizer_files=tok_files, special_token_ids=special,
        warnings=tuple(warnings))


def _tokenizer_ids(files: FileAccess, directory: str, warnings: list[str]) -> tuple[tuple[str, ...], tuple[int, ...] | None]:
    """Ids of added/special tokens, from tokenizer_config.json and tokenizer.json's added_tokens."""
    found: list[str] = []
    ids: set[int] = set()
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
            ids.update(int(k) for k in dec if isinstance(k, str) and k.isdigit())
        added = obj.get("added_tokens")
        if isinstance(added, list):
            ids.update(t["id"] for t in added if isinstance(t, dict) and isinstance(t.get("id"), int))
    return tuple(found), (tuple(sorted(ids)) if found else None)
