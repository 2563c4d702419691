"""Drafter config parsing and the attention-mask rule: pure facts, most of them without torch."""

from __future__ import annotations

import pytest

from dflash_doctor.errors import UsageError
from dflash_doctor.probe.config import default_target_layer_ids, parse_drafter_config

BASE = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "vocab_size": 100,
    "intermediate_size": 128,
    "dflash_config": {"mask_token_id": 7, "target_layer_ids": [1, 2]},
}


def cfg(**kw):
    return parse_drafter_config({**BASE, **kw})


def test_mask_token_comes_from_dflash_config_not_the_vocab_end():
    assert cfg().mask_token_id == 7


def test_missing_mask_token_is_refused_not_guessed():
    with pytest.raises(UsageError, match="mask_token_id"):
        parse_drafter_config({**BASE, "dflash_config": {"target_layer_ids": [1]}})


def test_rope_theta_read_from_rope_parameters():
    assert cfg(rope_parameters={"rope_type": "default", "rope_theta": 1e7}).rope_theta == 1e7
    assert cfg(rope_theta=5e5).rope_theta == 5e5


def test_layer_types_win_over_max_window_layers():
    c = cfg(
        layer_types=["sliding_attention", "full_attention"],
        sliding_window=16,
        use_sliding_window=True,
        max_window_layers=0,
    )
    assert c.layer_types == ("sliding_attention", "full_attention")
    assert any("layer_types" in n for n in c.notes)


def test_use_sliding_window_derivation_and_its_off_switch():
    on = cfg(use_sliding_window=True, sliding_window=32, max_window_layers=1)
    assert on.layer_types == ("full_attention", "sliding_attention") and on.sliding_window == 32
    off = cfg(use_sliding_window=False, sliding_window=32, max_window_layers=0)
    assert not off.has_sliding_layers


def test_mimo_style_use_swa():
    c = parse_drafter_config(
        {
            **BASE,
            "dflash_config": {"mask_token_id": 7, "target_layer_ids": [1], "use_swa": True, "swa_window_size": 128},
        }
    )
    assert c.layer_types == ("sliding_attention",) * 2 and c.sliding_window == 128


def test_block_size_top_level_or_in_dflash_config():
    assert cfg(block_size=16).block_size == 16
    assert parse_drafter_config({**BASE, "dflash_config": {**BASE["dflash_config"], "block_size": 10}}).block_size == 10


def test_default_ids_of_the_older_reference():
    assert default_target_layer_ids(36, 5) == (1, 9, 17, 25, 33)
    assert default_target_layer_ids(64, 5) == (1, 16, 31, 46, 61)
    assert default_target_layer_ids(36, 1) == (18,)


@pytest.mark.torch
def test_window_mask_is_the_reference_rule():
    torch = pytest.importorskip("torch")
    from dflash_doctor.probe.drafter import window_mask

    q = torch.arange(20, 28)
    k = torch.arange(0, 28)
    for causal in (True, False):
        m = window_mask(q, k, causal=causal, window=5)
        for i, qq in enumerate(q.tolist()):
            for kk in k.tolist():
                want = (kk <= qq if causal else True) and (qq - kk < 5) and ((kk - qq < 5) if not causal else True)
                assert bool(m[i, kk]) == want, (causal, qq, kk)
    # the window includes the current token: query 20 sees keys 16..20 when causal
    m = window_mask(q, k, causal=True, window=5)
    assert m[0].nonzero().flatten().tolist() == [16, 17, 18, 19, 20]


def test_per_position_follows_vllm_definition():
    pytest.importorskip("torch")
    from dflash_doctor.probe.engine import summarise

    s = summarise([1, 3, 8, 2], block=8)
    assert s["mean_acceptance_length"] == pytest.approx(3.5)
    # rate i = share of steps whose first i+1 drafts were all accepted
    assert s["per_position"] == pytest.approx([3 / 4, 2 / 4, 1 / 4, 1 / 4, 1 / 4, 1 / 4, 1 / 4])
    assert 1 + sum(s["per_position"]) == pytest.approx(s["mean_acceptance_length"])
    assert s["histogram"] == {"1": 1, "2": 1, "3": 1, "4": 0, "5": 0, "6": 0, "7": 0, "8": 1}
