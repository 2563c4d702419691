"""`dflash-doctor inspect-model` end to end, as a user runs it."""

from __future__ import annotations

import json
import struct

import pytest

from .helpers import hf_cache_repo, write_config

M = "fixtures/models/"


def inspect(cli, fixtures_dir, *args, env=None):
    args = [str(fixtures_dir / "models" / a[len(M) :]) if a.startswith(M) else a for a in args]
    return cli("inspect-model", *args, env=env)


def test_seed_pair_on_vllm_0_20_1_names_the_sliding_layers_and_that_they_run_full(cli, fixtures_dir):
    r = inspect(cli, fixtures_dir, M + "Qwen3.6-27B-DFlash", "--target", M + "Qwen3.6-27B", "--engine", "vllm==0.20.1")
    assert r.returncode == 1, r.stderr
    out = " ".join(r.stdout.split())
    assert "layers 0–3 are sliding (window 2048), but vllm 0.20.1 runs every drafter layer as full attention" in out
    assert "sliding windows on layers 0–3 (window 2048): run as full attention" in out
    assert "passes target_layer_ids raw" in out
    assert "still under training" in out
    assert "Traceback" not in r.stderr


def test_seed_pair_json_has_the_documented_keys(cli, fixtures_dir):
    r = inspect(
        cli,
        fixtures_dir,
        M + "Qwen3.6-27B-DFlash",
        "--target",
        M + "Qwen3.6-27B",
        "--engine",
        "vllm==0.20.1",
        "--num-speculative-tokens",
        "15",
        "--format",
        "json",
    )
    js = json.loads(r.stdout)
    for key in (
        "method",
        "block_size",
        "mask_token_id",
        "target_layer_ids",
        "hf_hidden_state_indices",
        "layers",
        "swa_layers",
        "sliding_window",
        "warnings",
        "findings",
    ):
        assert key in js
    assert js["method"] == "dflash" and js["block_size"] == 16 and js["mask_token_id"] == 248070
    assert js["target_layer_ids"] == [1, 16, 31, 46, 61] and js["hf_hidden_state_indices"] == [2, 17, 32, 47, 62]
    assert js["swa_layers"] == [0, 1, 2, 3] and js["sliding_window"] == 2048
    assert js["layers"][0] == {"index": 0, "attention": "sliding", "window": 2048, "causal": True}
    assert js["layers"][4] == {"index": 4, "attention": "full", "window": None, "causal": False}
    swa = [f for f in js["findings"] if f["check"] == "engine-drafter-swa"][0]
    assert swa["status"] == "fail" and {o["name"] for o in swa["observations"]} == {"engine-swa:ignored"}
    k = [f for f in js["findings"] if f["check"] == "spec-tokens-vs-block"][0]
    assert k["status"] == "ok" and js["num_speculative_tokens"] == 15
    assert js["target"]["text_config_nested"] and js["target"]["rope"]["partial_rotary_factor"] == 0.25


def test_qwen3_8b_pair_is_all_full_attention_and_pairs_correctly(cli, fixtures_dir):
    r = inspect(
        cli,
        fixtures_dir,
        M + "Qwen3-8B-DFlash-b16",
        "--target",
        M + "Qwen3-8B",
        "--engine",
        "vllm==0.22.0",
        "--format",
        "json",
    )
    js = json.loads(r.stdout)
    assert js["swa_layers"] == [] and {la["attention"] for la in js["layers"]} == {"full"}
    pairing = [f for f in js["findings"] if f["check"] == "drafter-target-pairing"][0]
    assert pairing["status"] == "ok" and pairing["observations"][0]["name"] == "pairing:ok"
    assert r.returncode == 0, [f for f in js["findings"] if f["status"] == "fail"]
    text = inspect(cli, fixtures_dir, M + "Qwen3-8B-DFlash-b16", "--target", M + "Qwen3-8B").stdout
    assert "all 5 drafter layers are full attention" in text and "drafter fits this target" in text


def test_markdown_output(cli, fixtures_dir):
    r = inspect(cli, fixtures_dir, M + "Qwen3.6-27B-DFlash", "--engine", "vllm==0.20.1", "--format", "markdown")
    assert r.returncode == 1 and "| 0 | sliding | 2048 | causal |" in r.stdout


def test_wrong_target_exits_1_with_the_mismatch(cli, fixtures_dir):
    r = inspect(cli, fixtures_dir, M + "Qwen3-8B-DFlash-b16", "--target", M + "Qwen3-4B")
    assert r.returncode == 1 and "drafter does not fit this target" in r.stdout


@pytest.mark.parametrize(
    "content, says",
    [
        ("{oops", "not valid JSON"),
        ("[1, 2]", "not an object"),
    ],
)
def test_bad_config_is_one_line_and_exit_2(cli, tmp_path, content, says):
    write_config(tmp_path / "d", content)
    r = cli("inspect-model", str(tmp_path / "d"))
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr and r.stdout == ""


def test_hostile_safetensors_header_is_a_finding_not_a_crash(cli, tmp_path):
    write_config(tmp_path / "d", {"architectures": ["DFlashDraftModel"], "num_hidden_layers": 1, "hidden_size": 8})
    (tmp_path / "d" / "model.safetensors").write_bytes(struct.pack("<Q", 10 * 10**9) + b"{}")
    r = cli("inspect-model", str(tmp_path / "d"), "--format", "json")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    w = [f for f in json.loads(r.stdout)["findings"] if f["check"] == "drafter-weights"][0]
    assert w["status"] == "fail" and "claims 10,000,000,000 bytes" in w["message"]


def test_non_json_safetensors_header(cli, tmp_path):
    write_config(tmp_path / "d", {"architectures": ["DFlashDraftModel"], "num_hidden_layers": 1, "hidden_size": 8})
    (tmp_path / "d" / "model.safetensors").write_bytes(struct.pack("<Q", 8) + b"not json")
    r = cli("inspect-model", str(tmp_path / "d"))
    assert r.returncode == 1 and "header is not JSON" in " ".join(r.stdout.split())


def test_mistyped_and_absurd_fields_are_warnings_in_the_output(cli, tmp_path):
    write_config(
        tmp_path / "d",
        {"architectures": ["DFlashDraftModel"], "num_hidden_layers": 10**9, "hidden_size": "big", "block_size": 16},
    )
    r = cli("inspect-model", str(tmp_path / "d"), "--format", "json")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr
    warnings = " ".join(json.loads(r.stdout)["warnings"])
    assert "num_hidden_layers = 1000000000 is outside any plausible range" in warnings
    assert "hidden_size is 'big', expected an integer" in warnings


def test_repo_id_not_in_cache_exits_3_with_a_fetch_hint(cli, tmp_path):
    r = cli(
        "inspect-model", "z-lab/Qwen3.6-27B-DFlash", env={"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    )
    assert r.returncode == 3 and "not in the local Hugging Face cache" in r.stderr
    assert "hint: fetch it first" in r.stderr and "hf download z-lab/Qwen3.6-27B-DFlash" in r.stderr


def test_repo_id_in_the_cache_is_inspected(cli, fixtures_dir, tmp_path):
    src = fixtures_dir / "models" / "Qwen3.6-27B-DFlash"
    hf_cache_repo(
        tmp_path / "hub",
        "z-lab/Qwen3.6-27B-DFlash",
        {n: (src / n).read_bytes() for n in ("config.json", "README.md", "model.safetensors")},
    )
    r = cli(
        "inspect-model",
        "z-lab/Qwen3.6-27B-DFlash",
        "--format",
        "json",
        env={"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"},
    )
    assert json.loads(r.stdout)["swa_layers"] == [0, 1, 2, 3]


def test_bad_engine_spec_is_a_usage_error(cli, fixtures_dir):
    r = inspect(cli, fixtures_dir, M + "Qwen3-8B-DFlash-b16", "--engine", "vllm 0.20.1 please")
    assert r.returncode == 2 and "NAME==VERSION" in r.stderr
