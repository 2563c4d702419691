"""One outcome per deployment (honoured / ignored / refused / absent), from the source and from the table alike."""

import pytest

from dflash_doctor.engines import DirectoryTree, analyse
from dflash_doctor.engines.outcome import ABSENT, HONOURED, IGNORED, NOT_APPLICABLE, REFUSED, Deployment, decide
from dflash_doctor.engines.table import from_row
from dflash_doctor.models.engine_support import lookup
from tests.engines.synth import build_vllm

QWEN36 = ("Qwen3_5ForConditionalGeneration",)
MIXED = dict(
    drafter_architectures=("DFlashDraftModel",),
    drafter_method="dflash",
    swa_mix="mixed",
    target_architectures=QWEN36,
    target_hybrid=True,
    env_known=True,
)


def env(value):
    return {} if value is None else {"VLLM_USE_V2_MODEL_RUNNER": value}


# (release, VLLM_USE_V2_MODEL_RUNNER, outcome, runner) for a mixed 4 sliding + 1 full drafter on a Qwen3.6 target
CASES = [
    ("0.19.1", None, ABSENT, None),
    ("0.20.1", None, IGNORED, "V1"),
    ("0.20.1", "1", REFUSED, "V2"),  # the V2 runner's method list has no 'dflash'
    ("0.22.0", None, IGNORED, "V1"),
    ("0.24.0", "1", IGNORED, "V2"),
    ("0.25.0", None, REFUSED, "V1"),  # any mixed drafter, whatever the runner
    ("0.25.0", "1", REFUSED, "V2"),
    ("0.26.0", None, HONOURED, "V2"),  # the engine forces V2 for a mixed drafter
    ("0.26.0", "0", REFUSED, "V1"),  # an explicit 0 wins, and V1 refuses it at load
    ("0.29.0", "0", REFUSED, "V1"),  # rejected at config time
    ("0.29.0", None, HONOURED, "V2"),  # V2 is the default
]


@pytest.mark.parametrize("version,value,outcome,runner", CASES)
def test_source_outcome(tmp_path, version, value, outcome, runner):
    a = analyse(DirectoryTree(build_vllm(tmp_path, version)), target_architectures=QWEN36)
    o = decide(a, Deployment(env=env(value), **MIXED))
    assert (o.value, o.runner) == (outcome, runner), o.sentence
    if outcome == REFUSED:
        assert o.error and o.works  # the engine's own text, and the launch that works


@pytest.mark.parametrize("version,value,outcome,runner", CASES)
def test_table_outcome_is_the_same(version, value, outcome, runner):
    o = decide(from_row(lookup("vllm", version), QWEN36), Deployment(env=env(value), **MIXED))
    assert (o.value, o.runner) == (outcome, runner), o.sentence


def test_refusal_texts_are_the_engines(tmp_path):
    a = analyse(DirectoryTree(build_vllm(tmp_path, "0.26.0")), target_architectures=QWEN36)
    o = decide(a, Deployment(env=env("0"), **MIXED))
    assert "VLLM_USE_V2_MODEL_RUNNER=1" in o.error and "unset VLLM_USE_V2_MODEL_RUNNER" in o.works


def test_an_unparseable_variable_stops_the_server(tmp_path):
    a = analyse(DirectoryTree(build_vllm(tmp_path, "0.26.0")), target_architectures=QWEN36)
    o = decide(a, Deployment(env=env("true"), **MIXED))
    assert o.value == REFUSED and "int()" in o.error


def test_a_drafter_without_sliding_layers_is_not_applicable(tmp_path):
    a = analyse(DirectoryTree(build_vllm(tmp_path, "0.20.1")), target_architectures=QWEN36)
    o = decide(a, Deployment(**{**MIXED, "swa_mix": "none"}))
    assert o.value == NOT_APPLICABLE and o.layer_map.value == "raw"


def test_an_unregistered_drafter_architecture_is_absent(tmp_path):
    a = analyse(DirectoryTree(build_vllm(tmp_path, "0.26.0")), target_architectures=QWEN36)
    o = decide(a, Deployment(**{**MIXED, "drafter_architectures": ("DFlash2DraftModel",)}))
    assert o.value == ABSENT and "DFlash2DraftModel" in o.sentence


def test_unknown_drafter_layers_are_could_not_decide(tmp_path):
    a = analyse(DirectoryTree(build_vllm(tmp_path, "0.26.0")), target_architectures=QWEN36)
    assert not decide(a, Deployment(**{**MIXED, "swa_mix": None})).decided
