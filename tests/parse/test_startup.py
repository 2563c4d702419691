"""What was launched, from the startup lines: every version-line variant, the argument reprs
(parsed with ast, never eval), SpeculativeConfig, resolved architectures, SGLang server_args."""

from __future__ import annotations

from pathlib import Path

import pytest

from dflash_doctor.parse import logscan

FIX = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.parametrize(
    "path,engine,version,method,drafter,k",
    [
        ("seed/vllm-0.20.1.log", "vllm", "0.20.1", "dflash", "z-lab/Qwen3.6-27B-DFlash", 15),  # ASCII logo
        ("logs/vllm-0.8.3.log", "vllm", "0.8.3", "eagle3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", 3),  # Namespace
        ("logs/vllm-0.7.3-v0.log", "vllm", "0.7.3", None, "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", 4),  # old flags
        ("logs/vllm-0.11.0.log", "vllm", "0.11.0", "dflash", "z-lab/Qwen3-8B-DFlash-b16", 15),
        ("logs/vllm-0.20.1-journald.log", "vllm", "0.20.1", None, None, None),  # "serving model"
        ("logs/vllm-0.33.0.jsonl", "vllm", "0.33.0", None, None, None),  # JSON record
        # a tree 5 steps deep (topk 8, 9 draft tokens): at most 5 draft tokens accepted a step
        ("logs/sglang-0.5.8.log", "sglang", None, "eagle3", "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B", 5),
        ("logs/sglang-0.5.23.log", "sglang", None, "dflash", "z-lab/Qwen3-8B-DFlash-b16", 15),  # dict form
    ],
)
def test_startup_facts(path, engine, version, method, drafter, k):
    st = logscan.scan(str(FIX / path)).startup
    assert (st.engine, st.version, st.method, st.drafter, st.num_speculative_tokens) == (
        engine,
        version,
        method,
        drafter,
        k,
    )


def test_architectures_and_models():
    st = logscan.scan(str(FIX / "seed" / "vllm-0.20.1.log")).startup
    assert st.architectures == ("Qwen3_5ForConditionalGeneration", "DFlashDraftModel")
    assert st.model == "Qwen/Qwen3.6-27B"


def test_speculative_config_repr_alone():
    line = (
        "INFO 05-14 09:11:57 [core.py:93] Initializing a V1 LLM engine (v0.11.0) with config: model='Q/Q3-8B', "
        "speculative_config=SpeculativeConfig(method='dflash', model='z-lab/Qwen3-8B-DFlash-b16', "
        "num_spec_tokens=15), tokenizer='Q/Q3-8B'"
    )
    st = logscan.scan(logscan.Lines([line], "x.log")).startup
    assert (st.version, st.method, st.drafter, st.num_speculative_tokens) == (
        "0.11.0",
        "dflash",
        "z-lab/Qwen3-8B-DFlash-b16",
        15,
    )


def test_secrets_in_args_are_redacted():
    for path in ("seed/vllm-0.20.1.log", "logs/vllm-0.8.3.log", "logs/vllm-0.9.2.log", "logs/sglang-0.5.8.log"):
        st = logscan.scan(str(FIX / path)).startup
        text = repr(st.args) + "\n".join(st.lines)
        for secret in (
            "sk-live-7f3c9a1e5b2d4f6a8c0e",
            "sk-test-0123456789abcdef0123",
            "hf_abcdefghijklmnopqrstuvwxyz0123",
            "sk-sglang-abcdefghijklmnop",
        ):
            assert secret not in text, path


def test_argument_reprs_are_never_evaluated(tmp_path):
    marker = tmp_path / "pwned"
    line = (
        "INFO 05-14 09:11:52 [utils.py:189] non-default args: {'model': 'x', 'evil': "
        f"__import__('os').system('touch {marker}')}}"
    )
    ns = (
        f"INFO 04-10 01:00:00 [api_server.py:1] args: Namespace(model='y', x=__import__('os').system('touch {marker}'))"
    )
    st = logscan.scan(logscan.Lines([line, ns], "hostile.log")).startup
    assert not marker.exists()
    assert st.args.get("model") == "y"  # the literal parts of the Namespace still count
    assert "evil" not in st.args
