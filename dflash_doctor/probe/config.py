"""Reading a DFlash drafter's config.json into the facts the clean-room probe needs (no torch here).

Every placement the published checkpoints use is accepted: fields at the top level or in
`dflash_config`, RoPE θ in `rope_theta` or `rope_parameters.rope_theta`, sliding layers from
`layer_types` (which wins), from `use_sliding_window` + `max_window_layers`, or MiMo-style
`dflash_config.use_swa`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

SLIDING = "sliding_attention"
FULL = "full_attention"


@dataclass(frozen=True)
class DrafterConfig:
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    rms_norm_eps: float
    rope_theta: float
    block_size: int | None
    mask_token_id: int
    target_layer_ids: tuple[int, ...]
    layer_types: tuple[str, ...]
    sliding_window: int | None
    is_causal: bool = False
    num_target_layers: int | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def has_sliding_layers(self) -> bool:
        return SLIDING in self.layer_types and self.sliding_window is not None

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _pick(cfg: dict, dcfg: dict, name: str, default: Any = None) -> Any:
    # dflash_config is the newer home of the DFlash-specific fields; it wins when both exist.
    if name in dcfg and dcfg[name] is not None:
        return dcfg[name]
    if name in cfg and cfg[name] is not None:
        return cfg[name]
    return default


def default_target_layer_ids(num_target_layers: int, num_draft_layers: int) -> tuple[int, ...]:
    """The older reference's default when a checkpoint names no ids: one layer -> [n//2], else evenly 1..n-3."""
    if num_draft_layers == 1:
        return (num_target_layers // 2,)
    start, end = 1, num_target_layers - 3
    span = end - start
    return tuple(int(round(start + i * span / (num_draft_layers - 1))) for i in range(num_draft_layers))


def _layer_types(cfg: dict, dcfg: dict, n_layers: int, notes: list[str]) -> tuple[tuple[str, ...], int | None]:
    window = cfg.get("sliding_window")
    lt = cfg.get("layer_types")
    if lt:
        if len(lt) != n_layers:
            raise UsageError(f"drafter config: layer_types has {len(lt)} entries for {n_layers} layers")
        if "max_window_layers" in cfg:
            notes.append("layer_types and max_window_layers both present: layer_types used")
        types = tuple(SLIDING if t == SLIDING else FULL for t in lt)
        if SLIDING in types and not window:
            raise UsageError("drafter config: sliding_attention layers but no sliding_window")
        return types, (int(window) if window else None)
    if dcfg.get("use_swa"):
        w = dcfg.get("swa_window_size") or window
        if not w:
            raise UsageError("drafter config: dflash_config.use_swa without a window size")
        return tuple(SLIDING for _ in range(n_layers)), int(w)
    if cfg.get("use_sliding_window") and window:
        # transformers' derivation: layers at index >= max_window_layers use the window.
        mwl = cfg.get("max_window_layers", n_layers)
        types = tuple(SLIDING if i >= mwl else FULL for i in range(n_layers))
        return types, int(window)
    return tuple(FULL for _ in range(n_layers)), None


def parse_drafter_config(cfg: dict, num_target_layers: int | None = None) -> DrafterConfig:
    if not isinstance(cfg, dict):
        raise UsageError("drafter config.json is not a JSON object")
    dcfg = cfg.get("dflash_config") or {}
    if not isinstance(dcfg, dict):
        raise UsageError("drafter config: dflash_config is not an object")
    notes: list[str] = []
    try:
        hidden = int(cfg["hidden_size"])
        n_layers = int(cfg["num_hidden_layers"])
        heads = int(cfg["num_attention_heads"])
        vocab = int(cfg["vocab_size"])
        inter = int(cfg["intermediate_size"])
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"drafter config lacks a usable {exc}") from None
    kv = int(cfg.get("num_key_value_heads") or heads)
    head_dim = int(cfg.get("head_dim") or hidden // heads)
    rope = cfg.get("rope_theta")
    if rope is None:
        rp = cfg.get("rope_parameters") or {}
        rope = rp.get("rope_theta") if isinstance(rp, dict) else None
    if rope is None:
        rope = 10000.0
        notes.append("no rope_theta in the config: 10000 assumed")
    if cfg.get("rope_scaling"):
        notes.append("rope_scaling present in the drafter config: ignored by the probe (plain RoPE)")
    mask = _pick(cfg, dcfg, "mask_token_id")
    if mask is None:
        raise UsageError(
            "drafter config has no mask_token_id (dflash_config.mask_token_id)",
            hint="the probe never guesses the mask token",
        )
    ntl = _pick(cfg, dcfg, "num_target_layers", num_target_layers)
    ids = _pick(cfg, dcfg, "target_layer_ids")
    if ids is None:
        if ntl is None:
            raise UsageError("drafter config has no target_layer_ids and no num_target_layers")
        ids = default_target_layer_ids(int(ntl), n_layers)
        notes.append(f"no target_layer_ids: the older reference's default {list(ids)} used")
    block = _pick(cfg, dcfg, "block_size")
    types, window = _layer_types(cfg, dcfg, n_layers, notes)
    return DrafterConfig(
        hidden_size=hidden,
        num_hidden_layers=n_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        head_dim=head_dim,
        intermediate_size=inter,
        vocab_size=vocab,
        rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
        rope_theta=float(rope),
        block_size=int(block) if block else None,
        mask_token_id=int(mask),
        target_layer_ids=tuple(int(i) for i in ids),
        layer_types=types,
        sliding_window=window,
        is_causal=bool(cfg.get("is_causal", False)),
        num_target_layers=int(ntl) if ntl else None,
        notes=tuple(notes),
    )


def load_drafter_config(path: str | Path) -> DrafterConfig:
    p = Path(path)
    f = p / "config.json" if p.is_dir() else p
    from ..safeio import load_json, read_regular

    try:
        cfg = load_json(read_regular(f, 4 << 20))  # (NaN, Infinity, 1e999 refused: no layer id or RoPE base)
    except FileNotFoundError:
        raise UsageError(f"no drafter config at {f}") from None
    except OSError as exc:
        raise UsageError(f"cannot read drafter config {f}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"drafter config {f} is not JSON dflash-doctor reads: {exc}") from None
    try:
        return parse_drafter_config(cfg)
    except (TypeError, ValueError, OverflowError) as exc:  # a field of the wrong type or size
        raise UsageError(f"drafter config {f}: {str(exc)[:160]}") from None
