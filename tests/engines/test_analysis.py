"""The source analysis on small synthetic installs, one per behaviour (tests/engines/synth.py).

Each test names the behaviour a real release has; the conformance suite (tests/conformance) checks the
same answers on the real wheels.
"""

import pytest

from dflash_doctor.engines import (
    CERTAIN,
    LIKELY,
    UNDECIDED,
    DirectoryTree,
    FetchedTree,
    analyse,
    follow_up,
    wanted_files,
)
from dflash_doctor.engines.table import compare, modes
from dflash_doctor.models.engine_support import lookup
from tests.engines.synth import build_sglang, build_vllm

QWEN36 = ("Qwen3_5ForConditionalGeneration",)


def vllm(tmp_path, version, **kw):
    return analyse(DirectoryTree(build_vllm(tmp_path / "site", version, **kw)), target_architectures=QWEN36)


def test_raw_release_reads_every_tap_one_layer_early(tmp_path):
    a = vllm(tmp_path, "0.20.1")
    lm = a.layer_map["V1"]
    assert (lm.value, lm.certainty) == ("raw", CERTAIN)
    assert any(c.path == "vllm/v1/worker/gpu_model_runner.py" and "target_layer_ids" in c.text for c in lm.cites)
    assert a.layer_map["V2"].value == "n/a"  # this release's V2 runner does not run DFlash at all


@pytest.mark.parametrize("patch", ["patched-line", "patched-loop"])
def test_a_hand_patched_plus_one_counts_however_it_is_written(tmp_path, patch):
    a = vllm(tmp_path, "0.20.1", runner_map=patch)
    assert a.layer_map["V1"].value == "plus-one" and a.layer_map["V1"].certain
    # the table says raw for 0.20.1: the disagreement is reported with both
    (d,) = compare(a, lookup("vllm", "0.20.1"))
    assert (d.field, d.table, d.source) == ("layer_map", "raw", "plus-one")


@pytest.mark.parametrize("construct", ["conditional", "opaque"])
def test_a_construct_the_probe_cannot_follow_is_could_not_decide(tmp_path, construct):
    a = vllm(tmp_path, "0.20.1", runner_map=construct)
    assert a.layer_map["V1"].value is None and a.layer_map["V1"].certainty == UNDECIDED


def test_fixed_release_adds_one_on_both_runners(tmp_path):
    a = vllm(tmp_path, "0.24.0")
    assert {k: v.value for k, v in a.layer_map.items()} == {"V1": "plus-one", "V2": "plus-one"}
    assert a.capture.value == -1  # capture index k is the stream entering layer k


def test_no_dflash_release_is_absent(tmp_path):
    a = vllm(tmp_path, "0.19.1")
    assert a.dflash.value == () and a.dflash.certain and a.has_dflash is False


@pytest.mark.parametrize(
    "version,reads,mixed",
    [("0.20.1", False, "allowed"), ("0.25.0", True, "refused"), ("0.26.0", True, "refused-unless-v2")],
)
def test_sliding_window_handling_and_mixed_refusals(tmp_path, version, reads, mixed):
    rules = vllm(tmp_path, version).swa_for("DFlashDraftModel")
    assert rules.reads_layer_types.value is reads and rules.mixed.value == mixed
    if mixed != "allowed":
        assert "mixed" in rules.error and any(c.text.startswith("raise NotImplementedError") for c in rules.mixed.cites)


def test_runner_rules_are_read_from_config(tmp_path):
    old = vllm(tmp_path / "a", "0.20.1").runner
    assert old.unset.value == "v1" and old.v2_dflash.value is False
    assert old.v2_error == "VLLM_USE_V2_MODEL_RUNNER does not yet support: speculative method 'dflash'"
    new = vllm(tmp_path / "b", "0.26.0").runner
    assert new.unset.value == "engine" and ("mixed-dflash", "v2") in new.rules.value
    late = vllm(tmp_path / "c", "0.29.0").runner
    assert late.v1_rejects_mixed.value is True and dict(late.rules.value)["otherwise"] == "v2"
    assert late.v1_error == "Model Runner V1 does not support: mixed sliding/full dflash drafts"


def test_every_synthetic_release_agrees_with_its_table_row(tmp_path):
    for version in ("0.19.1", "0.20.1", "0.22.0", "0.24.0", "0.25.0", "0.26.0"):
        a = vllm(tmp_path / version, version)
        assert compare(a, lookup("vllm", version)) == [], version


def test_version_without_dist_info_comes_from_version_py(tmp_path):
    a = vllm(tmp_path, "0.26.0", dist_info=False)
    assert (a.version.value, a.version.source) == ("0.26.0", "vllm/_version.py")


def test_target_unknown_answers_from_the_common_files_as_likely(tmp_path):
    a = analyse(DirectoryTree(build_vllm(tmp_path, "0.26.0")))
    assert a.layer_map["V1"].value == "plus-one" and a.layer_map["V1"].certainty == LIKELY


def test_sglang_shift_in_the_target_model(tmp_path):
    a = analyse(DirectoryTree(build_sglang(tmp_path / "ok", "0.5.22")), target_architectures=("Qwen3ForCausalLM",))
    lm = a.layer_map["worker"]
    assert lm.value == "plus-one" and lm.certain
    assert any(c.path == "sglang/srt/models/qwen3.py" and "val + 1" in c.text for c in lm.cites)
    raw = analyse(
        DirectoryTree(build_sglang(tmp_path / "raw", "0.5.22", qwen3="raw")), target_architectures=("Qwen3ForCausalLM",)
    )
    assert raw.layer_map["worker"].value == "raw"


def test_sglang_qwen36_target_adds_one_in_the_vl_class_and_captures_at_layer_entry(tmp_path):
    a = analyse(DirectoryTree(build_sglang(tmp_path, "0.5.22")), target_architectures=QWEN36)
    lm = a.layer_map["worker"]
    assert lm.value == "plus-one" and lm.certain
    assert any(c.path == "sglang/srt/models/qwen3_vl.py" and "val + 1" in c.text for c in a.target_shift.cites)
    # the language model class came from the language_model_cls default of the most derived __init__
    assert any(c.path == "sglang/srt/models/qwen3_5.py" for c in a.capture.cites)


def test_sglang_sliding_windows(tmp_path):
    honoured = analyse(DirectoryTree(build_sglang(tmp_path / "a", "0.5.22")))
    assert modes(honoured)["drafter_swa"] == "honoured"
    ignored = analyse(DirectoryTree(build_sglang(tmp_path / "b", "0.5.12", swa="ignored")))
    assert modes(ignored)["drafter_swa"] == "ignored"
    absent = analyse(DirectoryTree(build_sglang(tmp_path / "c", "0.5.10", dflash=False)))
    assert absent.dflash.value == ()


def test_fetched_tree_rounds_reach_the_same_answer(tmp_path):
    """What a collector does: listing, then wanted_files, then follow_up — the answers of a local read."""
    local = DirectoryTree(build_vllm(tmp_path, "0.20.1"))
    listing = local.listing()
    want = wanted_files("vllm", listing, QWEN36)
    assert "vllm/v1/worker/gpu_model_runner.py" in want and "vllm/config/vllm.py" in want
    fetched = FetchedTree(listing, {p: local.read(p) for p in want})
    fetched.add({p: local.read(p) for p in follow_up("vllm", fetched, QWEN36)})
    a = analyse(fetched, "vllm", QWEN36)
    assert a.layer_map["V1"].value == "raw" and a.layer_map["V1"].certain
    assert a.version.value == "0.20.1"


def test_a_file_that_does_not_parse_is_could_not_decide(tmp_path):
    root = build_vllm(tmp_path, "0.20.1")
    (root / "vllm/v1/worker/gpu_model_runner.py").write_text("def broken(:\n")
    a = analyse(DirectoryTree(root), target_architectures=QWEN36)
    assert a.layer_map["V1"].certainty == UNDECIDED
