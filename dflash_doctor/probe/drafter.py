"""A clean-room DFlash drafter in torch, written from the architecture facts in our reference notes.

The drafter has no embedding and no LM head: the target lends both. Target features (the states
of `target_layer_ids`, concatenated) are projected by `fc`, normalised by `hidden_norm`, and fed
to every layer as extra keys/values in front of the block's own. Parameter names follow the
published checkpoints so their safetensors load without renaming.

Context K/V live in `ContextCache` and only ever hold committed tokens: the block's own K/V are
never cached, which is the same as the reference's "append then crop to the accepted tokens".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors import safe_open
from torch import nn

from ..errors import UsageError
from .config import SLIDING, DrafterConfig
from .kernels import any_length_attention


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rope_cos_sin(positions: torch.Tensor, head_dim: int, theta: float, dtype: torch.dtype):
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=positions.device) / head_dim))
    freqs = positions.float()[:, None] * inv[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x: [b, heads, t, d]; cos/sin: [t, d]
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def window_mask(q_pos: torch.Tensor, k_pos: torch.Tensor, causal: bool, window: int | None) -> torch.Tensor:
    """True where query q may see key k: (k <= q if causal) and (q - k < W) and (k - q < W if not causal)."""
    q = q_pos[:, None]
    k = k_pos[None, :]
    vis = torch.ones(q.shape[0], k.shape[1], dtype=torch.bool, device=q_pos.device)
    if causal:
        vis &= k <= q
    if window is not None:
        vis &= (q - k) < window
        if not causal:
            vis &= (k - q) < window
    return vis


class Attention(nn.Module):
    def __init__(self, cfg: DrafterConfig):
        super().__init__()
        h, hd = cfg.hidden_size, cfg.head_dim
        self.nh, self.nkv, self.hd = cfg.num_attention_heads, cfg.num_key_value_heads, hd
        self.q_proj = nn.Linear(h, self.nh * hd, bias=False)
        self.k_proj = nn.Linear(h, self.nkv * hd, bias=False)
        self.v_proj = nn.Linear(h, self.nkv * hd, bias=False)
        self.o_proj = nn.Linear(self.nh * hd, h, bias=False)
        self.q_norm = RMSNorm(hd, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(hd, cfg.rms_norm_eps)

    def _kv(self, x: torch.Tensor, cos, sin):
        b, t, _ = x.shape
        k = self.k_norm(self.k_proj(x).view(b, t, self.nkv, self.hd)).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.nkv, self.hd).transpose(1, 2)
        return apply_rope(k, cos, sin), v

    def forward(self, x, ctx, block_rope, ctx_rope, past: tuple | None, mask: torch.Tensor):
        b, t, _ = x.shape
        q = self.q_norm(self.q_proj(x).view(b, t, self.nh, self.hd)).transpose(1, 2)
        q = apply_rope(q, *block_rope)
        kb, vb = self._kv(x, *block_rope)
        kc, vc = self._kv(ctx, *ctx_rope)
        if past is not None:
            kc, vc = torch.cat([past[0], kc], dim=2), torch.cat([past[1], vc], dim=2)
        k, v = torch.cat([kc, kb], dim=2), torch.cat([vc, vb], dim=2)
        if self.nkv != self.nh:
            rep = self.nh // self.nkv
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0 / math.sqrt(self.hd))
        out = out.transpose(1, 2).reshape(b, t, self.nh * self.hd)
        return self.o_proj(out), (kc, vc)


class MLP(nn.Module):
    def __init__(self, cfg: DrafterConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg: DrafterConfig):
        super().__init__()
        self.self_attn = Attention(cfg)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, x, ctx, block_rope, ctx_rope, past, mask):
        a, kv = self.self_attn(self.input_layernorm(x), ctx, block_rope, ctx_rope, past, mask)
        x = x + a
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, kv


@dataclass
class ContextCache:
    """Per-layer K/V of the committed context tokens (positions 0..length-1)."""

    layers: list = field(default_factory=list)
    length: int = 0


class DFlashDrafter(nn.Module):
    def __init__(self, cfg: DrafterConfig):
        super().__init__()
        self.cfg = cfg
        n_taps = len(cfg.target_layer_ids)
        self.fc = nn.Linear(n_taps * cfg.hidden_size, cfg.hidden_size, bias=False)
        self.hidden_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def masks(self, q_pos: torch.Tensor, k_pos: torch.Tensor, swa: bool) -> list[torch.Tensor]:
        """One boolean mask per layer. swa=False runs sliding layers as full non-causal attention."""
        cfg, out, memo = self.cfg, [], {}
        for t in cfg.layer_types:
            if t == SLIDING and swa:
                key = ("swa",)
                if key not in memo:
                    memo[key] = window_mask(q_pos, k_pos, causal=True, window=cfg.sliding_window)
            else:
                key = ("full",)
                if key not in memo:
                    memo[key] = window_mask(q_pos, k_pos, causal=cfg.is_causal, window=None)
            out.append(memo[key])
        return out

    def forward(
        self,
        block_embeds: torch.Tensor,
        ctx_features: torch.Tensor,
        start: int,
        cache: ContextCache | None = None,
        swa: bool = True,
    ) -> torch.Tensor:
        """Hidden states for the block (after the final norm).

        block_embeds: [b, B, hidden] target embeddings of [last verified token, MASK...];
        ctx_features: [b, C_new, taps*hidden] target states of context positions not yet cached;
        start: absolute position of the block's first token (= total context length).
        With a cache, the new context K/V are appended to it (they belong to committed tokens).
        """
        b, bsz, _ = block_embeds.shape
        c_new = ctx_features.shape[1]
        past_len = cache.length if cache is not None else 0
        if past_len + c_new != start:
            raise ValueError(f"context covers {past_len + c_new} positions, block starts at {start}")
        dev, dt = block_embeds.device, block_embeds.dtype
        ctx = self.hidden_norm(self.fc(ctx_features.to(dt)))
        q_pos = torch.arange(start, start + bsz, device=dev)
        c_pos = torch.arange(past_len, start, device=dev)
        k_pos = torch.arange(0, start + bsz, device=dev)
        hd, theta = self.cfg.head_dim, self.cfg.rope_theta
        block_rope = rope_cos_sin(q_pos, hd, theta, dt)
        ctx_rope = rope_cos_sin(c_pos, hd, theta, dt)
        masks = self.masks(q_pos, k_pos, swa)
        x = block_embeds
        new_layers = []
        with any_length_attention():
            for i, layer in enumerate(self.layers):
                past = cache.layers[i] if cache is not None and cache.layers else None
                x, kv = layer(x, ctx, block_rope, ctx_rope, past, masks[i])
                new_layers.append(kv)
        if cache is not None:
            cache.layers = new_layers
            cache.length = start
        return self.norm(x)


def load_drafter(path: str | Path, cfg: DrafterConfig, device: str = "cpu", dtype=torch.float32) -> DFlashDrafter:
    """Build the drafter and load its safetensors (no pickle): every expected tensor must be present."""

    p = Path(path)
    files = sorted(p.glob("*.safetensors")) if p.is_dir() else [p]
    if not files:
        raise UsageError(f"no .safetensors weights in {p}")
    model = DFlashDrafter(cfg)
    expected = model.state_dict()
    got: dict[str, torch.Tensor] = {}
    for f in files:
        try:
            with safe_open(str(f), framework="pt") as fh:
                for name in fh.keys():  # noqa: SIM118 -- a safetensors handle is not iterable
                    # some exports prefix the names ("model." ); strip one known prefix
                    key = name[len("model.") :] if name.startswith("model.") and name not in expected else name
                    if key in expected:
                        got[key] = fh.get_tensor(name)
        except Exception as exc:  # safetensors raises several types for corrupt headers
            raise UsageError(f"cannot read drafter weights {f}: {exc}") from None
    missing = sorted(set(expected) - set(got))
    if missing:
        raise UsageError(
            f"drafter weights lack {len(missing)} tensor(s), e.g. {missing[:3]}",
            hint="is this a DFlash drafter checkpoint?",
        )
    for k, t in got.items():
        if tuple(t.shape) != tuple(expected[k].shape):
            raise UsageError(
                f"drafter tensor {k} has shape {tuple(t.shape)}, the config implies {tuple(expected[k].shape)}"
            )
    model.load_state_dict(got, strict=True)
    return model.to(device=device, dtype=dtype).eval()
