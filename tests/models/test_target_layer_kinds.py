"""Target layer kinds derived as transformers derives them: each rule checked against transformers' own
configuration class for that model type (the installed library is the authority, not our reading of it)."""

from __future__ import annotations

import pytest

from dflash_doctor.models.facts import target_facts

from .helpers import write_config

transformers = pytest.importorskip("transformers")

NAMES = {"full_attention": "full", "sliding_attention": "sliding", "linear_attention": "linear"}

CASES = [  # (model_type, config fields, rule words we name)
    ("qwen3_next", {"num_hidden_layers": 48}, "full_attention_interval = 4, transformers' default"),
    ("qwen3_next", {"num_hidden_layers": 12, "full_attention_interval": 3}, "full_attention_interval = 3"),
    ("gemma3_text", {"num_hidden_layers": 26, "sliding_window": 512}, "sliding_window_pattern = 6"),
    (
        "gemma3_text",
        {"num_hidden_layers": 12, "sliding_window": 512, "sliding_window_pattern": 4},
        "sliding_window_pattern = 4",
    ),
    ("gemma2", {"num_hidden_layers": 8}, "alternating"),
    ("gpt_oss", {"num_hidden_layers": 24}, "alternating"),
    (
        "qwen3",
        {"num_hidden_layers": 36, "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 28},
        "max_window_layers = 28",
    ),
    (
        "qwen3",
        {"num_hidden_layers": 36, "use_sliding_window": False, "sliding_window": 4096},
        "use_sliding_window is false",
    ),
    (
        "qwen2",
        {"num_hidden_layers": 28, "use_sliding_window": True, "sliding_window": 32768, "max_window_layers": 21},
        "max_window_layers = 21",
    ),
]


@pytest.mark.parametrize("model_type, fields, rule", CASES)
def test_layer_kinds_match_transformers(tmp_path, model_type, fields, rule):
    cfg_cls = transformers.AutoConfig.for_model(model_type, **fields)
    want = tuple(NAMES[t] for t in cfg_cls.layer_types)
    write_config(tmp_path / "t", {"model_type": model_type, "hidden_size": 64, "vocab_size": 100, **fields})
    t = target_facts(str(tmp_path / "t"))
    assert t.layer_kinds == want
    assert rule in t.layer_kinds_rule


def test_mistral_model_wide_sliding_window_slides_every_layer(tmp_path):
    # transformers' Mistral attention passes config.sliding_window to every layer
    write_config(
        tmp_path / "t",
        {
            "architectures": ["MistralForCausalLM"],
            "model_type": "mistral",
            "num_hidden_layers": 32,
            "hidden_size": 4096,
            "vocab_size": 32000,
            "sliding_window": 4096,
        },
    )
    t = target_facts(str(tmp_path / "t"))
    assert set(t.layer_kinds) == {"sliding"} and t.sliding_window == 4096 and "model-wide" in t.layer_kinds_rule


def test_qwen35_nested_mtp_and_linear_layers(tmp_path):
    write_config(
        tmp_path / "t",
        {
            "architectures": ["Qwen3_5ForConditionalGeneration"],
            "model_type": "qwen3_5",
            "text_config": {
                "model_type": "qwen3_5_text",
                "num_hidden_layers": 8,
                "hidden_size": 64,
                "vocab_size": 100,
                "mtp_num_hidden_layers": 1,
            },
        },
    )
    t = target_facts(str(tmp_path / "t"))
    assert t.layer_kinds == ("linear",) * 3 + ("full",) + ("linear",) * 3 + ("full",)
    assert t.hybrid_linear and t.mtp_layers == 1 and t.mtp_field == "mtp_num_hidden_layers"
