"""Deployments whose cause we made, served by a real llama-server, diagnosed by the doctor.

Target: a tiny Qwen3 GGUF (models.py). Drafters: the target's own weights (every draft accepted: τ = k + 1),
a noisy copy (+0.1·std: a weak drafter, acceptance decays with position), another seed (nothing accepted:
the wrong drafter for this target). N-gram drafting on prompts whose words never repeat: the drafter proposes
only what is already in the context, so what it can accept is the workload's repetition, not the engine's doing.
Each is diagnosed from the live process (`check host local --pid`) and from its log and /metrics URL.
"""

from __future__ import annotations

import json
import random
import shlex
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import run_cli

pytestmark = [pytest.mark.live, pytest.mark.slow]

K = 3
N_REQUESTS = 16
DRAFT = ("--spec-type", "draft-simple", "--spec-draft-n-max", str(K))
NGRAM = ("--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "2", "--spec-ngram-simple-size-m", str(K))
# causes that blame the drafter or its pairing with the target, and those that blame the engine
DRAFTER_SIDE = {"wrong-pairing", "undertrained-drafter", "method-mismatch", "draft-vocab-map", "rope-mismatch"}
ENGINE_SIDE = {"engine-bug", "swa-ignored", "layer-offset", "eager-mode", "prefix-caching", "tensor-parallel"}
WORKLOAD_SIDE = {"workload-shift", "sampling-mismatch"}


def _prompts(n: int, seed: int, repeat: bool) -> list[str]:
    """`repeat`: sentences over a small vocabulary (words recur); else words that never recur in a prompt."""
    rng = random.Random(seed)
    if repeat:
        words = ["the", "model", "reads", "a", "story", "about", "a", "river", "and", "a", "city", "at", "night"]
        return [" ".join(rng.choice(words) for _ in range(24)) for _ in range(n)]
    letters = "bcdfghjklmnpqrstvwxz"
    out = []
    for _ in range(n):
        seen: set[str] = set()
        while len(seen) < 24:
            seen.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 7))))
        out.append(" ".join(sorted(seen, key=lambda _: rng.random())))
    return out


def _drive(srv, prompts) -> None:
    for p in prompts:
        srv.complete(p, n_predict=64)


def _report(*args: str) -> tuple[int, dict]:
    r = run_cli(*args, "--format", "json", timeout=300)
    assert r.returncode in (0, 1, 3), r.stderr
    return r.returncode, json.loads(r.stdout)


def _summary(name: str, cmd: str, rep: dict) -> str:
    acc = rep.get("acceptance") or {}
    causes = ", ".join(f"{c['id']} {c.get('confidence', 0):.2f}" for c in rep.get("causes", [])[:3]) or "—"
    line = f"{name}: `{cmd}` τ {acc.get('mean_acceptance_length')} verdict {rep['verdict']}; {causes}"
    print(line)
    return line


def _both(srv, name: str) -> tuple[dict, dict]:
    """The report from the live process, and from its log + /metrics URL."""
    _, host = _report("check", "host", "local", "--pid", str(srv.pid))
    _summary(name, "check host local --pid PID", host)
    # the command line as a user pastes it: llama-server's log does not say which --spec-type ran
    launch = shlex.join(srv.argv)
    _, diag = _report("diagnose", "--log", str(srv.log), "--metrics", f"{srv.url}/metrics", "--launch", launch)
    _summary(name, "diagnose --log LOG --metrics URL/metrics --launch CMD", diag)
    return host, diag


def _ids(rep: dict) -> list[str]:
    return [c["id"] for c in rep.get("causes", [])]


def _conf(rep: dict, cause: str) -> float:
    return next((c.get("confidence", 0.0) for c in rep.get("causes", []) if c["id"] == cause), 0.0)


def test_drafter_identical_to_the_target_is_healthy(serve, llama_models):
    srv = serve("draft-same", "-md", str(llama_models["same"]), *DRAFT)
    _drive(srv, _prompts(N_REQUESTS, 1, repeat=True))
    host, diag = _both(srv, "draft-model, same weights")
    for rep in (host, diag):
        acc = rep["acceptance"]
        assert acc["mean_acceptance_length"] >= K + 1 - 0.15  # every draft accepted (a request's last draft is short)
        assert rep["verdict"] == "healthy", _ids(rep)
    launch = next(e for e in host["evidence"] if e["kind"] == "launch")["summary"]
    assert "method draft_model" in launch and f"k {K}" in launch and "same.gguf" in launch
    # the release's own print_timing lines are read from the live process's log, one per request
    scan = next(e for e in host["evidence"] if e["kind"] == "log-scan")["summary"]
    assert f"{N_REQUESTS} intervals" in scan, scan


def test_noisy_copy_is_a_weak_drafter(serve, llama_models):
    srv = serve("draft-noisy", "-md", str(llama_models["noisy"]), *DRAFT)
    _drive(srv, _prompts(N_REQUESTS, 2, repeat=True))
    for rep in _both(srv, "draft-model, noisy copy"):
        acc = rep["acceptance"]
        assert 1.05 < acc["mean_acceptance_length"] < 2.5
        assert rep["verdict"] == "problem"
        assert _ids(rep)[0] == "undertrained-drafter", _ids(rep)
        assert not set(_ids(rep)[:2]) & ENGINE_SIDE


def test_drafter_of_another_seed_blames_the_pairing_not_the_engine(serve, llama_models):
    srv = serve("draft-other", "-md", str(llama_models["other"]), *DRAFT)
    _drive(srv, _prompts(N_REQUESTS, 3, repeat=True))
    for rep in _both(srv, "draft-model, other seed"):
        assert rep["acceptance"]["mean_acceptance_length"] < 1.05
        assert rep["verdict"] == "problem"
        assert _ids(rep)[0] in DRAFTER_SIDE, _ids(rep)
        # no engine cause is put forward (the ranking's own bar for naming a cause: 0.15)
        assert all(_conf(rep, c) < 0.15 for c in ENGINE_SIDE), rep["causes"][:3]
        assert _conf(rep, "engine-bug") < 0.1


def test_ngram_with_nothing_to_look_up_is_not_an_engine_fault(serve):
    srv = serve("ngram", *NGRAM)
    _drive(srv, _prompts(N_REQUESTS, 4, repeat=False))
    host, diag = _both(srv, "ngram-simple, nothing to look up")
    launch = next(e for e in host["evidence"] if e["kind"] == "launch")["summary"]
    assert "method ngram" in launch and f"k {K}" in launch
    for rep in (host, diag):
        assert rep["verdict"] in ("problem", "insufficient-data")
        top = _ids(rep)[:1]
        # n-gram drafts only what the context already holds: low acceptance is the workload's, or undecided
        assert not set(top) & ENGINE_SIDE, _ids(rep)
        assert not set(top) & DRAFTER_SIDE, _ids(rep)  # there is no drafter model to blame
        if rep["verdict"] == "problem":
            assert top and top[0] in WORKLOAD_SIDE, _ids(rep)


def test_gate_on_a_live_llama_server(serve, llama_models, tmp_path):
    good = serve("gate-same", "-md", str(llama_models["same"]), *DRAFT)
    bad = serve("gate-other", "-md", str(llama_models["other"]), *DRAFT)
    for srv, seed in ((good, 5), (bad, 6)):
        _drive(srv, _prompts(8, seed, repeat=True))
    results = {}
    for name, srv in (("same", good), ("other", bad)):
        junit = tmp_path / f"{name}.xml"
        r = run_cli(
            "gate",
            "--metrics",
            f"{srv.url}/metrics",
            "--min-acceptance-length",
            "2.5",
            "--min-drafts",
            "50",
            "--junit",
            str(junit),
            timeout=120,
        )
        results[name] = r.returncode
        assert junit.is_file(), r.stderr
        ET.parse(junit)  # well-formed
        print(f"gate {name}: exit {r.returncode}: {r.stdout.splitlines()[:1]}")
    assert results == {"same": 0, "other": 1}
