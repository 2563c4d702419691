"""architectures.toml: which release can load which drafter, and whether that was read or extrapolated.
Re-derived from the engines' registries when the extracted wheels are in the shared cache."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dflash_doctor.models.architectures import load, support
from tests.conformance.wheels import cache_dir

TREES = Path("/work/cache/trees")


def _trees(engine: str, v: str) -> list[Path]:
    """Where an extracted release may be: the shared cache, or the conformance suite's wheel cache."""
    return [TREES / f"{engine}-{v}", cache_dir() / "extracted" / f"{engine}-{v}"]


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


@pytest.mark.parametrize(
    "engine, version, archs, mt, loadable, words",
    [
        # an MLA EAGLE-3 drafter is looked up by its own class, not LlamaForCausalLMEagle3 (issue 28, item 6)
        ("vllm", "0.33.0", ("Eagle3DeepseekV2ForCausalLM",), "kimi_k2", True, "registers Eagle3DeepseekV2ForCausalLM"),
        ("vllm", "0.14.0", ("Eagle3DeepseekV2ForCausalLM",), "kimi_k2", False, "first registered in 0.19.0"),
        ("sglang", "0.5.22", ("Eagle3DeepseekV2ForCausalLM",), "kimi_k2", True, "since 0.5.12"),
        ("sglang", "0.5.11", ("Eagle3DeepseekV2ForCausalLM",), "kimi_k2", False, "first registered in 0.5.12"),
        ("vllm", "0.33.0", ("LlamaForCausalLMEagle3",), "llama", True, "registers LlamaForCausalLMEagle3"),
    ],
)
def test_eagle3_rows_by_the_drafters_own_class(engine, version, archs, mt, loadable, words):
    a = support(engine, version, "eagle3", mt, False, archs)
    assert a.loadable is loadable and words in a.sentence, a.sentence


@pytest.mark.parametrize(
    "engine, version, loadable, words",
    [
        ("vllm", "0.27.1", False, "MuseGlimmerAssistantModel is first registered in 0.28.0"),
        ("vllm", "0.33.0", True, "registers MuseGlimmerAssistantModel"),
        ("sglang", "0.5.17", False, "first registered in 0.5.18"),
        ("sglang", "0.5.22", True, "registers MuseGlimmerAssistantModel"),
    ],
)
def test_muse_glimmer_assistant_by_model_type(engine, version, loadable, words):
    # the quoted published config states no architectures: its model_type names it
    a = support(engine, version, "dflash", "muse_glimmer_assistant", False, ())
    assert a.loadable is loadable and words in a.sentence, a.sentence


def _vllm_registry(v: str) -> set[str] | None:
    f = next((t / "vllm/model_executor/models/registry.py" for t in _trees("vllm", v)), None)
    f = next((t / "vllm/model_executor/models/registry.py" for t in _trees("vllm", v) if (t / "vllm").is_dir()), f)
    if f is None or not f.is_file():
        return None
    for n in ast.walk(ast.parse(f.read_text())):
        tg = n.targets[0] if isinstance(n, ast.Assign) else getattr(n, "target", None)
        if getattr(tg, "id", "") == "_SPECULATIVE_DECODING_MODELS" and isinstance(n.value, ast.Dict):
            return {k.value for k in n.value.keys if isinstance(k, ast.Constant)}
    return None


def test_vllm_rows_agree_with_the_registries_read():
    rows = [r for r in load().arch if r.engine == "vllm" and r.first]
    checked = 0
    for r in rows:
        first = _vllm_registry(r.first)
        if first is None:
            continue
        assert r.name in first, r
        if r.absent_before:
            before = _vllm_registry(r.absent_before)
            if before is not None:
                assert r.name not in before, r
        checked += 1
    if not checked:
        pytest.skip("no extracted vLLM wheels in /work/cache/trees or the wheel cache")


def _sglang_entries(v: str) -> set[str] | None:
    root = next((t / "sglang/srt/models" for t in _trees("sglang", v) if (t / "sglang").is_dir()), None)
    if root is None:
        return None
    names: set[str] = set()
    for f in root.glob("*.py"):
        try:
            tree = ast.parse(f.read_text(encoding="utf-8-sig"))
        except SyntaxError:
            continue
        for n in tree.body:
            if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "EntryClass" for t in n.targets):
                vals = n.value.elts if isinstance(n.value, (ast.List, ast.Tuple)) else [n.value]
                names |= {x.id for x in vals if isinstance(x, ast.Name)}
    return names


def test_specific_rows_agree_with_the_registries_read():
    """The architecture-specific rows (issue 28) against the releases' own registries, where cached."""
    checked = 0
    for r in (r for r in load().arch if r.specific):
        read = _vllm_registry if r.engine == "vllm" else _sglang_entries
        first, before = read(r.first), read(r.absent_before)
        if first is not None:
            assert r.name in first, r
            checked += 1
        if before is not None:
            assert r.name not in before, r
    if not checked:
        pytest.skip("none of the releases named is extracted in the wheel cache")
