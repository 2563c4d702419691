"""What the live engines revealed, tested without an engine (tests/live runs the real ones): a standalone
drafter that never agrees with its target, the drafter-path trap of vLLM 0.20.1–0.33, the server's default
temperature, and a run whose only acceptance evidence is the /metrics counters."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from checks.launch_drafter_path import path_trap
from dflash_doctor.evidence.payloads import LaunchConfig
from dflash_doctor.models.launch_view import server_default_temperature
from tests.conftest import run_cli
from tests.hosts.fakedeploy import spec_line

API = "(APIServer pid=4242)"


def _qwen3(path, seed_hidden=256):
    path.mkdir(parents=True)
    cfg = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": seed_hidden,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "intermediate_size": 512,
        "vocab_size": 1024,
        "max_position_embeddings": 2048,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
    }
    (path / "config.json").write_text(json.dumps(cfg))
    return path


def _log(path, drafter, curve, version="0.32.0", method="draft_model", intervals=8, drafts=60):
    spec = {"method": method, "model": str(drafter), "num_speculative_tokens": len(curve)}
    t = datetime(2026, 12, 6, 2, 52, 16)
    lines = [
        f"{API} INFO 12-06 02:52:16 [api_utils.py:347]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version {version}",
        f"{API} INFO 12-06 02:52:16 [api_utils.py:286] non-default args: {{'model_tag': '/srv/m/target', "
        f"'model': '/srv/m/target', 'speculative_config': {spec!r}}}",
    ]
    lines += [spec_line(t + timedelta(seconds=2 * i), curve, drafts, pid=4242) for i in range(1, intervals + 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _diagnose(*args):
    res = run_cli("diagnose", *args, "--format", "json")
    return res.returncode, json.loads(res.stdout)


def _causes(doc):
    return [(c["id"], c["confidence"]) for c in doc["causes"]]


def _finding(doc, check):
    return next(f for f in doc["findings"] if f["check"] == check)


def test_a_dead_standalone_drafter_is_the_pairing_not_the_engine(tmp_path):
    target, drafter = _qwen3(tmp_path / "target"), _qwen3(tmp_path / "small")
    log = _log(tmp_path / "s.log", drafter, (0.0, 0.0, 0.0))
    rc, doc = _diagnose("--log", str(log), "--drafter", str(drafter), "--target", str(target))
    assert _finding(doc, "launch-method")["status"] == "ok"  # a whole LM under draft_model
    assert _finding(doc, "standalone-drafter")["status"] == "fail"
    causes = _causes(doc)
    assert causes[0][0] == "wrong-pairing", causes
    engine = [p for c, p in causes if c in ("engine-bug", "method-mismatch")]
    assert all(p < causes[0][1] / 2 for p in engine), causes


def test_dead_drafts_at_temperature_above_zero_do_not_single_out_the_pairing(tmp_path):
    target, drafter = _qwen3(tmp_path / "target"), _qwen3(tmp_path / "small")
    log = _log(tmp_path / "s.log", drafter, (0.0, 0.0, 0.0))
    rc, doc = _diagnose("--log", str(log), "--drafter", str(drafter), "--target", str(target), "--temperature", "1")
    f = _finding(doc, "standalone-drafter")
    assert f["status"] == "could-not-check" and "temperature 1" in f["message"], f


def test_a_standalone_drafter_that_agrees_at_times_is_not_called_dead(tmp_path):
    target, drafter = _qwen3(tmp_path / "target"), _qwen3(tmp_path / "small")
    log = _log(tmp_path / "s.log", drafter, (0.37, 0.15, 0.07, 0.05))
    rc, doc = _diagnose("--log", str(log), "--drafter", str(drafter), "--target", str(target))
    assert _finding(doc, "standalone-drafter")["status"] == "ok"
    causes = _causes(doc)
    assert "wrong-pairing" not in [c for c, _ in causes[:1]]
    engine = [p for c, p in causes if c == "engine-bug"]
    assert all(p < causes[0][1] / 2 for p in engine), causes


@pytest.mark.parametrize(
    ("path", "method", "version", "expected"),
    [
        ("/scratch/dflash-try/small", "draft_model", "0.32.0", ("dflash", "dflash")),
        ("/scratch/dflash-try/small", "draft_model", "0.32.0+cpu", ("dflash", "dflash")),
        ("/m/Qwen3-EAGLE3-head", "draft_model", "0.19.0", ("eagle3", "eagle3")),
        ("/m/EAGLE-LLaMA3-small", "mtp", "0.25.0", ("eagle-", "eagle")),
        ("/m/dspark_small", "draft_model", "0.24.0", None),  # dspark is re-read from 0.25.0
        ("/m/dspark_small", "draft_model", "0.25.0", ("dspark", "dspark")),
        ("/scratch/dflash-try/small", "draft_model", "0.19.1", None),  # dflash from 0.20.0
        ("/scratch/dflash-try/small", "draft_model", "0.20.0", ("dflash", "dflash")),
        ("/scratch/dflash-try/small", "draft_model", "0.34.0", None),
        ("/m/z-lab-dflash-b16", "dflash", "0.32.0", None),  # the method it names anyway
        ("/m/small", "draft_model", "0.32.0", None),
    ],
)
def test_the_drafter_path_trap_per_release(path, method, version, expected):
    assert path_trap(path, method, version) == expected


def test_the_drafter_path_trap_in_a_report(tmp_path):
    drafter = _qwen3(tmp_path / "dflash-scratch" / "small")
    log = tmp_path / "s.log"
    log.write_text(
        _log(tmp_path / "tmp.log", drafter, (0.0,), intervals=0).read_text()
        + "  Value error, Model architectures ['DFlashQwen3ForCausalLM'] are not supported for now.\n"
    )
    rc, doc = _diagnose("--log", str(log))
    f = _finding(doc, "launch-drafter-path")
    assert f["status"] == "fail" and "'dflash'" in f["message"] and "draft_model" in f["message"]
    assert _causes(doc)[0][0] == "launch-config", _causes(doc)


def test_server_default_temperature_from_the_launch():
    def lc(args):
        return LaunchConfig(engine="vllm", model="m", args=args)

    assert server_default_temperature(lc({"override_generation_config": '{"temperature": 1.0}'})) == 1.0
    assert server_default_temperature(lc({"override_generation_config": {"temperature": 0}})) == 0.0
    assert server_default_temperature(lc({"override_generation_config": "{not json"})) is None
    assert server_default_temperature(lc({"override_generation_config": '{"top_p": 0.9}'})) is None
    assert server_default_temperature(lc({})) is None and server_default_temperature(None) is None


def test_server_default_temperature_is_sampling_evidence(tmp_path):
    drafter = _qwen3(tmp_path / "small")
    log = _log(tmp_path / "s.log", drafter, (0.3, 0.1, 0.05))
    launch = (
        f"vllm serve /srv/m/target --override-generation-config '{{\"temperature\": 1.0}}' "
        f'--speculative-config \'{{"method": "draft_model", "model": "{drafter}", "num_speculative_tokens": 3}}\''
    )
    rc, doc = _diagnose("--log", str(log), "--launch", launch)
    w = [e for e in doc["evidence"] if e["kind"] == "workload"]
    assert w and "server default temperature 1" in w[0]["summary"]
    assert _finding(doc, "workload")["status"] == "warn"
    # a temperature the user states wins over the server's default
    rc, doc = _diagnose("--log", str(log), "--launch", launch, "--temperature", "0")
    assert "server default" not in " ".join(e["summary"] for e in doc["evidence"] if e["kind"] == "workload")


def test_counters_only_run_is_not_called_inactive(tmp_path):
    drafter = _qwen3(tmp_path / "small")
    log = _log(tmp_path / "s.log", drafter, (0.5,), intervals=0)  # startup lines only: a run shorter than the interval
    scrape = tmp_path / "metrics.txt"
    scrape.write_text(
        "# TYPE vllm:spec_decode_num_drafts_total counter\n"
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="tiny"} 240.0\n'
        "# TYPE vllm:spec_decode_num_draft_tokens_total counter\n"
        'vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="tiny"} 720.0\n'
        "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"
        'vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="tiny"} 480.0\n'
    )
    rc, doc = _diagnose("--log", str(log), "--metrics", str(scrape))
    f = _finding(doc, "spec-decode-active")
    assert f["status"] == "ok" and "counters show 240 drafts" in f["message"], f
    assert "launch-config" not in [c for c, _ in _causes(doc)[:1]], _causes(doc)
