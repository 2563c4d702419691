"""The engine's own failure lines as evidence (parse/engine_failures.py, check engine-failure), without an
engine: the lines are written here in the wording the engines' source prints (tests/live sees the real ones)."""

from __future__ import annotations

import json
from datetime import datetime

from dflash_doctor.parse.engine_failures import classify, find_failures, read_failures
from tests.conftest import run_cli
from tests.hosts.fakedeploy import spec_line

API = "(APIServer pid=4242)"
CORE = "(EngineCore pid=4300)"


def _startup(method="draft_model", drafter="/srv/models/small", version="0.32.0"):
    spec = {"method": method, "model": drafter, "num_speculative_tokens": 3}
    return [
        f"{API} INFO 12-06 02:52:16 [api_utils.py:347]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version {version}",
        f"{API} INFO 12-06 02:52:16 [api_utils.py:286] non-default args: {{'model_tag': '/srv/models/big', "
        f"'model': '/srv/models/big', 'speculative_config': {spec!r}}}",
    ]


def test_each_kind_is_recognised_in_the_engines_wording():
    cases = {
        "importlib.metadata.PackageNotFoundError: No package metadata was found for vllm": ("no-dist-metadata", "vllm"),
        "RuntimeError: Failed to infer device type": ("device-type", ""),
        "  Value error, Model architectures ['DFlashQwen3ForCausalLM'] are not supported for now. Supported": (
            "unsupported-arch",
            "'DFlashQwen3ForCausalLM'",
        ),
        f"{CORE} RuntimeError: mat1 and mat2 shapes cannot be multiplied (14x512 and 768x256)": (
            "shape-mismatch",
            "14x512 and 768x256",
        ),
        f"{CORE} ValueError: too many values to unpack (expected 3)": (
            "shape-mismatch",
            "too many values to unpack (expected 3)",
        ),
        "ModuleNotFoundError: No module named 'triton'": ("no-triton", ""),
        "  Value error, Model Runner V1 does not support: mixed sliding/full dflash drafts [type=value_error, in": (
            "runner-refused",
            "V1 does not support: mixed sliding/full dflash drafts",
        ),
        f"{API} RuntimeError: Engine core initialization failed. See root cause above.": ("start-failed", ""),
    }
    for line, (kind, detail) in cases.items():
        f = classify(line)
        assert f is not None and (f.kind, f.detail) == (kind, detail), (line, f)


def test_ordinary_lines_and_a_shutdown_are_not_failures():
    lines = [
        f"{API} INFO 12-06 02:53:30 [launcher.py:195] Route: /version, Methods: GET",
        f"{API} ERROR 12-06 02:53:37 [async_llm.py:906] vllm.v1.engine.exceptions.EngineDeadError: EngineCore "
        "encountered an issue. See stack trace (above) for the root cause.",
        f"{API} WARNING 12-06 03:16:10 [cpu.py:224] Triton is not installed. triton-cpu is expected on x86 CPUs.",
        "a user prompt mentioning PackageNotFoundError in passing",
    ]
    assert find_failures(lines) == []


def test_one_per_kind_and_detail_in_order_with_line_numbers(tmp_path):
    lines = [
        *_startup(),
        "Traceback (most recent call last):",
        "importlib.metadata.PackageNotFoundError: No package metadata was found for vllm",
        "importlib.metadata.PackageNotFoundError: No package metadata was found for vllm",
    ]
    found = find_failures(lines)
    assert [(f.kind, f.lineno) for f in found] == [("no-dist-metadata", 4)]
    log = tmp_path / "server.log"
    log.write_text("x\n" * 300_000 + "\n".join(lines) + "\n")
    tail = read_failures(str(log), head=1024, tail=4096)
    assert [(f.kind, f.lineno) for f in tail] == [("no-dist-metadata", None)]


def _diagnose(*args):
    res = run_cli("diagnose", *args, "--format", "json")
    return res.returncode, json.loads(res.stdout)


def test_a_repackaged_build_run_through_its_cli_is_a_launch_cause(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(
        "\n".join(
            [
                "Traceback (most recent call last):",
                '  File "/opt/venv/bin/vllm", line 10, in <module>',
                "importlib.metadata.PackageNotFoundError: No package metadata was found for vllm",
            ]
        )
        + "\n"
    )
    rc, doc = _diagnose("--log", str(log))
    fails = [f for f in doc["findings"] if f["check"] == "engine-failure"]
    assert fails and fails[0]["status"] == "fail" and "repackaged build" in fails[0]["message"]
    assert doc["causes"][0]["id"] == "launch-config", [(c["id"], c["confidence"]) for c in doc["causes"]]


def test_a_log_with_metrics_is_not_searched_for_failures(tmp_path):
    log = tmp_path / "server.log"
    t = datetime(2026, 12, 6, 2, 53, 33)
    log.write_text(
        "\n".join([*_startup(), "RuntimeError: Failed to infer device type", spec_line(t, (0.9, 0.8, 0.7), 300)]) + "\n"
    )
    rc, doc = _diagnose("--log", str(log))
    assert [f["status"] for f in doc["findings"] if f["check"] == "engine-failure"] == ["not-applicable"]
    assert "engine-failures" not in {e["kind"] for e in doc["evidence"]}
