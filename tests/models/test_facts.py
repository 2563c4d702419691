"""Drafter/target facts: every config placement and SWA variant the reference names."""

from __future__ import annotations

import copy
import json

import pytest

from dflash_doctor.errors import UsageError
from dflash_doctor.evidence.serialise import to_jsonable
from dflash_doctor.models.facts import drafter_facts, target_facts

from .helpers import write_config

BASE = {
    "architectures": ["DFlashDraftModel"],
    "model_type": "qwen3",
    "hidden_size": 4096,
    "num_hidden_layers": 5,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151936,
    "num_target_layers": 36,
    "block_size": 16,
    "rope_theta": 1000000,
    "dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]},
}


def facts(tmp_path, **over):
    cfg = copy.deepcopy(BASE)
    for k, v in over.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    write_config(tmp_path / "d", cfg)
    return drafter_facts(str(tmp_path / "d"))


def test_qwen36_fixture_has_four_sliding_causal_layers_and_one_full(fixtures_dir):
    d = drafter_facts(str(fixtures_dir / "models" / "Qwen3.6-27B-DFlash"))
    assert d.method == "dflash" and d.block_size == 16 and d.mask_token_id == 248070
    assert d.swa_layers == (0, 1, 2, 3) and d.sliding_window == 2048 and d.swa_mix == "mixed"
    assert [(la.attention, la.window, la.causal) for la in d.layers][3:] == [
        ("sliding", 2048, True),
        ("full", None, False),
    ]
    assert d.target_layer_ids == (1, 16, 31, 46, 61)
    assert d.hf_hidden_state_indices == (2, 17, 32, 47, 62)
    assert [c.kind for c in d.card] == ["under-training"]


def test_qwen3_8b_fixture_is_all_full_attention_and_trained_without_thinking(fixtures_dir):
    d = drafter_facts(str(fixtures_dir / "models" / "Qwen3-8B-DFlash-b16" / "config.json"))
    assert d.swa_layers == () and all(not la.causal for la in d.layers)
    assert [c.kind for c in d.card] == ["non-thinking"]
    assert d.weights.tensors["fc.weight"].shape == (4096, 20480)


def test_block_size_and_ids_inside_dflash_config_are_read(tmp_path):
    d = facts(
        tmp_path, block_size=None, dflash_config={"block_size": 8, "mask_token_id": 5, "target_layer_ids": [2, 4]}
    )
    assert d.block_size == 8 and d.block_size_source == "dflash_config.block_size" and d.target_layer_ids == (2, 4)


def test_top_level_target_layer_ids_and_mask_are_read(tmp_path):
    d = facts(tmp_path, dflash_config=None, target_layer_ids=[3, 7], mask_token_id=9)
    assert d.target_layer_ids == (3, 7) and d.layer_ids_source == "target_layer_ids" and d.mask_token_id == 9


def test_speculators_aux_ids_are_already_shifted(tmp_path):
    d = facts(tmp_path, speculators_model_type="dflash", eagle_aux_hidden_state_layer_ids=[2, 10, 18, 26, 34])
    assert d.hf_hidden_state_indices == (2, 10, 18, 26, 34)
    assert d.target_layer_ids == (1, 9, 17, 25, 33)
    assert d.layer_ids_source == "eagle_aux_hidden_state_layer_ids"


def test_absent_ids_follow_the_old_default_rule_and_say_so(tmp_path):
    d = facts(tmp_path, dflash_config={"mask_token_id": 1})
    assert d.target_layer_ids == (1, 9, 17, 25, 33) and d.layer_ids_source == "default"
    assert any("default rule" in w for w in d.warnings)


def test_use_sliding_window_derives_layer_types_like_transformers(tmp_path):
    # transformers: layer i slides when sliding_window is set and i >= max_window_layers
    d = facts(tmp_path, use_sliding_window=True, sliding_window=1024, max_window_layers=3)
    assert d.swa_layers == (3, 4) and d.sliding_window == 1024 and d.swa_config == "max_window_layers"


def test_sliding_window_is_ignored_when_use_sliding_window_is_false(tmp_path):
    d = facts(tmp_path, use_sliding_window=False, sliding_window=1024, max_window_layers=0)
    assert d.swa_layers == () and d.sliding_window is None


def test_layer_types_win_over_max_window_layers(tmp_path):
    d = facts(
        tmp_path,
        use_sliding_window=True,
        sliding_window=512,
        max_window_layers=0,
        layer_types=["full_attention"] * 4 + ["sliding_attention"],
    )
    assert d.swa_layers == (4,) and d.swa_config == "layer_types"


def test_mimo_use_swa_makes_every_layer_sliding_and_non_causal(tmp_path):
    d = facts(
        tmp_path,
        dflash_config={"mask_token_id": 1, "target_layer_ids": [1, 2], "use_swa": True, "swa_window_size": 4096},
    )
    assert d.swa_layers == (0, 1, 2, 3, 4) and d.sliding_window == 4096 and d.swa_config == "use_swa"
    assert not any(la.causal for la in d.layers)


def test_rope_theta_from_rope_parameters_only(tmp_path):
    d = facts(tmp_path, rope_theta=None, rope_parameters={"rope_theta": 5e6, "rope_type": "default"})
    assert d.rope.theta == 5e6 and d.rope.source == "rope_parameters.rope_theta" and d.rope.scaling is None


def test_eagle3_method_and_draft_vocab(fixtures_dir):
    d = drafter_facts(str(fixtures_dir / "models" / "Qwen3-8B-EAGLE3"))
    assert d.method == "eagle3" and d.draft_vocab_size == 32000 and "d2t" in d.weights.tensors
    assert all(la.causal for la in d.layers)


def test_target_with_nested_text_config_and_linear_attention_is_not_swa(fixtures_dir):
    t = target_facts(str(fixtures_dir / "models" / "Qwen3.6-27B"))
    assert t.text_config_nested and t.num_hidden_layers == 64 and t.hidden_size == 5120
    assert t.hybrid_linear and t.layer_type_counts == {"linear_attention": 48, "full_attention": 16}
    assert t.sliding_window is None and t.rope.partial_rotary_factor == 0.25 and t.rope.theta == 1e7


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, says",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2, 3]", "JSON list, not an object"),
        ('"just a string"', "JSON str, not an object"),
        ("\xff\xfe binary", "not valid JSON"),
    ],
)
def test_malformed_or_non_object_config_is_a_usage_error(tmp_path, text, says):
    write_config(tmp_path / "d", text)
    with pytest.raises(UsageError) as exc:
        drafter_facts(str(tmp_path / "d"))
    assert says in exc.value.message


def test_binary_config_is_a_usage_error(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "config.json").write_bytes(b"\x00\xff\xfe\x80garbage")
    with pytest.raises(UsageError):
        drafter_facts(str(tmp_path / "d"))


def test_mistyped_fields_become_warnings_and_read_as_absent(tmp_path):
    d = facts(
        tmp_path,
        hidden_size="4096",
        block_size=[16],
        num_target_layers=True,
        dflash_config={"mask_token_id": "x", "target_layer_ids": "1,9,17"},
    )
    assert d.hidden_size is None and d.block_size is None and d.num_target_layers is None
    assert d.mask_token_id is None and d.target_layer_ids is None
    text = " | ".join(d.warnings)
    for field in (
        "hidden_size",
        "block_size",
        "num_target_layers",
        "dflash_config.mask_token_id",
        "dflash_config.target_layer_ids",
    ):
        assert field in text


def test_absurd_sizes_are_rejected_not_used(tmp_path):
    d = facts(tmp_path, num_hidden_layers=10**9, hidden_size=-5, vocab_size=10**12)
    assert d.num_hidden_layers is None and d.hidden_size is None and d.vocab_size is None and d.layers == ()
    assert sum("plausible" in w for w in d.warnings) == 3


def test_layer_types_of_wrong_length_are_ignored_with_a_warning(tmp_path):
    d = facts(tmp_path, layer_types=["sliding_attention"] * 2, sliding_window=100)
    assert d.swa_layers == () and any("layer_types has 2 entries" in w for w in d.warnings)


def test_config_larger_than_the_cap_is_refused(tmp_path):
    write_config(tmp_path / "d", '{"a": "' + "x" * (5 << 20) + '"}')
    with pytest.raises(UsageError, match="larger than"):
        drafter_facts(str(tmp_path / "d"))


def test_missing_path_says_what_to_give(tmp_path):
    with pytest.raises(UsageError) as exc:
        drafter_facts(str(tmp_path / "nope"))
    assert "not found" in exc.value.message


def test_symlink_loop_config_is_reported_as_a_loop(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "config.json").symlink_to(d / "config.json")
    with pytest.raises(UsageError, match="symlink loop"):
        drafter_facts(str(d))


def test_json_round_trip_of_facts(fixtures_dir):
    d = drafter_facts(str(fixtures_dir / "models" / "Qwen3.6-27B-DFlash"))
    js = json.loads(json.dumps(to_jsonable(d)))
    assert js["swa_layers"] == [0, 1, 2, 3] and js["layers"][0] == {
        "index": 0,
        "attention": "sliding",
        "window": 2048,
        "causal": True,
    }


def test_is_causal_overrides_every_layer_both_ways(tmp_path):
    types = ["sliding_attention"] * 4 + ["full_attention"]
    d = facts(tmp_path, layer_types=types, sliding_window=2048, is_causal=True)
    assert all(la.causal for la in d.layers)
    d = facts(tmp_path, layer_types=types, sliding_window=2048, is_causal=False)
    assert not any(la.causal for la in d.layers)


def test_model_optimizer_export_is_named_by_its_template_not_taken_for_specforge(tmp_path):
    """Model-Optimizer's exporter fills `llama_eagle_template_config` (modelopt/torch/export/plugins/
    hf_spec_configs.py): `eagle_config` with `next_layer_regular: true`, which SpecForge never writes. Keys and
    shape below are that template's, the values ours (no real export was found to commit)."""
    cfg = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": 4096,
        "num_hidden_layers": 1,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "draft_vocab_size": 32000,
        "rope_theta": 500000.0,
        "eagle_config": {
            "eagle_aux_hidden_state_layer_ids": [1, 15, 28],
            "use_aux_hidden_state": True,
            "use_input_layernorm_in_first_layer": True,
            "use_last_layernorm": True,
            "use_mtp_layernorm": False,
            "next_layer_regular": True,
            "parallel_draft_step": 3,
            "parallel_draft_heads_num_layers": 1,
        },
    }
    d = drafter_facts(str(write_config(tmp_path / "mo", cfg)))
    assert d.family == "Model-Optimizer EAGLE-3 export" and d.method == "eagle3"
    assert d.target_layer_ids == (1, 15, 28) and d.layer_ids_source == "eagle_config.eagle_aux_hidden_state_layer_ids"
    assert d.not_understood == ()
    assert any("parallel_draft_step = 3: 2 Model-Optimizer parallel-draft head(s)" in n for n in d.notes)
    del cfg["eagle_config"]["next_layer_regular"]
    assert "SpecForge" in drafter_facts(str(write_config(tmp_path / "sf", cfg))).family


def test_peagle_in_vllm_layout_is_known_by_its_parallel_drafting_token(tmp_path):
    """vLLM (0.19.0+, v1/spec_decode/llm_base_proposer.py) takes an EAGLE checkpoint's parallel-drafting slot
    token from `ptd_token_id`; such a checkpoint was trained for parallel drafting (P-EAGLE), and runs that way
    only with `parallel_drafting: true` in the speculative config. Values here are ours."""
    cfg = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": 2880,
        "num_hidden_layers": 1,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "vocab_size": 201088,
        "draft_vocab_size": 201088,
        "ptd_token_id": 200017,
    }
    d = drafter_facts(str(write_config(tmp_path / "pe", cfg)))
    assert d.family == "P-EAGLE (parallel EAGLE-3)" and d.method == "peagle"
    assert any("ptd_token_id = 200017" in n and "parallel_drafting" in n for n in d.notes)
    del cfg["ptd_token_id"]
    d = drafter_facts(str(write_config(tmp_path / "plain", cfg)))
    assert d.method == "eagle3" and not any("ptd_token_id" in n for n in d.notes)
