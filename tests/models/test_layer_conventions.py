"""Issue 28: layer-id conventions by producer and engine release, and no pass on a config that was not understood.

Every config here is a real public one (fixtures/configs/real, SOURCES.md) unless the test builds it and says so.
What each engine taps comes from models/aux_taps.toml, read from the releases' wheels; the conformance suite
re-reads it from the wheels that are cached (tests/conformance)."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest

from dflash_doctor.collect.inputs import FileInputs, gather_files
from dflash_doctor.evidence import Status
from dflash_doctor.evidence.model_facts import AUX_SOURCES, DrafterFacts
from dflash_doctor.models import aux_taps
from dflash_doctor.models.facts import drafter_facts, target_facts
from dflash_doctor.services.doctor import build_report

from .helpers import safetensors_bytes, write_config

ROOT = Path(__file__).resolve().parents[2]


def _real(fixtures_dir, name: str) -> Path:
    return fixtures_dir / "configs" / "real" / name


def _dir(tmp_path, fixtures_dir, name, sub):
    d = tmp_path / sub
    d.mkdir()
    shutil.copy(_real(fixtures_dir, name), d / "config.json")
    return d


def _js(cli, *args):
    r = cli("inspect-model", *map(str, args), "--format", "json")
    assert "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)


def _one(js, check):
    (f,) = [f for f in js["findings"] if f["check"] == check]
    return f


# --- item 1: what each producer trains on, what each engine release taps ----------------------------------------


def test_the_table_and_the_readers_agree_on_which_placements_name_entering_streams():
    entering = {p["placement"] for p in aux_taps.load()["producer"] if p["convention"] == "entering"}
    assert entering == set(AUX_SOURCES)
    assert aux_taps.convention("eagle_config.eagle_aux_hidden_state_layer_ids") == "output"
    assert aux_taps.convention("eagle_aux_hidden_state_layer_ids") == "entering"


def test_every_table_row_is_in_the_conventions_doc_with_its_citation():
    doc = (ROOT / "docs" / "layer-id-conventions.md").read_text()
    data = aux_taps.load()
    for p in data["producer"]:
        assert p["name"] in doc and p["placement"] in doc, p["name"]
        # the file the producer row cites, and its commit
        assert p["cite"].split()[1].split(":")[0] in doc and p["cite"].split(" at ")[-1].strip()[:12] in doc, p["name"]
    for e in data["engine"]:
        assert f"{e['min']}" in doc and e["cite"].split(":")[0].split()[-1] in doc, (e["engine"], e["runner"], e["min"])


KIMI = ("torchspec--kimi_k25_eagle3_mla.json", "aiconfigurator--moonshotai--Kimi-K2.5.json")


@pytest.mark.parametrize(
    "engine, status, words",
    [
        # V1 reads eagle_config raw: the stream entering 1, 29, 57 — every tap one layer early
        ("vllm==0.26.0", "fail", "taps the outputs of layers 0, 28, 56; the drafter was trained on 1, 29, 57"),
        # V2 is the default from 0.29 and never reads eagle_config: its default (2, 30, 58) entering is right here,
        # but V1 (VLLM_USE_V2_MODEL_RUNNER=0) would tap early
        ("vllm==0.33.0", "warn", "on the V1 runner it would not"),
        ("vllm==0.34.0", "ok", "taps the outputs of layers 1, 29, 57 on its V2 runner, as trained"),
        # 0.20.1 reads only the top-level field: the default again, which is what these ids are
        ("vllm==0.20.1", "ok", "as trained"),
        ("sglang==0.5.22", "ok", "taps the outputs of layers 1, 29, 57 on its worker runner, as trained"),
    ],
)
def test_kimi_eagle3_nested_ids_by_engine_release(cli, tmp_path, fixtures_dir, engine, status, words):
    d = _dir(tmp_path, fixtures_dir, KIMI[0], "d")
    t = _dir(tmp_path, fixtures_dir, KIMI[1], "t")
    js = _js(cli, d, "--target", t, "--engine", engine)
    assert js["trained_on"]["outputs"] == [1, 29, 57]
    f = _one(js, "engine-aux-taps")
    assert f["status"] == status and words in f["message"], f["message"]
    if status != "ok":
        # the advice restates the ids in vLLM's own convention (top level, +1): it must not move the taps early
        assert "eagle_aux_hidden_state_layer_ids = [2, 30, 58]" in f["remedy"], f["remedy"]


def test_kimi_taps_are_marked_on_the_layers_trained_on(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, KIMI[0], "d")
    t = _dir(tmp_path, fixtures_dir, KIMI[1], "t")
    text = " ".join(cli("inspect-model", str(d), "--target", str(t), "--engine", "vllm==0.26.0").stdout.split())
    assert "1◆full" in text and "29◆full" in text and "57◆full" in text and "0◆full" not in text
    assert "trained on outputs of layers 1, 29, 57" in text
    assert "served as (V1, the runner in use) outputs of layers 0, 28, 56 NOT as trained" in text


def test_one_early_taps_count_for_the_layer_offset_cause(tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, KIMI[0], "d")
    t = _dir(tmp_path, fixtures_dir, KIMI[1], "t")
    report, _ = build_report(gather_files(FileInputs(drafter=str(d), target=str(t), engine="vllm==0.26.0")))
    (f,) = [f for f in report.findings if f.check_id == "engine-aux-taps"]
    assert [o.name for o in f.observations] == ["engine-layer-map:raw"]


def test_speculators_top_level_ids_name_the_stream_entering_a_layer(tmp_path, fixtures_dir):
    """speculators extracts hidden states with vLLM (capture-before): [2, 46, 91, 93] are the outputs of
    1, 45, 90, 92. vLLM reads the top-level field unshifted (as trained); SGLang taps only eagle_config and
    falls back to its default."""
    d = drafter_facts(str(_real(fixtures_dir, "speculators-issue1065--eagle3-qwen3moe.json")), with_weights=False)
    assert d.ids_written == (2, 46, 91, 93) and d.target_layer_ids == (1, 45, 90, 92)
    assert d.hf_hidden_state_indices == (2, 46, 91, 93)
    vl = aux_taps.served(d, "vllm", "0.26.0", 94)
    assert all(s.taps.outputs == (1, 45, 90, 92) for s in vl)
    (sg,) = aux_taps.served(d, "sglang", "0.5.22", 94)
    assert sg.taps.outputs == (1, 46, 90) and sg.taps.default


def test_specforge_without_ids_trains_on_what_engines_default_to(tmp_path, fixtures_dir):
    d = drafter_facts(str(_real(fixtures_dir, "specforge--llama3-8B-eagle3.json")), with_weights=False)
    tr = aux_taps.trained(d, 32)
    assert tr.outputs == (1, 15, 28) and tr.default
    for engine, version in (("vllm", "0.20.1"), ("vllm", "0.33.0"), ("sglang", "0.5.22")):
        assert all(s.taps.outputs == (1, 15, 28) for s in aux_taps.served(d, engine, version, 32))


# --- item 2: MTP outside the DeepSeek/Qwen names ----------------------------------------------------------------


def test_minimax_m25_mtp_modules_and_partial_rotary(cli, tmp_path, fixtures_dir):
    name = "aiconfigurator--MiniMaxAI--MiniMax-M2.5.json"
    d = drafter_facts(str(_real(fixtures_dir, name)), with_weights=False)
    assert (d.method, d.mtp_layers, d.embedded_in_target, len(d.layers)) == ("mtp", 3, True, 3)
    assert d.rope.partial_rotary_factor == 0.5 and "rotary_dim 64 of head_dim 128" in " ".join(d.rope.notes)
    t = target_facts(str(_real(fixtures_dir, name)))
    assert (t.mtp_layers, t.mtp_field, t.rope.partial_rotary_factor) == (3, "num_mtp_modules", 0.5)
    dd = _dir(tmp_path, fixtures_dir, name, "d")
    js = _js(cli, dd, "--engine", "vllm==0.33.0")
    msgs = " ".join(f["message"] for f in js["findings"])
    assert "62 drafter layers" not in msgs
    # neither engine registers a MiniMax-M2 MTP module (vLLM has MiniMaxM3MTP only; SGLang none)
    f = _one(js, "engine-loads-drafter")
    assert f["status"] == "fail" and "registers MTP layers for a minimax_m2 target" in f["message"], f["message"]


# --- item 3: the Muse-Glimmer assistant is a DFlash block drafter ------------------------------------------------

MUSE = "mlx-vlm--muse-glimmer-30b-assistant.json"


def _muse_dir(tmp_path, fixtures_dir, taps: int = 5) -> Path:
    """The quoted config, with the published `architectures` it omits, and a safetensors header written by us
    from its shapes (no weights): encoder.fc takes taps × 6656, five decoder layers."""
    cfg = json.loads(_real(fixtures_dir, MUSE).read_text())
    cfg["architectures"] = ["MuseGlimmerAssistantModel"]
    d = tmp_path / "muse"
    write_config(d, cfg)
    h = 6656
    tensors = {"encoder.fc.weight": ("BF16", [h, taps * h]), "encoder.output_norm_enc.weight": ("BF16", [h])}
    for i in range(5):
        tensors[f"layers.{i}.self_attn.q_proj.weight"] = ("BF16", [4096, h])
    (d / "model.safetensors").write_bytes(safetensors_bytes(tensors, data=False))
    return d


def _muse_target(tmp_path) -> Path:
    # a Muse-Glimmer-30B-shaped text target (52 layers, hidden 6656), written by us
    return write_config(
        tmp_path / "museT",
        {
            "architectures": ["MuseGlimmerForCausalLM"],
            "model_type": "muse_glimmer",
            "num_hidden_layers": 52,
            "hidden_size": 6656,
            "vocab_size": 202048,
        },
    ).parent


def test_muse_glimmer_assistant_is_read_as_a_dflash_drafter(fixtures_dir):
    d = drafter_facts(str(_real(fixtures_dir, MUSE)), with_weights=False)
    assert (d.method, d.block_size, d.mask_token_id) == ("dflash", 16, 201818)
    assert "Muse-Glimmer assistant" in d.family and "Gemma" not in d.family and d.mtp_layers is None
    assert d.target_layer_ids == (1, 13, 25, 37, 49) and d.not_understood == ()
    assert all(not la.causal for la in d.layers) and d.swa_layers == (0, 1, 2, 3, 4)


@pytest.mark.parametrize(
    "engine, loads, taps",
    [("vllm==0.33.0", "ok", "ok"), ("vllm==0.26.0", "fail", None), ("sglang==0.5.22", "ok", "ok")],
)
def test_muse_glimmer_assistant_on_the_engines(cli, tmp_path, fixtures_dir, engine, loads, taps):
    js = _js(cli, _muse_dir(tmp_path, fixtures_dir), "--target", _muse_target(tmp_path), "--engine", engine)
    assert _one(js, "engine-loads-drafter")["status"] == loads
    if taps:
        f = _one(js, "engine-aux-taps")
        assert f["status"] in ("ok", "warn") and "1, 13, 25, 37, 49" in f["message"], f["message"]
    pairing = _one(js, "drafter-target-pairing")
    assert "fc input 33280 = 5 × 6656" in " ".join([pairing["message"], *pairing["details"]])


def test_muse_glimmer_fc_for_another_tap_count_does_not_pair(cli, tmp_path, fixtures_dir):
    js = _js(cli, _muse_dir(tmp_path, fixtures_dir, taps=3), "--target", _muse_target(tmp_path))
    assert _one(js, "drafter-target-pairing")["status"] == "fail"


# --- item 4: TorchSpec's DFlash layout --------------------------------------------------------------------------


def test_torchspec_dflash_counts_taps_in_num_target_layers(tmp_path, fixtures_dir):
    d = drafter_facts(str(_real(fixtures_dir, "torchspec--dflash_draft_config.json")), with_weights=False)
    assert d.num_target_layers == 36 and any("counts the tapped layers" in n for n in d.notes)
    report, _ = build_report(
        gather_files(
            FileInputs(
                drafter=str(_dir(tmp_path, fixtures_dir, "torchspec--dflash_draft_config.json", "d")),
                target=str(_dir(tmp_path, fixtures_dir, "aiconfigurator--Qwen--Qwen3-8B.json", "t")),
            )
        )
    )
    (f,) = [f for f in report.findings if f.check_id == "drafter-target-pairing"]
    assert f.status == Status.OK and "num_target_layers 36" in f.message, f.message


@pytest.mark.parametrize(
    "engine, status, words",
    [
        # the V1 runner reads no top-level target_layer_ids: it taps three defaults into a 5-tap fc
        ("vllm==0.26.0", "fail", "fc shape error"),
        ("vllm==0.33.0", "warn", "on the V1 runner it would not"),
        ("sglang==0.5.22", "ok", "as trained"),
    ],
)
def test_torchspec_dflash_top_level_ids_by_release(cli, tmp_path, fixtures_dir, engine, status, words):
    d = _dir(tmp_path, fixtures_dir, "torchspec--dflash_draft_config.json", "d")
    t = _dir(tmp_path, fixtures_dir, "aiconfigurator--Qwen--Qwen3-8B.json", "t")
    f = _one(_js(cli, d, "--target", t, "--engine", engine), "engine-aux-taps")
    assert f["status"] == status and words in f["message"], f["message"]


@pytest.mark.parametrize("engine", ["vllm==0.26.0", "vllm==0.33.0"])
def test_dflash_advice_names_a_dflash_field_the_release_reads(cli, tmp_path, fixtures_dir, engine):
    """A DFlash drafter's ids go to dflash_config.target_layer_ids (read + 1 by vLLM V1 0.22+ and V2 0.24+, so the
    trained outputs are written unchanged) — never EAGLE-3's field, and no 'nested ids' that the config lacks."""
    d = _dir(tmp_path, fixtures_dir, "torchspec--dflash_draft_config.json", "d")
    t = _dir(tmp_path, fixtures_dir, "aiconfigurator--Qwen--Qwen3-8B.json", "t")
    f = _one(_js(cli, d, "--target", t, "--engine", engine), "engine-aux-taps")
    assert "dflash_config.target_layer_ids = [1, 9, 17, 25, 33]" in f["remedy"], f["remedy"]
    assert "eagle_aux_hidden_state_layer_ids" not in f["remedy"] and "nested" not in f["remedy"]


def test_eagle3_advice_on_sglang_names_its_nested_field(tmp_path, fixtures_dir):
    """speculators' top-level ids are not read by SGLang (it taps its default): the advice writes the trained
    outputs into eagle_config, which SGLang reads + 1."""
    from dflash_doctor.models.aux_taps import release_rows, restate

    d = drafter_facts(str(_real(fixtures_dir, "speculators-issue1065--eagle3-qwen3moe.json")), with_weights=False)
    (r, *_) = restate(d, (1, 45, 90, 92), release_rows("sglang", "0.5.22"), 94)
    assert (r.placement, r.ids, r.runners) == (
        "eagle_config.eagle_aux_hidden_state_layer_ids",
        (1, 45, 90, 92),
        ("worker",),
    )


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "fixtures" / "configs" / "real").glob("*.json")))
@pytest.mark.parametrize(
    "engine, version", [("vllm", "0.21.0"), ("vllm", "0.26.0"), ("vllm", "0.33.0"), ("sglang", "0.5.22")]
)
def test_every_restatement_taps_what_was_trained_when_served(fixtures_dir, name, engine, version):
    """The advice cannot contradict the finding: the config as the advice leaves it (the new field added, the old
    one kept unless the advice says to remove it) is read the way each runner reads — the first field of its
    order that is present wins — and every runner the advice names then taps exactly the trained outputs."""
    from dataclasses import replace

    d = drafter_facts(str(_real(fixtures_dir, name)), with_weights=False)
    if d.method not in aux_taps.EAGLE_METHODS + aux_taps.DFLASH_METHODS:
        return
    trained = aux_taps.trained(d, 61).outputs or (1, 29, 57)
    rows = aux_taps.release_rows(engine, version)
    alias = aux_taps.ALIASES
    # the trained taps, and taps one layer on (as if the config's ids were wrong: the old field must then not win)
    for target, want in itertools.product(
        ((), ("DeepseekV3ForCausalLM", "deepseek_v3")), (trained, tuple(o + 1 for o in trained))
    ):
        for r in aux_taps.restate(d, want, rows, 61, target):
            fields = {r.placement: r.ids}
            if d.ids_written is not None and not r.replaces:
                fields.setdefault(alias.get(d.layer_ids_source, d.layer_ids_source), d.ids_written)
            for row in rows:
                if row["runner"] not in r.runners:
                    continue
                first = next(w for w, _ in row["reads"] if w in fields)
                trial = replace(d, layer_ids_source=first, ids_written=fields[first], target_layer_ids=want)
                assert aux_taps.served_on(trial, row, 61, target).outputs == want, (name, r, row["runner"])


# --- item 5: nothing passes on a config that was not understood -------------------------------------------------


def _trt_medusa(tmp_path) -> Path:
    """A TensorRT-LLM Medusa engine config, written by us in that format (pretrained_config / build_config; no
    verbatim public one was found, SOURCES.md): no reader knows it."""
    return write_config(
        tmp_path / "medusa",
        {
            "version": "0.12.0",
            "pretrained_config": {
                "architecture": "MedusaForCausalLM",
                "dtype": "float16",
                "vocab_size": 32000,
                "hidden_size": 4096,
                "num_hidden_layers": 32,
                "num_medusa_heads": 4,
                "num_medusa_layers": 1,
                "max_draft_len": 63,
            },
            "build_config": {"max_batch_size": 8, "max_draft_len": 63, "speculative_decoding_mode": 4},
            "draft_vocab_size": 32000,
        },
    ).parent


UNKNOWN = [
    "aiconfigurator--nvidia--Nemotron-H-56B-Base-8K.json",
    "aiconfigurator--nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json",
    "aiconfigurator--moonshotai--Kimi-K2.5.json",
    "aiconfigurator--Qwen--Qwen3-8B.json",
    "medusa-trt",
]


@pytest.mark.parametrize("name", UNKNOWN)
@pytest.mark.parametrize("engine", ["vllm==0.33.0", "sglang==0.5.22"])
def test_no_check_passes_on_an_unknown_method_drafter(tmp_path, fixtures_dir, name, engine):
    """Walk every check over a drafter no reader understood (with a target and an engine, so that every check
    can run): a check that reads the drafter never passes."""
    from dflash_doctor.registry import load_checks

    d = _trt_medusa(tmp_path) if name == "medusa-trt" else _dir(tmp_path, fixtures_dir, name, "d")
    t = _dir(tmp_path, fixtures_dir, "aiconfigurator--Qwen--Qwen3-8B.json", "t")
    assert drafter_facts(str(d), with_weights=False).method == "unknown"
    report, _ = build_report(gather_files(FileInputs(drafter=str(d), target=str(t), engine=engine)))
    reads_drafter = {
        c.id for c in load_checks(False).checks if DrafterFacts in (*c.needs, *c.wants) and not c.method_free
    }
    assert len(reads_drafter) >= 10
    passed = [
        f"{f.check_id}: {f.message}" for f in report.findings if f.check_id in reads_drafter and f.status == Status.OK
    ]
    assert passed == []
    msgs = [f.message for f in report.findings if f.check_id in ("drafter-swa", "draft-vocab-map")]
    assert msgs and all(m.startswith("could not check: the drafter's method is unknown") for m in msgs)


def test_nemotron_layers_are_not_read_as_full_attention(fixtures_dir):
    d = drafter_facts(
        str(_real(fixtures_dir, "aiconfigurator--nvidia--Nemotron-H-56B-Base-8K.json")), with_weights=False
    )
    kinds = [la.attention for la in d.layers]
    assert (kinds.count("mamba"), kinds.count("mlp"), kinds.count("full")) == (54, 54, 10)
    nano = drafter_facts(str(_real(fixtures_dir, "aiconfigurator--nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json")))
    assert {la.attention for la in nano.layers} == {"mamba", "moe", "full"}


# --- item 6: the engine check names the drafter's own class ----------------------------------------------------


def test_mla_eagle3_drafter_is_looked_up_by_its_class(cli, tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, KIMI[0], "d")
    for engine, words in (
        ("vllm==0.33.0", "vllm 0.33.0 registers Eagle3DeepseekV2ForCausalLM (since 0.19.0)"),
        ("sglang==0.5.22", "sglang 0.5.22 registers Eagle3DeepseekV2ForCausalLM (since 0.5.12)"),
        ("sglang==0.5.11", "Eagle3DeepseekV2ForCausalLM is first registered in 0.5.12"),
    ):
        f = _one(_js(cli, d, "--engine", engine), "engine-loads-drafter")
        assert words in f["message"] and "LlamaForCausalLMEagle3" not in f["message"], f["message"]


# --- item 7: RoPE per layer, disabled windows, defaults, DFlash without ids ---------------------------------------


def test_gemma3_rope_per_attention_kind_from_defaults(fixtures_dir):
    t = target_facts(str(_real(fixtures_dir, "tt-metal--gemma-3-27b-it-config.json")))
    r = t.rope
    assert r.per_layer_type == {"full_attention": 1e6, "sliding_attention": 1e4}
    assert r.scaling == {"factor": 8.0, "rope_type": "linear"}
    notes = " ".join(r.notes)
    assert (
        "rope_local_base_freq not stated" in notes and "rope_scaling applies to the full-attention layers only" in notes
    )


def test_exaone4_global_layers_apply_no_rope_as_transformers_does(tmp_path):
    """No verbatim EXAONE-4 32B config was found: configs in its shape are written here, and the rule is checked
    against transformers' own Exaone4Config (layer kinds, its 4096 default window) and modeling code (which
    layers rotate)."""
    import inspect

    from transformers import Exaone4Config
    from transformers.models.exaone4 import modeling_exaone4

    base = {"model_type": "exaone4", "num_hidden_layers": 8, "hidden_size": 64, "vocab_size": 100, "rope_theta": 1e6}
    src = inspect.getsource(modeling_exaone4)
    assert "if self.sliding_window is None or self.is_sliding:" in src  # rotary only there
    for i, extra in enumerate(
        ({"sliding_window": 1024, "sliding_window_pattern": 4}, {"sliding_window_pattern": 4}, {})
    ):
        cfg = {**base, **extra}
        t = target_facts(str(write_config(tmp_path / f"t{i}", {"architectures": ["Exaone4ForCausalLM"], **cfg}).parent))
        ref = Exaone4Config(**cfg)
        assert [f"{k}_attention" for k in t.layer_kinds] == ref.layer_types, extra
        assert t.sliding_window == ref.sliding_window
        assert t.rope.nope_kinds == ("full_attention",)
    # the "LLLG" string form (EXAONE-4's published configs) reads the same
    t = target_facts(
        str(write_config(tmp_path / "s", {**base, "sliding_window": 1024, "sliding_window_pattern": "LLLG"}).parent)
    )
    assert t.layer_kinds == ("sliding", "sliding", "sliding", "full") * 2
    t = target_facts(
        str(write_config(tmp_path / "n", {**base, "sliding_window": None, "sliding_window_pattern": 4}).parent)
    )
    assert set(t.layer_kinds) == {"full"} and t.rope.nope_kinds == ()


def test_a_declared_but_disabled_window_is_said(fixtures_dir):
    t = target_facts(str(_real(fixtures_dir, "xiaomimimo--MiMo-config.json")))
    assert "a window of 32768 is declared but switched off" in t.layer_kinds_rule and t.sliding_window is None
    d = drafter_facts(str(_real(fixtures_dir, "specforge--qwen2.5-0.5b-eagle3.json")), with_weights=False)
    assert d.swa_layers == () and any(
        "sliding_window 131072 is declared but use_sliding_window is false" in n for n in d.notes
    )


def test_rope_theta_defaults_match_transformers():
    import warnings

    from transformers import AutoConfig

    from dflash_doctor.models.facts import DEFAULT_PARTIAL, DEFAULT_THETA

    warnings.filterwarnings("ignore")
    for mt, want in DEFAULT_THETA.items():
        c = AutoConfig.for_model(mt)
        c = getattr(c, "text_config", None) or c
        rp = c.rope_parameters
        got = {k: v["rope_theta"] for k, v in rp.items() if isinstance(v, dict)} or rp["rope_theta"]
        assert got == want, mt
    for mt, want in DEFAULT_PARTIAL.items():
        assert AutoConfig.for_model(mt).rope_parameters["partial_rotary_factor"] == want, mt


def test_an_omitted_theta_is_stated_as_the_default(fixtures_dir):
    d = drafter_facts(str(_real(fixtures_dir, "eagle--vicuna_7B_config.json")), with_weights=False)
    assert d.rope.theta == 1e4 and "transformers' default for llama is 10000" in " ".join(d.rope.notes)


@pytest.mark.parametrize(
    "engine, version, outputs, error",
    [
        ("vllm", "0.20.1", None, "fc shape error"),
        ("vllm", "0.26.0", None, "fc shape error"),
        ("vllm", "0.33.0", None, "fc shape error"),
        ("sglang", "0.5.22", (1, 9, 17, 25, 33), None),
    ],
)
def test_dflash_without_ids_by_release(tmp_path, engine, version, outputs, error):
    """A DFlash drafter with `target_layer_ids: null` (written here): SGLang builds its default ids
    (dflash_utils.py build_target_layer_ids); vLLM has none — its fc expects 5 states and the runner taps 3."""
    cfg = {
        "architectures": ["DFlashDraftModel"],
        "num_hidden_layers": 5,
        "hidden_size": 64,
        "vocab_size": 100,
        "dflash_config": {"mask_token_id": 1, "target_layer_ids": None},
    }
    d = drafter_facts(str(write_config(tmp_path / "d", cfg).parent), with_weights=False)
    assert d.ids_written is None
    served = aux_taps.served(d, engine, version, 36)
    chosen = next(s for s in served if s.chosen)
    assert chosen.taps.outputs == outputs and (error is None) == (chosen.taps.error is None)
    if error:
        assert error in chosen.taps.error


def test_sglang_deepseek_targets_add_one_only_when_the_first_id_is_1(fixtures_dir):
    """SGLang 0.5.13+ deepseek_v2.py: `if layer_ids and layer_ids[0] == 1: +1, else as given` — Kimi's [1, 29, 57]
    are served as trained; the same drafter with ids [2, 30, 58] (written here) would be tapped one early."""
    from dataclasses import replace

    d = drafter_facts(str(_real(fixtures_dir, KIMI[0])), with_weights=False)
    kimi = ("KimiK25ForConditionalGeneration", "kimi_k25")
    (s,) = aux_taps.served(d, "sglang", "0.5.22", 61, target=kimi)
    assert s.taps.outputs == (1, 29, 57)
    shifted = replace(d, ids_written=(2, 30, 58), target_layer_ids=(2, 30, 58))
    (s,) = aux_taps.served(shifted, "sglang", "0.5.22", 61, target=kimi)
    assert s.taps.outputs == (1, 29, 57) and "only when the first id is 1" in s.taps.how
    (s,) = aux_taps.served(shifted, "sglang", "0.5.12", 61, target=kimi)
    assert s.taps.outputs == (2, 30, 58)  # before 0.5.13 every target adds 1


def test_a_launch_naming_the_method_lifts_the_unknown_method_guard(tmp_path, fixtures_dir):
    d = _dir(tmp_path, fixtures_dir, "aiconfigurator--nvidia--Nemotron-H-56B-Base-8K.json", "d")
    launch = (
        "vllm serve nvidia/Nemotron-H-56B-Base-8K --speculative-config "
        '\'{"method": "mtp", "num_speculative_tokens": 3}\''
    )
    report, _ = build_report(gather_files(FileInputs(drafter=str(d), launch=launch)))
    (f,) = [f for f in report.findings if f.check_id == "drafter-swa"]
    assert not f.message.startswith("could not check: the drafter's method is unknown"), f.message
