"""Typed access to a config dict, shared by every reader: a mistyped or absurd field becomes a warning
and reads as absent — never a crash, never a guess."""

from __future__ import annotations

import builtins
import json
from typing import Any

# Bounds beyond which a number is a corrupt config, not a model.
LIMITS = {
    "hidden_size": 1 << 17,
    "num_hidden_layers": 4096,
    "num_target_layers": 4096,
    "vocab_size": 1 << 24,
    "draft_vocab_size": 1 << 24,
    "intermediate_size": 1 << 20,
    "num_attention_heads": 4096,
    "num_key_value_heads": 4096,
    "head_dim": 8192,
    "block_size": 4096,
    "sliding_window": 1 << 31,
    "max_window_layers": 1 << 16,
    "mask_token_id": 1 << 24,
    "target_hidden_size": 1 << 17,
    "swa_window_size": 1 << 31,
    "num_nextn_predict_layers": 4096,
    "mtp_num_hidden_layers": 4096,
    "medusa_num_heads": 4096,
    "medusa_num_layers": 4096,
    "backbone_hidden_size": 1 << 17,
    "full_attention_interval": 4096,
    "sliding_window_pattern": 4096,
    "bos_token_id": 1 << 24,
    "eos_token_id": 1 << 24,
    "pad_token_id": 1 << 24,
}


def show(v: Any) -> str:
    s = json.dumps(v) if not isinstance(v, str) else repr(v)
    return (s[:40] + "…") if len(s) > 40 else s


class Fields:
    """Reads `cfg` (or a nested dict given as `where`); problems go to `warnings`."""

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
                self.w.append(f"{name} is {show(v)}, expected an integer; ignored")
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
            self.w.append(f"{label or key} is {show(v)}, expected a number; ignored")
            return None
        return float(v)

    def _typed(self, key: str, where: dict | None, kind: type, expected: str, label: str | None = None):
        v = (self.cfg if where is None else where).get(key)
        if v is None or isinstance(v, kind):
            return v
        self.w.append(f"{label or key} is {show(v)}, expected {expected}; ignored")
        return None

    def bool(self, key: str, where: dict | None = None, label: str | None = None) -> bool | None:
        return self._typed(key, where, bool, "true/false", label)

    def str(self, key: str, where: dict | None = None, label: str | None = None) -> str | None:
        v = self._typed(key, where, str, "a string", label)
        return None if v is None else v[:200]

    def dict(
        self, key: builtins.str, where: builtins.dict | None = None, label: builtins.str | None = None
    ) -> builtins.dict | None:
        return self._typed(key, where, dict, "an object", label)

    def int_list(self, key: builtins.str, where: builtins.dict, label: builtins.str) -> tuple[builtins.int, ...] | None:
        v = where.get(key)
        if v is None:
            return None
        if not isinstance(v, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
            self.w.append(f"{label} is {show(v)}, expected a list of integers; ignored")
            return None
        if len(v) > 4096 or any(i < 0 or i > 1 << 16 for i in v):
            self.w.append(f"{label} has implausible entries; ignored")
            return None
        return tuple(v)

    def str_list(
        self, key: builtins.str, where: builtins.dict | None = None, label: builtins.str | None = None
    ) -> tuple[builtins.str, ...] | None:
        src = self.cfg if where is None else where
        v = src.get(key)
        if v is None:
            return None
        if not isinstance(v, list) or not all(isinstance(i, str) for i in v) or len(v) > 65536:
            self.w.append(f"{label or key} is {show(v)}, expected a list of strings; ignored")
            return None
        return tuple(s[:64] for s in v)

    def token_ids(self, key: builtins.str, where: builtins.dict | None = None) -> tuple[builtins.int, ...] | None:
        """bos/eos/pad ids: an integer or a list of integers (Qwen and Llama-3 list several eos ids)."""
        src = self.cfg if where is None else where
        v = src.get(key)
        if v is None:
            return None
        if isinstance(v, int) and not isinstance(v, bool):
            return (v,) if 0 <= v < 1 << 24 else None
        if (
            isinstance(v, list)
            and v
            and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 1 << 24 for i in v)
            and len(v) <= 64
        ):
            return tuple(v)
        self.w.append(f"{key} is {show(v)}, expected a token id or a list of them; ignored")
        return None


def text_config(cfg: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Multimodal wrappers (e.g. Qwen3_5ForConditionalGeneration) and Gemma-4 assistants nest the LM's config."""
    tc = cfg.get("text_config")
    if isinstance(tc, dict):
        merged = {k: v for k, v in cfg.items() if k != "text_config"}
        merged.update(tc)
        return merged, True
    return cfg, False
