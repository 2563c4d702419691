"""layer-offset: captured hidden states are matched to the HF index they came from, with a margin."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from safetensors.torch import save_file  # noqa: E402

from dflash_doctor.errors import UsageError  # noqa: E402
from dflash_doctor.probe.layer_offset import match_dump, read_dump  # noqa: E402
from dflash_doctor.probe.target import load_target  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402

pytestmark = pytest.mark.torch
TINY = FIXTURES / "tiny"
IDS = [1, 2]  # the tiny drafter's target_layer_ids -> expected HF indices 2, 3


@pytest.fixture(scope="module")
def target():
    return load_target(str(TINY / "target"), "cpu", torch.float32)


@pytest.fixture(scope="module")
def prompt():
    return json.loads((TINY / "prompts.jsonl").read_text().splitlines()[5])["input_ids"]


def make_dump(path, target, prompt, shift: int, dtype=torch.float32):
    """What an engine capturing at layer_id + 1 + shift would write."""
    ids = torch.tensor(prompt)
    _, hs = target.forward(ids[None], None)
    tensors = {"input_ids": ids}
    for j, i in enumerate(IDS):
        tensors[f"hidden_states.{j}"] = hs[i + 1 + shift][0].to(dtype).contiguous()
    save_file(tensors, str(path))
    return path


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_injected_offsets_are_identified_exactly(tmp_path, target, prompt, shift):
    ids, taps = read_dump(make_dump(tmp_path / "d.safetensors", target, prompt, shift))
    r = match_dump(target, ids, taps, IDS)
    assert [t["hf_index"] for t in r["taps"]] == [i + 1 + shift for i in IDS]
    assert r["offset"] == shift
    for t in r["taps"]:
        assert t["cosine"] > 0.9999 and t["margin"] > 0.01 and t["matched"]


def test_bf16_rounded_dump_is_still_identified(tmp_path, target, prompt):
    ids, taps = read_dump(make_dump(tmp_path / "d.safetensors", target, prompt, -1, torch.bfloat16))
    r = match_dump(target, ids, taps, IDS)
    assert r["offset"] == -1
    for t in r["taps"]:
        assert t["cosine"] > 0.999 and t["margin"] > 0.01 and t["error_ratio"] > 10
    assert "the output of layer 0" in r["explanation"][0] and "trained on layer 1" in r["explanation"][0]


def test_vllm_extract_hidden_states_file_is_read(tmp_path, target, prompt):
    ids = torch.tensor(prompt)
    _, hs = target.forward(ids[None], None)
    stacked = torch.stack([hs[2][0], hs[3][0]], dim=1).to(torch.bfloat16)  # [T, layers, hidden]
    save_file({"token_ids": ids, "hidden_states": stacked.contiguous()}, str(tmp_path / "req.safetensors"))
    r = match_dump(target, *read_dump(tmp_path / "req.safetensors"), IDS)
    assert r["offset"] == 0 and [t["hf_index"] for t in r["taps"]] == [2, 3]


def test_taps_that_disagree_give_no_offset(tmp_path, target, prompt):
    ids = torch.tensor(prompt)
    _, hs = target.forward(ids[None], None)
    save_file(
        {"input_ids": ids, "hidden_states.0": hs[2][0].contiguous(), "hidden_states.1": hs[4][0].contiguous()},
        str(tmp_path / "d.safetensors"),
    )
    r = match_dump(target, *read_dump(tmp_path / "d.safetensors"), IDS)
    assert r["offset"] is None and "disagree" in r["offset_note"]


def test_noise_matches_nothing(tmp_path, target, prompt):
    g = torch.Generator().manual_seed(0)
    save_file(
        {"input_ids": torch.tensor(prompt), "hidden_states.0": torch.randn(len(prompt), 64, generator=g)},
        str(tmp_path / "d.safetensors"),
    )
    r = match_dump(target, *read_dump(tmp_path / "d.safetensors"), [1])
    assert not r["taps"][0]["matched"] and r["offset"] is None


@pytest.mark.parametrize("body", [b"", b"\x00" * 64, b"not a safetensors file at all"])
def test_bad_dump_is_a_usage_error(tmp_path, body):
    p = tmp_path / "bad.safetensors"
    p.write_bytes(body)
    with pytest.raises(UsageError):
        read_dump(p)


def test_dump_with_mismatched_lengths_is_a_usage_error(tmp_path):
    save_file({"input_ids": torch.arange(5), "hidden_states.0": torch.zeros(4, 64)}, str(tmp_path / "d.safetensors"))
    with pytest.raises(UsageError, match="hidden_states.0"):
        read_dump(tmp_path / "d.safetensors")


def test_cli_layer_offset_json(cli, tmp_path, target, prompt):
    dump = make_dump(tmp_path / "d.safetensors", target, prompt, -1, torch.bfloat16)
    res = cli(
        "layer-offset",
        "--target",
        str(TINY / "target"),
        "--dump",
        str(dump),
        "--drafter",
        str(TINY / "drafter"),
        "--device",
        "cpu",
        "--format",
        "json",
        timeout=300,
    )
    assert res.returncode == 1, res.stderr  # an offset was found: a problem
    r = json.loads(res.stdout)
    assert r["offset"] == -1
    assert [t["hf_index"] for t in r["taps"]] == [1, 2]
    assert all(set(t) >= {"tensor", "hf_index", "cosine", "margin"} for t in r["taps"])


def test_cli_layer_offset_text_names_the_layers(cli, tmp_path, target, prompt):
    dump = make_dump(tmp_path / "d.safetensors", target, prompt, +1)
    res = cli(
        "layer-offset",
        "--target",
        str(TINY / "target"),
        "--dump",
        str(dump),
        "--drafter",
        str(TINY / "drafter"),
        "--device",
        "cpu",
        timeout=300,
    )
    assert res.returncode == 1, res.stderr
    assert "offset: 1" in res.stdout
    assert "final-normed output" in res.stdout  # index 4 of a 4-layer target is after the model norm
    assert "trained on layer 2 (HF index 3)" in res.stdout
