"""Launch commands in the forms users paste them (parse/launch_paste.py, parse/launch.py): each read as the server's
own words, with the engine, release, model, method, drafter and k the server ran. Commands written by us from the
engines' documented flags (vLLM's `--json-arg.key` form and short aliases, SGLang's argparse prefixes and tree
flags, trtllm-serve's options file, docker/compose/Kubernetes container specs)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dflash_doctor.parse.formats.sglang_decode import sglang_k
from dflash_doctor.parse.launch import LaunchParseError, parse_launch_text
from dflash_doctor.redact import REDACTED

SPEC = '{"method": "eagle3", "model": "org/Q-eagle3", "num_speculative_tokens": 4}'


def _facts(text: str) -> tuple:
    lc = parse_launch_text(text)
    return lc.engine, lc.image_version, lc.model, lc.method, lc.drafter, lc.num_speculative_tokens


def test_docker_run_names_engine_release_and_entry_point():
    text = (
        "docker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface \\\n"
        '  --env "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123" -p 8000:8000 --ipc=host -itd \\\n'
        f"  vllm/vllm-openai:v0.11.0 --model org/Q --speculative-config '{SPEC}' -tp 2"
    )
    lc = parse_launch_text(text)
    assert _facts(text) == ("vllm", "0.11.0", "org/Q", "eagle3", "org/Q-eagle3", 4)
    assert lc.image == "vllm/vllm-openai:v0.11.0"
    assert lc.args["tensor_parallel_size"] == "2"
    assert lc.env == {"HF_TOKEN": REDACTED}  # the container's environment, its secret hidden
    assert "hf_abcdefghij" not in json.dumps(lc.__dict__, default=str)
    # the positional model after the image (the image runs `vllm serve`); a `latest` tag names no release
    assert _facts(f"docker run vllm/vllm-openai:latest org/Q --speculative-config '{SPEC}'")[:3] == (
        "vllm",
        None,
        "org/Q",
    )
    # a command of its own after the image replaces the entry point
    assert _facts(
        "podman run --rm lmsysorg/sglang:v0.5.4-cu126 python3 -m sglang.launch_server --model-path org/Q "
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path org/D --speculative-num-steps 3 "
        "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
    ) == ("sglang", "0.5.4", "org/Q", "eagle3", "org/D", 3)


def test_llama_cpp_server_image():
    lc = parse_launch_text(
        "docker run -p 8080:8080 -v /models:/models ghcr.io/ggml-org/llama.cpp:server-cuda "
        "-m /models/t.gguf -md /models/d.gguf --draft-max 16 -ngl 99"
    )
    assert (lc.engine, lc.model, lc.method, lc.drafter, lc.num_speculative_tokens) == (
        "llama.cpp",
        "/models/t.gguf",
        "draft_model",
        "/models/d.gguf",
        16,
    )
    assert lc.image_version is None  # its tags name a build, not a release the tables know


COMPOSE = f"""
services:
  vllm:
    image: vllm/vllm-openai:v0.10.2
    environment:
      - HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123
    command:
      - --model
      - org/Q
      - --speculative-config
      - '{SPEC}'
      - --tensor-parallel-size
      - "2"
"""

KUBE = f"""
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.12.0
          command: ["vllm", "serve"]
          args:
            - "org/Q"
            - "--tensor-parallel-size=4"
            - "--speculative-config"
            - '{SPEC}'
          env:
            - name: HF_TOKEN
              value: hf_abcdefghijklmnopqrstuvwxyz0123
"""


@pytest.mark.parametrize(("text", "version", "tp"), [(COMPOSE, "0.10.2", "2"), (KUBE, "0.12.0", "4")])
def test_compose_and_kubernetes_specs(text, version, tp):
    lc = parse_launch_text(text)
    assert _facts(text) == ("vllm", version, "org/Q", "eagle3", "org/Q-eagle3", 4)
    assert lc.spec_error is None and lc.args["tensor_parallel_size"] == tp
    assert lc.env["HF_TOKEN"] == REDACTED


def test_compose_shell_string_command_and_bare_list():
    text = f"""services:
  sd:
    image: vllm/vllm-openai:v0.20.1
    entrypoint: ["/bin/bash", "-c"]
    command:
      - |
        vllm serve org/Q --speculative-config '{SPEC}'
"""
    assert _facts(text) == ("vllm", "0.20.1", "org/Q", "eagle3", "org/Q-eagle3", 4)
    flow = json.dumps(["vllm", "serve", "org/Q", "--speculative-config", SPEC])
    assert _facts(flow) == ("vllm", None, "org/Q", "eagle3", "org/Q-eagle3", 4)


def test_markdown_wrappers_and_chained_shell():
    text = f"""```bash
$ cd /srv && HF_HOME=/data vllm serve org/Q --enforce-eager --speculative-config '{SPEC}' > vllm.log 2>&1 &
```"""
    lc = parse_launch_text(text)
    assert _facts(text)[2:] == ("org/Q", "eagle3", "org/Q-eagle3", 4)
    assert lc.args["enforce_eager"] is True and lc.stray == ()
    quoted = f"> vllm serve org/Q \\\n> --speculative-config '{SPEC}'"
    assert _facts(quoted)[2:] == ("org/Q", "eagle3", "org/Q-eagle3", 4)


def test_switch_before_positional_model():
    lc = parse_launch_text(f"vllm serve --trust-remote-code org/Q --speculative-config '{SPEC}'")
    assert lc.model == "org/Q" and lc.args["trust_remote_code"] is True


def test_vllm_dotted_json_arg_and_short_aliases():
    lc = parse_launch_text(
        "vllm serve org/Q --speculative-config.method eagle3 --speculative-config.model org/Q-eagle3 "
        "--speculative-config.num_speculative_tokens 4 -tp=2 -dp 2"
    )
    assert (lc.method, lc.drafter, lc.num_speculative_tokens) == ("eagle3", "org/Q-eagle3", 4)
    assert lc.speculative == {"method": "eagle3", "model": "org/Q-eagle3", "num_speculative_tokens": 4}
    assert lc.args["tensor_parallel_size"] == "2" and lc.args["data_parallel_size"] == "2"


@pytest.mark.parametrize(
    ("flags", "method", "k"),
    [
        # SGLang's docs' EAGLE tree: 3 steps deep, 4 wide, 16 nodes verified: at most 3 tokens a step
        (
            "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 4 "
            "--speculative-num-draft-tokens 16",
            "eagle",
            3,
        ),
        (
            "--speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 4",
            "eagle3",
            3,
        ),
        (
            "--speculative-algorithm STANDALONE --speculative-num-steps 4 --speculative-eagle-topk 2 "
            "--speculative-num-draft-tokens 7",
            "standalone",
            4,
        ),
        ("--speculative-algorithm DFLASH --speculative-num-draft-tokens 16", "dflash", 15),
        # argparse's unique prefixes
        ("--speculative-algo NEXTN --speculative-num-steps 3 --speculative-num-draft 4", "nextn", 3),
    ],
)
def test_sglang_k_is_the_depth_a_step_can_accept(flags, method, k):
    lc = parse_launch_text(f"python3 -m sglang.launch_server --model-path org/Q {flags}")
    assert (lc.engine, lc.method, lc.num_speculative_tokens) == ("sglang", method, k)


def test_sglang_k_rule():
    assert sglang_k("EAGLE", 3, 16) == 3
    assert sglang_k("eagle3", 5, 4) == 3  # a chain verifies at most draft tokens - 1
    assert sglang_k("DFLASH", None, 16) == 15
    assert sglang_k("EAGLE", None, 4) == 3
    assert sglang_k(None, 2, None) == 2
    assert sglang_k("EAGLE", True, "16") is None


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "trtllm-serve org/Q --backend pytorch --tp_size 1 --extra_llm_api_options extra.yaml",
            "--extra_llm_api_options extra.yaml",
        ),
        ("vllm serve org/Q --config serve.yaml", "--config serve.yaml"),
    ],
)
def test_config_kept_in_a_file_is_not_taken_for_spec_decode_off(text, where):
    lc = parse_launch_text(text)
    assert lc.speculative is None and lc.spec_elsewhere == where and lc.model == "org/Q"


def test_non_default_args_line_pasted_as_the_launch():
    text = (
        "(APIServer pid=1) INFO 10-12 10:00:00 [utils.py:233] non-default args: {'model_tag': 'org/Q', "
        "'model': 'org/Q', 'api_key': ['sk-abcdefghijklmnop0123'], 'tensor_parallel_size': 2, "
        "'speculative_config': {'method': 'eagle3', 'model': 'org/Q-eagle3', 'num_speculative_tokens': 4}}"
    )
    lc = parse_launch_text(text)
    assert _facts(text) == ("vllm", None, "org/Q", "eagle3", "org/Q-eagle3", 4)
    assert "sk-abcdefghijklmnop0123" not in json.dumps(lc.__dict__, default=str)
    # (read by the log's own startup reader: SGLang's server_args line too, and behind a Markdown quote)
    sglang = (
        "[2026-01-15 08:00:00] server_args=ServerArgs(model_path='org/Q', speculative_algorithm='EAGLE3', "
        "speculative_draft_model_path='org/D', speculative_num_steps=3, speculative_eagle_topk=1, "
        "speculative_num_draft_tokens=4)"
    )
    assert _facts(sglang) == ("sglang", None, "org/Q", "eagle3", "org/D", 3)
    assert _facts("> " + text) == _facts(text)


def test_json_invalid_in_itself_is_not_blamed_on_the_shell():
    lc = parse_launch_text('vllm serve org/Q --speculative-config \'{"method": "eagle3", "model": "D",}\'')
    assert lc.spec_error is not None and "wrap the whole JSON" not in lc.spec_error
    assert "the text itself is not JSON" in lc.spec_error
    split = parse_launch_text('vllm serve org/Q --speculative-config {"method": "eagle3"}')
    assert "wrap the whole JSON in single quotes" in (split.spec_error or "")


def test_server_default_temperature_from_each_engine():
    from dflash_doctor.models.launch_view import server_default_temperature as temp

    assert temp(parse_launch_text("vllm serve Q --override-generation-config '{\"temperature\": 0.6}'")) == 0.6
    assert (
        temp(
            parse_launch_text(
                "python3 -m sglang.launch_server --model-path Q --preferred-sampling-params '{\"temperature\": 0.7}'"
            )
        )
        == 0.7
    )
    assert temp(parse_launch_text("llama-server -m t.gguf -md d.gguf --temp 0")) == 0.0
    assert temp(parse_launch_text("llama-server -hf org/T-GGUF -hfd org/D-GGUF")) is None


def test_unreadable_forms_are_one_line_errors():
    with pytest.raises(LaunchParseError, match="names no image"):
        parse_launch_text("docker run --rm -p 8000:8000")
    with pytest.raises(LaunchParseError, match="quotes"):
        parse_launch_text("vllm serve 'org/Q")
    with pytest.raises(LaunchParseError, match="not valid YAML"):
        parse_launch_text('services:\n  a:\n    command: ["x" "y"]\n  - b')


def test_diagnose_compose_launch_is_not_a_broken_config(tmp_path):
    """The compose file that read as a broken `--speculative-config` (launch-config 0.73, problem, exit 1) now reads
    as the eagle3 config it is; the image's release drives the known issues."""
    f = tmp_path / "compose.yaml"
    f.write_text(COMPOSE)
    out = subprocess.run(
        [sys.executable, "-m", "dflash_doctor", "diagnose", "--launch", f"@{f}", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    rep = json.loads(out.stdout)
    lc = next(c for c in rep["findings"] if c["check"] == "launch-config")
    assert lc["status"] == "ok", lc
    assert "eagle3" in lc["message"] and "hf_abcdefghij" not in out.stdout
    engine = next(e["value"] for e in rep["evidence"] if e["kind"] == "engine")
    assert (engine["name"], engine["version"]) == ("vllm", "0.10.2") and "image tag" in engine["version_from"]
    assert any("0.10.2" in " ".join(c["details"]) for c in rep["findings"] if c["check"] == "known-issues")


def test_hostile_yaml_is_bounded():
    """Aliases that make a few lines a graph of 4^20 paths are walked once each; absurd nesting is a one-line error."""
    bomb = "a: &a [x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20)
    )
    assert parse_launch_text(bomb + "svc:\n  command: [vllm, serve, org/Q]\n").model == "org/Q"
    with pytest.raises(LaunchParseError, match="not valid YAML"):
        parse_launch_text("command: " + "[" * 100_000 + "]" * 100_000)
