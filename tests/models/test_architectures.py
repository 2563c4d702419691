"""architectures.toml: which release can load which drafter, and whether that was read or extrapolated.
Re-derived from the engines' registries when the extracted wheels are in the shared cache."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dflash_doctor.models.architectures import aux_placements, load, support

TREES = Path("/work/cache/trees")


@pytest.mark.parametrize(
    "engine, version, method, mt, loadable, words",
    [
        ("vllm", "0.20.1", "dflash2", None, False, "first registered in 0.28.0"),
        ("vllm", "0.28.0", "dflash2", None, True, "since 0.28.0"),
        ("vllm", "0.40.0", "dflash", None, True, "extrapolated"),
        ("vllm", "0.33.0", "medusa", None, False, "removed after 0.32.0"),
        ("vllm", "0.20.1", "mtp", "qwen3_5_text", True, "Qwen3_5MTP"),
        ("vllm", "0.16.0", "eagle3", None, True, "interpolated"),
        ("sglang", "0.5.23", "peagle", None, False, "no sglang release read"),
        ("vllm", "0.20.2", "mtp", "mimo_v2_flash", False, "first registered in 0.21.0"),
        ("vllm", "0.29.0", "mtp", "mimo_v2_flash", True, "MiMoV2MTPModel"),
        ("sglang", "0.5.7", "mtp", "mimo_v2_flash", True, "MiMoV2MTP"),
        ("vllm", "0.29.0", "mtp", "qwen3_next", True, "Qwen3NextMTP"),
    ],
)
def test_support_sentences(engine, version, method, mt, loadable, words):
    a = support(engine, version, method, mt)
    assert a.loadable is loadable and words in a.sentence


def test_aux_placement_per_release():
    assert aux_placements("vllm", "0.20.1") == ("eagle_aux_hidden_state_layer_ids",)
    assert "eagle_config.eagle_aux_hidden_state_layer_ids" in aux_placements("vllm", "0.22.0")


def _vllm_registry(v: str) -> set[str] | None:
    f = TREES / f"vllm-{v}" / "vllm" / "model_executor" / "models" / "registry.py"
    if not f.is_file():
        return None
    for n in ast.walk(ast.parse(f.read_text())):
        tg = n.targets[0] if isinstance(n, ast.Assign) else getattr(n, "target", None)
        if getattr(tg, "id", "") == "_SPECULATIVE_DECODING_MODELS" and isinstance(n.value, ast.Dict):
            return {k.value for k in n.value.keys if isinstance(k, ast.Constant)}
    return None


def test_vllm_rows_agree_with_the_registries_read():
    rows = [r for r in load()["arch"] if r["engine"] == "vllm" and r["first"]]
    checked = 0
    for r in rows:
        first = _vllm_registry(r["first"])
        if first is None:
            continue
        assert r["name"] in first, r
        if r["absent_before"]:
            before = _vllm_registry(r["absent_before"])
            if before is not None:
                assert r["name"] not in before, r
        checked += 1
    if not checked:
        pytest.skip("no extracted vLLM wheels in /work/cache/trees")
