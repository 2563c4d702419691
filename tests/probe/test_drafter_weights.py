"""The drafter's parameter names are those of published DFlash checkpoints; bad weights are one-line errors."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from safetensors.torch import save_file  # noqa: E402

from dflash_doctor.errors import UsageError  # noqa: E402
from dflash_doctor.probe.config import parse_drafter_config  # noqa: E402
from dflash_doctor.probe.drafter import ContextCache, DFlashDrafter, load_drafter  # noqa: E402

pytestmark = pytest.mark.torch
CFG = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "vocab_size": 50,
    "intermediate_size": 48,
    "dflash_config": {"mask_token_id": 3, "target_layer_ids": [0, 1, 2]},
}


def test_parameter_names_match_published_checkpoints():
    names = set(DFlashDrafter(parse_drafter_config(CFG)).state_dict())
    per_layer = [
        "input_layernorm.weight",
        "post_attention_layernorm.weight",
        "self_attn.q_proj.weight",
        "self_attn.k_proj.weight",
        "self_attn.v_proj.weight",
        "self_attn.o_proj.weight",
        "self_attn.q_norm.weight",
        "self_attn.k_norm.weight",
        "mlp.gate_proj.weight",
        "mlp.up_proj.weight",
        "mlp.down_proj.weight",
    ]
    want = {"fc.weight", "hidden_norm.weight", "norm.weight"} | {f"layers.{i}.{n}" for i in range(2) for n in per_layer}
    assert names == want


def test_fc_projects_all_taps_concatenated():
    d = DFlashDrafter(parse_drafter_config(CFG))
    assert tuple(d.fc.weight.shape) == (32, 3 * 32)


SWA = {**CFG, "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 5}


@pytest.mark.parametrize("cfg", [CFG, SWA], ids=["full", "sliding"])
def test_cached_context_equals_uncached(cfg):
    """Feeding the context in pieces through the cache gives the same block output as all at once."""
    torch.manual_seed(0)
    d = DFlashDrafter(parse_drafter_config(cfg)).eval()
    ctx = torch.randn(1, 12, 96)
    block = torch.randn(1, 4, 32)
    with torch.no_grad():
        whole = d(block, ctx, start=12)
        cache = ContextCache()
        d(block, ctx[:, :7], start=7, cache=cache)
        pieces = d(block, ctx[:, 7:], start=12, cache=cache)
    assert torch.allclose(whole, pieces, atol=1e-5)
    assert cache.length == 12


def test_ignoring_the_window_changes_the_output():
    torch.manual_seed(0)
    d = DFlashDrafter(parse_drafter_config(SWA)).eval()
    ctx, block = torch.randn(1, 12, 96), torch.randn(1, 4, 32)
    with torch.no_grad():
        assert not torch.allclose(d(block, ctx, start=12, swa=True), d(block, ctx, start=12, swa=False))
        full = DFlashDrafter(parse_drafter_config(CFG)).eval()
        full.load_state_dict(d.state_dict())
        # swa=False runs the sliding layer as full non-causal attention: exactly the all-full drafter
        assert torch.allclose(d(block, ctx, start=12, swa=False), full(block, ctx, start=12))


def test_missing_or_misshapen_tensors_are_usage_errors(tmp_path):
    cfg = parse_drafter_config(CFG)
    sd = {k: v.clone() for k, v in DFlashDrafter(cfg).state_dict().items()}
    (tmp_path / "config.json").write_text(json.dumps(CFG))
    partial = dict(sd)
    partial.pop("fc.weight")
    save_file(partial, str(tmp_path / "model.safetensors"))
    with pytest.raises(UsageError, match="lack"):
        load_drafter(tmp_path, cfg)
    bad = dict(sd)
    bad["norm.weight"] = torch.ones(31)
    save_file(bad, str(tmp_path / "model.safetensors"))
    with pytest.raises(UsageError, match="shape"):
        load_drafter(tmp_path, cfg)
    (tmp_path / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{garbage")
    with pytest.raises(UsageError):
        load_drafter(tmp_path, cfg)
