"""The real public configs in fixtures/configs/real (SOURCES.md): what a reviewer reads from each, and
issue 16's numbered items on the configs they were reported on."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from dflash_doctor.collect.files import FileInputs, gather_files
from dflash_doctor.doctor import build_report
from dflash_doctor.evidence import Status
from dflash_doctor.models.facts import drafter_facts, target_facts

from .helpers import safetensors_bytes, write_config

REAL = "configs/real/"

# file -> (method, family contains, layers, hidden, vocab, draft vocab, ids as written, ids field, intended target,
#          MTP layers, sliding layers)
TABLE = {
    "specforge--gpt-oss-20B-eagle3.json": (
        "eagle3",
        "nested eagle_config",
        1,
        2880,
        201088,
        32000,
        (1, 11, 21),
        "eagle_config.eagle_aux_hidden_state_layer_ids",
        None,
        None,
        (),
    ),
    "specforge--deepseek-v3-671b-eagle3.json": (
        "eagle3",
        "nested eagle_config",
        1,
        7168,
        129280,
        32000,
        (1, 29, 57),
        "eagle_config.eagle_aux_hidden_state_layer_ids",
        None,
        None,
        (),
    ),
    "specforge--qwen3-235B-A22B-eagle3.json": (
        "eagle3",
        "nested eagle_config",
        1,
        4096,
        151936,
        32000,
        (1, 46, 90),
        "eagle_config.eagle_aux_hidden_state_layer_ids",
        None,
        None,
        (),
    ),
    "specforge--llama3-8B-eagle3.json": ("eagle3", "EAGLE-3", 1, 4096, 128256, 32000, None, None, None, None, ()),
    "specforge--llama3-70B-ealge3.json": ("eagle3", "EAGLE-3", 1, 8192, 128256, 32000, None, None, None, None, ()),
    "specforge--qwen3-next-80b-a3b-eagle3.json": (
        "eagle3",
        "EAGLE-3",
        1,
        2048,
        151936,
        32000,
        None,
        None,
        None,
        None,
        (),
    ),
    "specforge--deepseek-v2-lite-eagle3.json": (
        "eagle3",
        "EAGLE-3",
        1,
        2048,
        102400,
        32000,
        None,
        None,
        None,
        None,
        (),
    ),
    "specforge--gemma3-1b-eagle3.json": ("eagle3", "EAGLE-3", 1, 1152, 262144, 32000, None, None, None, None, ()),
    "specforge--qwen2.5-0.5b-eagle3.json": ("eagle3", "EAGLE-3", 1, 896, 151936, 16000, None, None, None, None, ()),
    "eagle--traineagle3-config.json": ("eagle3", "yuhuili EAGLE-3", 1, 4096, 128256, 32000, None, None, None, None, ()),
    "eagle--vicuna_7B_config.json": ("eagle", "yuhuili EAGLE-1", 1, 4096, 32000, None, None, None, None, None, ()),
    "eagle--llama_2_chat_7B_config.json": (
        "eagle",
        "yuhuili EAGLE-1",
        1,
        4096,
        32000,
        None,
        None,
        None,
        None,
        None,
        (),
    ),
    "specforge--qwen3-4b-dflash.json": (
        "dflash",
        "z-lab DFlash",
        5,
        2560,
        151936,
        None,
        (1, 9, 17, 25, 33),
        "dflash_config.target_layer_ids",
        None,
        None,
        (),
    ),
    "specforge--qwen3.5-4b-dflash.json": (
        "dflash",
        "z-lab DFlash",
        5,
        2560,
        248320,
        None,
        (1, 8, 15, 22, 29),
        "dflash_config.target_layer_ids",
        None,
        None,
        (),
    ),
    "specforge--qwen3.5-35b-a3b-dflash.json": (
        "dflash",
        "z-lab DFlash",
        8,
        2048,
        248320,
        None,
        (1, 10, 19, 28, 37),
        "dflash_config.target_layer_ids",
        None,
        None,
        (),
    ),
    "specforge--qwen3.6-27b-dflash.json": (
        "dflash",
        "z-lab DFlash",
        5,
        5120,
        248320,
        None,
        (1, 16, 31, 46, 61),
        "dflash_config.target_layer_ids",
        None,
        None,
        (0, 1, 2, 3),
    ),
    "specforge--longcat-flash-dflash.json": (
        "dflash",
        "z-lab DFlash",
        5,
        6144,
        131072,
        None,
        (1, 7, 13, 19, 25),
        "dflash_config.target_layer_ids",
        None,
        None,
        (),
    ),
    "specforge--lfm2.5-1.2b-instruct-dflash.json": (
        "dflash",
        "z-lab DFlash",
        8,
        2048,
        65536,
        None,
        (1, 4, 7, 10, 13),
        "dflash_config.target_layer_ids",
        None,
        None,
        (),
    ),
    "specforge--qwen3.6-27b-dflash2.json": (
        "dflash2",
        "DFlash2",
        5,
        5120,
        248320,
        None,
        (5, 19, 33, 47, 61),
        "dflash_config.target_layer_ids",
        None,
        None,
        (0, 1, 2, 3, 4),
    ),
    "specforge--qwen3-8b-dspark.json": (
        "dspark",
        "DSpark",
        5,
        4096,
        151936,
        None,
        (1, 9, 17, 25, 33),
        "dflash_config.target_layer_ids",
        None,
        None,
        (),
    ),
    "specforge--qwen3-8b-peagle.json": ("peagle", "P-EAGLE", 4, 4096, 151936, 151936, None, None, None, None, ()),
    "specforge--qwen3-8b-peagle@head.json": ("peagle", "P-EAGLE", 4, 4096, 151936, 32000, None, None, None, None, ()),
    "specforge--qwen3.5-4b-mtp.json": ("mtp", "MTP draft checkpoint", 1, 2560, 151936, None, None, None, None, 1, ()),
    "specforge--qwen3.5-122b-a10b-mtp.json": (
        "mtp",
        "MTP draft checkpoint",
        1,
        3072,
        248320,
        64000,
        None,
        None,
        None,
        1,
        (),
    ),
    "xiaomimimo--MiMo-config.json": ("mtp", "MTP inside the target", 2, 4096, 151680, None, None, None, None, 2, ()),
    "speculators-issue1065--eagle3-qwen3moe.json": (
        "eagle3",
        "speculators eagle3",
        1,
        4096,
        151936,
        32000,
        (2, 46, 91, 93),
        "eagle_aux_hidden_state_layer_ids",
        "/model/from_s3",
        None,
        (0,),
    ),
    "speculators-issue--dflash-qwen3.6-35b-a3b.json": (
        "dflash",
        "speculators dflash",
        8,
        2048,
        248320,
        248320,
        (2, 11, 20, 29, 38),
        "aux_hidden_state_layer_ids",
        "RedHatAI/Qwen3.6-35B-A3B-NVFP4",
        None,
        (),
    ),
    "qwen--Qwen3-4B-Instruct-2507-config.json": (
        "unknown",
        "unknown",
        36,
        2560,
        151936,
        None,
        None,
        None,
        None,
        None,
        (),
    ),
    # second round (configs2): Gemma-4, MTP targets read as their own drafter, MiMo-V2
    "specforge--gemma4-26b-a4b-eagle3.json": (
        "eagle3",
        "nested eagle_config",
        1,
        2816,
        262144,
        262144,
        (5, 17, 29),
        "eagle_config.eagle_aux_hidden_state_layer_ids",
        None,
        None,
        (),
    ),
    "gemma4-swift-mlx--gemma-4-E2B-it-assistant.json": (
        "mtp",
        "Gemma-4 assistant",
        4,
        256,
        262144,
        None,
        None,
        None,
        None,
        4,
        (0, 1, 2),
    ),
    "tt-metal--deepseek-v3-config.json": (
        "mtp",
        "num_nextn_predict_layers",
        1,
        7168,
        129280,
        None,
        None,
        None,
        None,
        1,
        (),
    ),
    "aiconfigurator--zai-org--GLM-5.json": (
        "mtp",
        "num_nextn_predict_layers",
        1,
        6144,
        154880,
        None,
        None,
        None,
        None,
        1,
        (),
    ),
    "aiconfigurator--Qwen--Qwen3.5-35B-A3B.json": (
        "mtp",
        "mtp_num_hidden_layers",
        1,
        2048,
        248320,
        None,
        None,
        None,
        None,
        1,
        (),
    ),
    "aiconfigurator--Qwen--Qwen3.6-35B-A3B.json": (
        "mtp",
        "mtp_num_hidden_layers",
        1,
        2048,
        248320,
        None,
        None,
        None,
        None,
        1,
        (),
    ),
    # MiMo-V2 states no MTP count; vLLM and SGLang serve one sliding-window MTP layer
    "aiconfigurator--XiaomiMiMo--MiMo-V2-Flash.json": (
        "mtp",
        "MiMo-V2",
        1,
        4096,
        152576,
        None,
        None,
        None,
        None,
        1,
        (0,),
    ),
    # a multimodal target is no drafter: nothing is read as one
    "aiconfigurator--google--gemma-4-26B-A4B.json": (
        "unknown",
        "unknown",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        (),
    ),
    # third round (corpus): targets of the real drafters above, read as drafters
    "aiconfigurator--Qwen--Qwen3-8B.json": ("unknown", "unknown", 36, 4096, 151936, None, None, None, None, None, ()),
    "aiconfigurator--Qwen--Qwen3-235B-A22B.json": (
        "unknown",
        "unknown",
        94,
        4096,
        151936,
        None,
        None,
        None,
        None,
        None,
        (),
    ),
    "aiconfigurator--meta-llama--Meta-Llama-3.1-8B.json": (
        "unknown",
        "unknown",
        32,
        4096,
        128256,
        None,
        None,
        None,
        None,
        None,
        (),
    ),
    "aiconfigurator--openai--gpt-oss-20b.json": (
        "unknown",
        "unknown",
        24,
        2880,
        201088,
        None,
        None,
        None,
        None,
        None,
        tuple(range(0, 24, 2)),
    ),
    "aiconfigurator--nvidia--Qwen3.6-27B-NVFP4.json": (
        "mtp",
        "mtp_num_hidden_layers",
        1,
        5120,
        248320,
        None,
        None,
        None,
        None,
        1,
        (),
    ),
    # Qwen3-Next states no MTP count; vLLM (default 1) and SGLang serve one full-attention MTP layer
    "aiconfigurator--Qwen--Qwen3-Next-80B-A3B-Thinking.json": (
        "mtp",
        "Qwen3-Next",
        1,
        2048,
        151936,
        None,
        None,
        None,
        None,
        1,
        (),
    ),
    # fourth round (issue 28): TorchSpec drafters, the Muse-Glimmer assistant, MiniMax MTP, targets read as drafters
    "torchspec--kimi_k25_eagle3_mla.json": (
        "eagle3",
        "nested eagle_config",
        1,
        7168,
        163840,
        163840,
        (1, 29, 57),
        "eagle_config.eagle_aux_hidden_state_layer_ids",
        None,
        None,
        (),
    ),
    "torchspec--minimax_m25_eagle3.json": ("eagle3", "EAGLE-3", 1, 3072, 200064, None, None, None, None, None, ()),
    "torchspec--qwen3_8b_eagle3.json": ("eagle3", "EAGLE-3", 1, 4096, 151936, 32000, None, None, None, None, ()),
    "torchspec--dflash_draft_config.json": (
        "dflash",
        "TorchSpec DFlash",
        5,
        4096,
        151936,
        None,
        (1, 9, 17, 25, 33),
        "target_layer_ids",
        None,
        None,
        (),
    ),
    "mlx-vlm--muse-glimmer-30b-assistant.json": (
        "dflash",
        "Muse-Glimmer assistant",
        5,
        6656,
        None,
        None,
        (1, 13, 25, 37, 49),
        "target_layer_ids",
        None,
        None,
        (0, 1, 2, 3, 4),
    ),
    # MiniMax-M2.5: use_mtp with 3 MTP modules of 1 layer each — 3 drafter layers, not the 62-layer stack
    "aiconfigurator--MiniMaxAI--MiniMax-M2.5.json": (
        "mtp",
        "MiniMax use_mtp",
        3,
        3072,
        200064,
        None,
        None,
        None,
        None,
        3,
        (),
    ),
    # no reader knows these: read as unknown (and never as all-full-attention drafters)
    "aiconfigurator--moonshotai--Kimi-K2.5.json": (
        "unknown",
        "unknown",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        (),
    ),
    "aiconfigurator--nvidia--Nemotron-H-56B-Base-8K.json": (
        "unknown",
        "unknown",
        118,
        8192,
        131072,
        None,
        None,
        None,
        None,
        None,
        (),
    ),
    "aiconfigurator--nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json": (
        "unknown",
        "unknown",
        52,
        2688,
        131072,
        None,
        None,
        None,
        None,
        None,
        (),
    ),
    "tt-metal--gemma-3-27b-it-config.json": (
        "unknown",
        "unknown",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        (),
    ),
}

# Targets as transformers (and, where they differ, the engines) read them:
# file -> (layers, hidden, vocab, kind counts, rule contains, window, MTP layers, MTP field, rope theta, theta per kind)
TARGETS = {
    "qwen--Qwen3-4B-Instruct-2507-config.json": (
        36,
        2560,
        151936,
        {"full": 36},
        "use_sliding_window is false",
        None,
        None,
        None,
        5e6,
        None,
    ),
    "xiaomimimo--MiMo-config.json": (
        36,
        4096,
        151680,
        {"full": 36},
        "use_sliding_window is false",
        None,
        2,
        "num_nextn_predict_layers",
        640000.0,
        None,
    ),
    "tt-metal--deepseek-v3-config.json": (
        61,
        7168,
        129280,
        {"full": 61},
        "no layer-type fields",
        None,
        1,
        "num_nextn_predict_layers",
        1e4,
        None,
    ),
    "aiconfigurator--zai-org--GLM-5.json": (
        78,
        6144,
        154880,
        {"full": 78},
        "no layer-type fields",
        None,
        1,
        "num_nextn_predict_layers",
        1e6,
        None,
    ),
    "aiconfigurator--Qwen--Qwen3.5-35B-A3B.json": (
        40,
        2048,
        248320,
        {"linear": 30, "full": 10},
        "layer_types",
        None,
        1,
        "mtp_num_hidden_layers",
        1e7,
        None,
    ),
    "aiconfigurator--Qwen--Qwen3.6-35B-A3B.json": (
        40,
        2048,
        248320,
        {"linear": 30, "full": 10},
        "layer_types",
        None,
        1,
        "mtp_num_hidden_layers",
        1e7,
        None,
    ),
    "aiconfigurator--google--gemma-4-26B-A4B.json": (
        30,
        2816,
        262144,
        {"sliding": 25, "full": 5},
        "layer_types",
        1024,
        None,
        None,
        1e6,
        {"full_attention": 1e6, "sliding_attention": 1e4},
    ),
    "aiconfigurator--XiaomiMiMo--MiMo-V2-Flash.json": (
        48,
        4096,
        152576,
        {"full": 9, "sliding": 39},
        "hybrid_layer_pattern",
        128,
        None,
        None,
        5e6,
        {"full_attention": 5e6, "sliding_attention": 1e4},
    ),
    "aiconfigurator--Qwen--Qwen3-8B.json": (
        36,
        4096,
        151936,
        {"full": 36},
        "use_sliding_window is false",
        None,
        None,
        None,
        1e6,
        None,
    ),
    "aiconfigurator--Qwen--Qwen3-235B-A22B.json": (
        94,
        4096,
        151936,
        {"full": 94},
        "use_sliding_window is false",
        None,
        None,
        None,
        1e6,
        None,
    ),
    "aiconfigurator--meta-llama--Meta-Llama-3.1-8B.json": (
        32,
        4096,
        128256,
        {"full": 32},
        "no layer-type fields",
        None,
        None,
        None,
        5e5,
        None,
    ),
    "aiconfigurator--openai--gpt-oss-20b.json": (
        24,
        2880,
        201088,
        {"sliding": 12, "full": 12},
        "layer_types",
        128,
        None,
        None,
        150000.0,
        None,
    ),
    # Qwen3.6-27B's text config nested in text_config: GatedDeltaNet hybrid, one MTP layer stated
    "aiconfigurator--nvidia--Qwen3.6-27B-NVFP4.json": (
        64,
        5120,
        248320,
        {"linear": 48, "full": 16},
        "layer_types",
        None,
        1,
        "mtp_num_hidden_layers",
        1e7,
        None,
    ),
    # a real Qwen3-Next config: full_attention_interval and no layer_types
    "aiconfigurator--Qwen--Qwen3-Next-80B-A3B-Thinking.json": (
        48,
        2048,
        151936,
        {"linear": 36, "full": 12},
        "full_attention_interval = 4",
        None,
        None,
        None,
        1e7,
        None,
    ),
    # fourth round (issue 28)
    "aiconfigurator--MiniMaxAI--MiniMax-M2.5.json": (
        62,
        3072,
        200064,
        {"full": 62},
        "no layer-type fields",
        None,
        3,
        "num_mtp_modules",
        5e6,
        None,
    ),
    "aiconfigurator--moonshotai--Kimi-K2.5.json": (
        61,
        7168,
        163840,
        {"full": 61},
        "no layer-type fields",
        None,
        None,
        None,
        50000.0,
        None,
    ),
    "aiconfigurator--nvidia--Nemotron-H-56B-Base-8K.json": (
        118,
        8192,
        131072,
        {"mamba": 54, "mlp": 54, "full": 10},
        "hybrid_override_pattern",
        None,
        None,
        None,
        None,
        None,
    ),
    "aiconfigurator--nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json": (
        52,
        2688,
        131072,
        {"mamba": 23, "moe": 23, "full": 6},
        "hybrid_override_pattern",
        None,
        None,
        None,
        1e4,
        None,
    ),
    # Gemma-3 27B states no rope_theta and no rope_local_base_freq: transformers' defaults, per attention kind
    "tt-metal--gemma-3-27b-it-config.json": (
        62,
        5376,
        None,
        {"sliding": 52, "full": 10},
        "sliding_window_pattern = 6, transformers' default",
        1024,
        None,
        None,
        1e6,
        {"full_attention": 1e6, "sliding_attention": 1e4},
    ),
}


def test_every_real_config_is_listed_with_its_provenance(fixtures_dir):
    real = fixtures_dir / "configs" / "real"
    files = sorted(p.name for p in real.glob("*.json"))
    sources = (real / "SOURCES.md").read_text()
    assert len(files) >= 25 and sorted(TABLE) == files
    for name in files:
        row = next((line for line in sources.splitlines() if line.startswith(f"| {name} |")), None)
        assert row is not None, name
        assert re.search(r"\b[0-9a-f]{40}\b|issue", row), row
        json.loads((real / name).read_text())


@pytest.mark.parametrize("name", sorted(TABLE))
def test_what_a_reviewer_reads_from_each_real_config(fixtures_dir, name):
    method, family, layers, hidden, vocab, dvocab, ids, ids_src, intended, mtp, swa = TABLE[name]
    d = drafter_facts(str(fixtures_dir / "configs" / "real" / name), with_weights=False)
    assert (d.method, d.num_hidden_layers, d.hidden_size, d.vocab_size, d.draft_vocab_size) == (
        method,
        layers,
        hidden,
        vocab,
        dvocab,
    )
    assert family in d.family
    assert (d.ids_written, d.layer_ids_source) == (ids, ids_src)  # as written; target_layer_ids are in output terms
    assert d.intended_target == intended and d.mtp_layers == mtp and d.swa_layers == swa


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_what_a_reviewer_reads_from_each_real_target(fixtures_dir, name):
    layers, hidden, vocab, counts, rule, window, mtp, mtp_field, theta, per_kind = TARGETS[name]
    t = target_facts(str(fixtures_dir / "configs" / "real" / name))
    assert (t.num_hidden_layers, t.hidden_size, t.vocab_size, t.kind_counts) == (layers, hidden, vocab, counts)
    assert rule in t.layer_kinds_rule and t.sliding_window == window
    assert (t.mtp_layers, t.mtp_field) == (mtp, mtp_field)
    assert (t.rope.theta, t.rope.per_layer_type) == (theta, per_kind)
    assert t.warnings == ()


def _dir(tmp_path, fixtures_dir, name, sub="d"):
    d = tmp_path / sub
    d.mkdir()
    shutil.copy(fixtures_dir / "configs" / "real" / name, d / "config.json")
    return d


def _js(cli, *args):
    r = cli("inspect-model", *map(str, args), "--format", "json")
    assert "Traceback" not in r.stderr, r.stderr
    return r, json.loads(r.stdout)


def _finding(js, check):
    return [f for f in js["findings"] if f["check"] == check]


# --- issue 16, item by item, on the real configs ------------------------------------------------------------


def test_item1_nested_aux_ids_are_read_and_marked_on_the_target(cli, tmp_path, fixtures_dir):
    """SpecForge's nested ids name layer OUTPUTS (issue 28): [1, 11, 21] are the outputs of 1, 11, 21 — marked
    on those layers, not one early. What each engine taps is judged against that (engine-aux-taps)."""
    d = _dir(tmp_path, fixtures_dir, "specforge--gpt-oss-20B-eagle3.json")
    t = write_config(
        tmp_path / "t",
        {
            "architectures": ["GptOssForCausalLM"],
            "model_type": "gpt_oss",
            "num_hidden_layers": 24,
            "hidden_size": 2880,
            "vocab_size": 201088,
        },
    ).parent
    r, js = _js(cli, d, "--target", t)
    assert js["target_layer_ids"] == [1, 11, 21] and js["ids_written"] == [1, 11, 21]
    assert js["trained_on"]["outputs"] == [1, 11, 21]
    text = " ".join(cli("inspect-model", str(d), "--target", str(t)).stdout.split())
    assert "[1, 11, 21] (from eagle_config.eagle_aux_hidden_state_layer_ids)" in text
    assert "1◆full" in text and "11◆full" in text and "21◆full" in text and "0◆swa" not in text
    # vLLM 0.20.1 does not read eagle_config: its default taps the outputs of 1, 11, 20 — not 21
    _, js = _js(cli, d, "--target", t, "--engine", "vllm==0.20.1")
    (f,) = _finding(js, "engine-aux-taps")
    assert f["status"] == "fail" and "outputs of layers 1, 11, 20; the drafter was trained on 1, 11, 21" in f["message"]
    # the advice restates the ids in vLLM's convention: top-level [2, 12, 22], never the nested ids unchanged
    assert "eagle_aux_hidden_state_layer_ids = [2, 12, 22]" in f["remedy"]
    # vLLM 0.22 V1 reads them raw: every tap one layer early
    _, js = _js(cli, d, "--target", t, "--engine", "vllm==0.22.0")
    (f,) = _finding(js, "engine-aux-taps")
    assert f["status"] == "fail" and "every tap one layer early" in f["message"], f["message"]
    # SGLang adds 1: as trained
    _, js = _js(cli, d, "--target", t, "--engine", "sglang==0.5.22")
    (f,) = _finding(js, "engine-aux-taps")
    assert f["status"] == "ok" and "as trained" in f["message"], f["message"]


def test_item2_eagle3_across_tokenizers_fails(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "specforge--llama3-8B-eagle3.json")
    r, js = _js(cli, d, "--target", fixtures_dir / "models" / "Qwen3-8B")
    assert r.returncode == 1
    assert _finding(js, "drafter-target-pairing")[0]["status"] == "fail"
    assert "128256" in _finding(js, "drafter-target-pairing")[0]["message"]
    mistral = write_config(
        tmp_path / "m",
        {
            "architectures": ["MistralForCausalLM"],
            "model_type": "mistral",
            "num_hidden_layers": 32,
            "hidden_size": 4096,
            "vocab_size": 32000,
            "sliding_window": 4096,
        },
    ).parent
    r, js = _js(cli, d, "--target", mistral)
    vm = _finding(js, "draft-vocab-map")[0]
    assert vm["status"] == "fail" and "covers" not in vm["message"] and "128256" in vm["message"]


def test_item3_dflash2_cannot_load_before_vllm_0_28_and_nothing_is_called_ignored(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "specforge--qwen3.6-27b-dflash2.json")
    r, js = _js(cli, d, "--engine", "vllm==0.20.1")
    load = _finding(js, "engine-loads-drafter")[0]
    assert load["status"] == "fail" and "first registered in 0.28.0" in load["message"]
    assert (
        js["engine"]["silently_ignored"] == [] and _finding(js, "engine-drafter-swa")[0]["status"] == "not-applicable"
    )
    _, js = _js(cli, d, "--engine", "vllm==0.28.0")
    assert _finding(js, "engine-loads-drafter")[0]["status"] == "ok"


def test_item4_speculators_format_is_read_inside_transformer_layer_config(cli, tmp_path, fixtures_dir):
    d = drafter_facts(str(fixtures_dir / "configs" / "real" / "speculators-issue1065--eagle3-qwen3moe.json"))
    assert d.rope.theta == 5e6 and d.sliding_window == 2048 and d.swa_layers == (0,)
    assert d.num_attention_heads == 64 and d.num_key_value_heads == 4
    df = drafter_facts(str(fixtures_dir / "configs" / "real" / "speculators-issue--dflash-qwen3.6-35b-a3b.json"))
    assert df.layer_ids_source == "aux_hidden_state_layer_ids" and df.block_size == 16 and df.mask_token_id == 248070
    assert df.rope.scaling["rope_type"] == "yarn" and df.intended_target == "RedHatAI/Qwen3.6-35B-A3B-NVFP4"
    text = " ".join(
        cli(
            "inspect-model", str(_dir(tmp_path, fixtures_dir, "speculators-issue--dflash-qwen3.6-35b-a3b.json"))
        ).stdout.split()
    )
    assert "intended target RedHatAI/Qwen3.6-35B-A3B-NVFP4" in text and "scaling yarn ×64" in text
    assert "target_layer_ids not stated" not in text


def test_item6_mtp_layers_are_counted_not_the_target_stack(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "xiaomimimo--MiMo-config.json")
    r, js = _js(cli, d)
    assert js["method"] == "mtp" and js["drafter"]["mtp_layers"] == 2 and len(js["layers"]) == 2
    assert js["target"]["num_hidden_layers"] == 36  # the model is read as its own target


def test_item7_padding_is_never_asserted_from_two_sizes(tmp_path, fixtures_dir):
    cfg = json.loads((fixtures_dir / "configs" / "real" / "specforge--qwen3-4b-dflash.json").read_text())
    d = write_config(tmp_path / "d", cfg).parent
    tcfg = json.loads((fixtures_dir / "configs" / "real" / "qwen--Qwen3-4B-Instruct-2507-config.json").read_text())
    tcfg["vocab_size"] = 151680  # 256 less: padding, or another tokenizer?
    t = write_config(tmp_path / "t", tcfg).parent
    ev = gather_files(FileInputs(drafter=str(d), target=str(t)))
    report, _ = build_report(ev)
    f = next(f for f in report.findings if f.check_id == "drafter-target-pairing")
    assert f.status == Status.COULD_NOT_CHECK and "token ids agree" not in f.message
    assert "token identity" in f.message


def test_item8_unloadable_pair_is_wrong_pairing_first_by_a_clear_margin(tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "specforge--qwen3.6-27b-dflash.json")
    (d / "model.safetensors").write_bytes(safetensors_bytes({"fc.weight": ("BF16", [5120, 25600])}, data=False))
    t = write_config(
        tmp_path / "t",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "model_type": "qwen3_moe",
            "num_hidden_layers": 48,
            "hidden_size": 2048,
            "vocab_size": 151936,
            "rope_theta": 1e7,
        },
    ).parent
    ev = gather_files(
        FileInputs(
            drafter=str(d), target=str(t), engine="vllm==0.20.1", logs=[str(fixtures_dir / "seed" / "vllm-0.20.1.log")]
        )
    )
    report, _ = build_report(ev)
    top, second = report.causes[0], report.causes[1]
    assert top.id == "wrong-pairing" and top.confidence - second.confidence > 0.3
    assert "inspect-model" in top.next_step and "ablate" not in top.next_step


def test_inspect_model_prints_no_none_on_any_real_config(cli, tmp_path, fixtures_dir):
    for i, name in enumerate(sorted(TABLE)):
        d = _dir(tmp_path, fixtures_dir, name, f"d{i}")
        out = cli("inspect-model", str(d), "--engine", "vllm==0.30.0").stdout
        assert not re.search(r"\bNone\b", out), (name, [line for line in out.splitlines() if "None" in line])


def test_extrapolated_engine_row_says_so(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "specforge--qwen3.6-27b-dflash.json")
    out = " ".join(cli("inspect-model", str(d), "--engine", "vllm==0.30.0").stdout.split())
    assert "(verified in the 0.29.0 wheel)" not in out and "extrapolated" in out


def test_eagle3_without_aux_ids_warns_and_shows_the_default(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "specforge--llama3-70B-ealge3.json")
    t = write_config(
        tmp_path / "t",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "num_hidden_layers": 80,
            "hidden_size": 8192,
            "vocab_size": 128256,
        },
    ).parent
    _, js = _js(cli, d, "--target", t)
    assert js["eagle3_default_aux_ids"] == [2, 40, 77]
    assert any("no eagle_aux_hidden_state_layer_ids" in w for w in js["warnings"])
    assert js["drafter"]["rope"]["scaling"]["rope_type"] == "llama3"


def test_target_summary_names_rope_scaling_and_the_layer_kind_rule(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "specforge--qwen3-4b-dflash.json")
    t = _dir(tmp_path, fixtures_dir, "xiaomimimo--MiMo-config.json", "t")
    out = " ".join(cli("inspect-model", str(d), "--target", str(t)).stdout.split())
    assert "rule: use_sliding_window is false" in out
    tf = target_facts(str(t))
    assert tf.mtp_layers == 2 and tf.sliding_window is None and set(tf.layer_kinds) == {"full"}


# --- real drafter/target pairs (both configs public) and what the second round of real configs exposed ---------


def _pairing(tmp_path, fixtures_dir, drafter, target):
    d = _dir(tmp_path, fixtures_dir, drafter, "d")
    t = _dir(tmp_path, fixtures_dir, target, "t")
    report, _ = build_report(gather_files(FileInputs(drafter=str(d), target=str(t))))
    by_check = {}
    for f in report.findings:
        by_check.setdefault(f.check_id, []).append(f)
    return by_check


REAL_PAIRS = [
    # drafter, target, pairing status, words in the pairing message
    (
        "specforge--qwen3.5-35b-a3b-dflash.json",
        "aiconfigurator--Qwen--Qwen3.5-35B-A3B.json",
        Status.OK,
        "layer ids [1, 10, 19, 28, 37] within 40 target layers, num_target_layers 40",
    ),
    (
        "speculators-issue--dflash-qwen3.6-35b-a3b.json",
        "aiconfigurator--Qwen--Qwen3.6-35B-A3B.json",
        Status.OK,
        "layer ids [1, 10, 19, 28, 37] within 40 target layers",
    ),
    (
        "specforge--gemma4-26b-a4b-eagle3.json",
        "aiconfigurator--google--gemma-4-26B-A4B.json",
        Status.OK,
        "layer ids [5, 17, 29] within 30 target layers, hidden size 2816, vocabulary 262144",
    ),
    # SpecForge's DeepSeek-V3 EAGLE-3 config carries Qwen's bos/eos ids: a copied field, not another target
    (
        "specforge--deepseek-v3-671b-eagle3.json",
        "tt-metal--deepseek-v3-config.json",
        Status.OK,
        "layer ids [1, 29, 57] within 61 target layers, hidden size 7168, vocabulary 129280",
    ),
    # cross pairs: the E2B assistant on the 26B target, the 122B MTP head on the 35B target
    (
        "gemma4-swift-mlx--gemma-4-E2B-it-assistant.json",
        "aiconfigurator--google--gemma-4-26B-A4B.json",
        Status.FAIL,
        "drafter expects target hidden size 1536; target has 2816",
    ),
    (
        "specforge--qwen3.5-122b-a10b-mtp.json",
        "aiconfigurator--Qwen--Qwen3.5-35B-A3B.json",
        Status.FAIL,
        "drafter expects target hidden size 3072; target has 2048",
    ),
    # third round: the real targets of SpecForge's EAGLE-3, P-EAGLE, DSpark, DFlash and DFlash2 drafters
    (
        "specforge--gpt-oss-20B-eagle3.json",
        "aiconfigurator--openai--gpt-oss-20b.json",
        Status.OK,
        "layer ids [1, 11, 21] within 24 target layers, hidden size 2880, vocabulary 201088",
    ),
    (
        "specforge--qwen3-235B-A22B-eagle3.json",
        "aiconfigurator--Qwen--Qwen3-235B-A22B.json",
        Status.OK,
        "layer ids [1, 46, 90] within 94 target layers, hidden size 4096, vocabulary 151936",
    ),
    (
        "specforge--llama3-8B-eagle3.json",
        "aiconfigurator--meta-llama--Meta-Llama-3.1-8B.json",
        Status.OK,
        "hidden size 4096, vocabulary 128256, bos_token_id 128000, eos_token_id 128001",
    ),
    (
        "eagle--traineagle3-config.json",
        "aiconfigurator--meta-llama--Meta-Llama-3.1-8B.json",
        Status.OK,
        "hidden size 4096, vocabulary 128256",
    ),
    (
        "specforge--qwen3-next-80b-a3b-eagle3.json",
        "aiconfigurator--Qwen--Qwen3-Next-80B-A3B-Thinking.json",
        Status.OK,
        "hidden size 2048, vocabulary 151936",
    ),
    (
        "specforge--qwen3-8b-peagle.json",
        "aiconfigurator--Qwen--Qwen3-8B.json",
        Status.OK,
        "hidden size 4096, vocabulary 151936",
    ),
    (
        "specforge--qwen3-8b-peagle@head.json",
        "aiconfigurator--Qwen--Qwen3-8B.json",
        Status.OK,
        "hidden size 4096, vocabulary 151936",
    ),
    (
        "specforge--qwen3-8b-dspark.json",
        "aiconfigurator--Qwen--Qwen3-8B.json",
        Status.OK,
        "layer ids [1, 9, 17, 25, 33] within 36 target layers, num_target_layers 36, hidden size 4096",
    ),
    (
        "specforge--qwen3.6-27b-dflash2.json",
        "aiconfigurator--nvidia--Qwen3.6-27B-NVFP4.json",
        Status.OK,
        "layer ids [5, 19, 33, 47, 61] within 64 target layers, num_target_layers 64, hidden size 5120",
    ),
    (
        "specforge--qwen3.6-27b-dflash.json",
        "aiconfigurator--nvidia--Qwen3.6-27B-NVFP4.json",
        Status.OK,
        "layer ids [1, 16, 31, 46, 61] within 64 target layers, num_target_layers 64, hidden size 5120",
    ),
    # cross pair: SpecForge's Qwen3-4B DFlash drafter on Qwen3-8B (same tokenizer, another hidden size)
    (
        "specforge--qwen3-4b-dflash.json",
        "aiconfigurator--Qwen--Qwen3-8B.json",
        Status.FAIL,
        "drafter expects target hidden size 2560; target has 4096",
    ),
]


@pytest.mark.parametrize("drafter,target,status,words", REAL_PAIRS, ids=[p[0] for p in REAL_PAIRS])
def test_real_pairs_fit_and_real_cross_pairs_do_not(tmp_path, fixtures_dir, drafter, target, status, words):
    f = _pairing(tmp_path, fixtures_dir, drafter, target)["drafter-target-pairing"][0]
    assert f.status == status and words in f.message, f.message


def test_copied_special_token_ids_are_flagged_not_taken_for_another_tokenizer(tmp_path, fixtures_dir):
    d = drafter_facts(str(fixtures_dir / "configs" / "real" / "specforge--deepseek-v3-671b-eagle3.json"))
    assert d.special_tokens == {"pad_token_id": (0,)}  # 151643/151645 lie outside its own vocabulary of 129280
    assert any("bos_token_id 151643 is outside the drafter's own vocabulary (129280)" in w for w in d.warnings)
    f = _pairing(
        tmp_path, fixtures_dir, "specforge--deepseek-v3-671b-eagle3.json", "tt-metal--deepseek-v3-config.json"
    )["drafter-target-pairing"][0]
    assert "151643" not in f.message


def test_gemma4_rope_is_read_per_attention_kind(tmp_path, fixtures_dir):
    real = fixtures_dir / "configs" / "real"
    a = drafter_facts(str(real / "gemma4-swift-mlx--gemma-4-E2B-it-assistant.json"))
    t = target_facts(str(real / "aiconfigurator--google--gemma-4-26B-A4B.json"))
    for r in (a.rope, t.rope):  # proportional RoPE rotates a quarter of the dims unscaled: no scaling
        assert (r.theta, r.scaling, r.partial_rotary_factor) == (1e6, None, 0.25)
        assert r.per_layer_type == {"full_attention": 1e6, "sliding_attention": 1e4}
    rope = _pairing(
        tmp_path, fixtures_dir, "specforge--gemma4-26b-a4b-eagle3.json", "aiconfigurator--google--gemma-4-26B-A4B.json"
    )["rope-agreement"][0]
    assert rope.status == Status.OK  # it said "could not check: rope_theta missing from the target config"


def _rope(tmp_path, fixtures_dir, drafter, target, launch=None):
    d = _dir(tmp_path, fixtures_dir, drafter, "d")
    t = _dir(tmp_path, fixtures_dir, target, "t")
    report, _ = build_report(gather_files(FileInputs(drafter=str(d), target=str(t), launch=launch)))
    f = next(f for f in report.findings if f.check_id == "rope-agreement")
    return f, report


def test_a_drafter_carrying_its_own_yarn_is_weak_evidence_not_a_verdict(tmp_path, fixtures_dir):
    """The speculators DFlash drafter for Qwen3.6-35B-A3B declares YaRN (×64 from 4096) while its target's
    config has none: long-context training, or YaRN added after training — the config cannot tell. A weak
    observation (a warning), and no cause stands out without acceptance figures."""
    f, report = _rope(
        tmp_path,
        fixtures_dir,
        "speculators-issue--dflash-qwen3.6-35b-a3b.json",
        "aiconfigurator--Qwen--Qwen3.6-35B-A3B.json",
    )
    assert f.status == Status.WARN and "yarn ×64 from 4096, its target's none" in f.message, f.message
    assert [(o.name, o.strength) for o in f.observations] == [("rope:mismatch", 0.35)]
    cause = next((c for c in report.causes if c.id == "rope-mismatch"), None)
    assert cause is None or cause.confidence < 0.2, cause


SGLANG_YARN = (
    "python -m sglang.launch_server --model-path Qwen/Qwen3.6-35B-A3B --speculative-algorithm DFLASH "
    "--speculative-draft-model-path some/drafter --json-model-override-args "
    '\'{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, '
    '"original_max_position_embeddings": 262144}}\''
)


def test_sglang_model_overrides_reach_the_drafter_and_vllm_hf_overrides_do_not(tmp_path, fixtures_dir):
    """SGLang builds the draft ModelConfig with the server's --json-model-override-args (read in 0.4.6-0.5.23);
    vLLM gives the draft config its own hf_overrides (0.8.5-0.33.0): the same YaRN wish is a fault on one."""
    pair = ("specforge--qwen3.5-35b-a3b-dflash.json", "aiconfigurator--Qwen--Qwen3.5-35B-A3B.json")
    f, report = _rope(tmp_path, fixtures_dir, *pair, launch=SGLANG_YARN)
    assert f.status == Status.FAIL and "rope scaling yarn ×4 from 262144 instead of none" in f.message, f.message
    assert [(o.name, o.strength) for o in f.observations] == [("rope:mismatch", 1.0)]
    assert "rope-mismatch" in [c.id for c in report.causes[:3]]
    vllm = (
        'vllm serve Qwen/Qwen3.5-35B-A3B --hf-overrides \'{"rope_scaling": {"rope_type": "yarn", '
        '"factor": 4.0}}\' --speculative-config \'{"method": "dflash", "model": "some/drafter", '
        '"num_speculative_tokens": 15}\''
    )
    (tmp_path / "v").mkdir()
    f, _ = _rope(tmp_path / "v", fixtures_dir, *pair, launch=vllm)
    assert f.status == Status.OK and any("target's RoPE only" in d for d in f.details), (f.message, f.details)


def test_a_theta_unlike_the_targets_is_a_warning_of_another_target(tmp_path, fixtures_dir):
    """Qwen3-8B's DSpark drafter (theta 1e6) on Qwen3-4B-Instruct-2507 (5e6): the drafter runs as trained, but
    was written for another target — a weaker observation than a served override."""
    f, _ = _rope(tmp_path, fixtures_dir, "specforge--qwen3-8b-dspark.json", "qwen--Qwen3-4B-Instruct-2507-config.json")
    assert f.status == Status.WARN and "rope_theta 1e+06 (drafter) vs 5e+06 (target)" in f.message, f.message
    assert [(o.name, o.strength) for o in f.observations] == [("rope:mismatch", 0.5)]


def test_gemma4_assistant_reads_the_targets_kv_cache(fixtures_dir):
    a = drafter_facts(str(fixtures_dir / "configs" / "real" / "gemma4-swift-mlx--gemma-4-E2B-it-assistant.json"))
    assert a.target_hidden_size == 1536 and a.mtp_layers == 4 and a.sliding_window == 512
    assert any("4 of its 4 layers read the target's KV cache" in n for n in a.notes)
    assert a.not_understood == ()  # centroid head and media token ids are known, not acceptance-relevant


def test_mimo_v2_flash_is_an_mtp_target_with_a_sliding_mtp_layer(tmp_path, fixtures_dir):
    real = fixtures_dir / "configs" / "real"
    d = drafter_facts(str(real / "aiconfigurator--XiaomiMiMo--MiMo-V2-Flash.json"))
    assert (d.method, d.mtp_layers, d.embedded_in_target) == ("mtp", 1, True)
    assert [(la.attention, la.window) for la in d.layers] == [("sliding", 128)]
    assert d.attention_sinks == ("add_swa_attention_sink_bias",)
    assert (d.num_attention_heads, d.num_key_value_heads, d.head_dim) == (64, 8, 192)  # the SWA heads, not 64/4
    assert any("states no MTP layer count" in n for n in d.notes)
    t = target_facts(str(real / "aiconfigurator--XiaomiMiMo--MiMo-V2-Flash.json"))
    assert "transformers' default gives the same" in t.layer_kinds_rule
    assert [i for i, k in enumerate(t.layer_kinds) if k == "full"] == [0, 5, 11, 17, 23, 29, 35, 41, 47]
    checks = _pairing(
        tmp_path,
        fixtures_dir,
        "aiconfigurator--XiaomiMiMo--MiMo-V2-Flash.json",
        "aiconfigurator--XiaomiMiMo--MiMo-V2-Flash.json",
    )
    assert checks["rope-agreement"][0].status == Status.OK  # full 5e6 and sliding 1e4 on both sides


def test_hybrid_layer_pattern_wins_over_the_model_type_default(tmp_path, fixtures_dir):
    cfg = json.loads((fixtures_dir / "configs" / "real" / "aiconfigurator--XiaomiMiMo--MiMo-V2-Flash.json").read_text())
    cfg["hybrid_layer_pattern"] = [0] * 24 + [1] * 24  # engines build what the pattern says
    t = target_facts(str(write_config(tmp_path / "t", cfg).parent))
    assert t.layer_kinds == ("full",) * 24 + ("sliding",) * 24
    assert "engines and transformers disagree" in t.layer_kinds_rule


def test_mtp_inside_a_hybrid_target_reads_no_target_layer_types(fixtures_dir):
    for name in ("aiconfigurator--Qwen--Qwen3.5-35B-A3B.json", "aiconfigurator--Qwen--Qwen3.6-35B-A3B.json"):
        d = drafter_facts(str(fixtures_dir / "configs" / "real" / name))
        # it warned "layer_types has 40 entries but num_hidden_layers is 1" about the target's own stack
        assert d.warnings == () and [la.attention for la in d.layers] == ["full"]


def test_speculators_dflash_causality_flag_is_read_as_vllm_reads_it(fixtures_dir):
    """speculators' `sliding_window_non_causal` (vLLM 0.26+ algos.py: dflash_config.causal = not it; default
    non-causal) is understood, not listed as an unknown key."""
    d = drafter_facts(str(fixtures_dir / "configs" / "real" / "speculators-issue--dflash-qwen3.6-35b-a3b.json"))
    assert "sliding_window_non_causal" not in " ".join(d.not_understood)
    assert d.layers and all(layer.causal for layer in d.layers)
    assert any("vLLM 0.26+ reads it as dflash_config.causal true" in n for n in d.notes)


def test_qwen3_next_states_no_mtp_count_and_is_served_with_one_full_layer(tmp_path, fixtures_dir):
    """The real Qwen3-Next config has neither mtp_num_hidden_layers nor num_nextn_predict_layers: vLLM builds
    num_nextn_predict_layers (default 1) full-attention MTP layers, SGLang sets it to 1. It was read as an
    unknown 48-layer drafter."""
    real = fixtures_dir / "configs" / "real"
    d = drafter_facts(str(real / "aiconfigurator--Qwen--Qwen3-Next-80B-A3B-Thinking.json"))
    assert (d.method, d.mtp_layers, d.embedded_in_target) == ("mtp", 1, True)
    assert [(la.attention, la.window) for la in d.layers] == [("full", None)]
    assert any("states no MTP layer count" in n for n in d.notes)
    t = target_facts(str(real / "aiconfigurator--Qwen--Qwen3-Next-80B-A3B-Thinking.json"))
    assert [i for i, k in enumerate(t.layer_kinds) if k == "full"] == list(range(3, 48, 4))
    assert t.mtp_layers is None  # the target config states none; only the drafter reading applies the engines' 1
    f = _pairing(
        tmp_path,
        fixtures_dir,
        "specforge--qwen3-next-80b-a3b-eagle3.json",
        "aiconfigurator--Qwen--Qwen3-Next-80B-A3B-Thinking.json",
    )["drafter-target-pairing"][0]
    assert "hybrid (36 linear, 12 full; full_attention_interval = 4" in " ".join(f.details)


def test_gpt_oss_eagle3_taps_marked_on_the_real_target(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "specforge--gpt-oss-20B-eagle3.json")
    t = _dir(tmp_path, fixtures_dir, "aiconfigurator--openai--gpt-oss-20b.json", "t")
    grid = " ".join(cli("inspect-model", str(d), "--target", str(t)).stdout.split())
    assert "1◆full" in grid and "11◆full" in grid and "21◆full" in grid and "scaling yarn ×32" in grid


def test_mimo_v2_flash_mtp_loads_where_the_engines_register_it(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "aiconfigurator--XiaomiMiMo--MiMo-V2-Flash.json")
    for engine, loads in (
        ("vllm==0.20.2", False),
        ("vllm==0.29.0", True),
        ("sglang==0.5.6", False),
        ("sglang==0.5.23", True),
    ):
        _, js = _js(cli, d, "--engine", engine)
        f = _finding(js, "engine-loads-drafter")[0]
        assert (f["status"] == "ok") is loads, (engine, f["message"])
