"""The clean-room probe on the committed tiny trained pair (fixtures/tiny, built by
fixtures/scripts/make_tiny_pair.py). Nothing is trained here: the tests load the committed weights."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from dflash_doctor.probe.config import load_drafter_config  # noqa: E402
from dflash_doctor.probe.drafter import load_drafter  # noqa: E402
from dflash_doctor.probe.prompts import load_prompts  # noqa: E402
from dflash_doctor.probe.runner import PairRunner, hf_taps  # noqa: E402
from dflash_doctor.probe.target import load_target  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402

pytestmark = pytest.mark.torch
TINY = FIXTURES / "tiny"
N_PROMPTS = 6
MAX_NEW = 48


@pytest.fixture(scope="module")
def pair():
    torch.set_num_threads(1)
    target = load_target(str(TINY / "target"), "cpu", torch.float32)
    prompts = load_prompts(str(TINY / "prompts.jsonl"), None, N_PROMPTS)
    runners = {}
    for name in ("drafter", "drafter-swa"):
        cfg = load_drafter_config(TINY / name)
        runners[name] = (PairRunner(target, load_drafter(TINY / name, cfg), cfg, block=8, max_new=MAX_NEW), cfg)
    return target, prompts, runners


@pytest.fixture(scope="module")
def results(pair):
    """Every setting the tests below judge, run once."""
    target, prompts, runners = pair
    out = {}
    for name, (runner, cfg) in runners.items():
        ids = cfg.target_layer_ids
        settings = {
            "correct": (hf_taps(ids, 0, target.num_layers), True),
            "offset-1": (hf_taps(ids, -1, target.num_layers), True),
            "offset+1": (hf_taps(ids, +1, target.num_layers), True),
            "offset-2": (hf_taps(ids, -2, target.num_layers), True),
            "embeddings-only": ((0,) * len(ids), True),
            "swa-ignored": (hf_taps(ids, 0, target.num_layers), False),
        }
        if name == "drafter":
            settings.pop("swa-ignored")
        else:
            settings = {k: settings[k] for k in ("correct", "swa-ignored")}
        for label, (taps, swa) in settings.items():
            out[(name, label)] = runner.run(prompts, taps, swa=swa, label=label)
    return out


def test_every_setting_is_lossless(results):
    for key, r in results.items():
        assert r["lossless"] is True, (key, r["mismatches"])
        assert r["steps"] > 0


def test_tau_with_the_correct_settings_is_high(results):
    assert results[("drafter", "correct")]["mean_acceptance_length"] >= 6.0


def test_wrong_features_collapse_tau(results):
    good = results[("drafter", "correct")]["mean_acceptance_length"]
    assert results[("drafter", "offset-2")]["mean_acceptance_length"] < good - 3
    assert results[("drafter", "embeddings-only")]["mean_acceptance_length"] < good - 3


def test_one_layer_offsets_do_not_help(results):
    good = results[("drafter", "correct")]["mean_acceptance_length"]
    for label in ("offset-1", "offset+1"):
        assert results[("drafter", label)]["mean_acceptance_length"] < good


def test_sliding_window_honoured_vs_ignored(results):
    honoured = results[("drafter-swa", "correct")]["mean_acceptance_length"]
    ignored = results[("drafter-swa", "swa-ignored")]["mean_acceptance_length"]
    assert honoured >= 6.0
    assert honoured - ignored >= 4.0


def test_per_position_curve_sums_to_tau(results):
    r = results[("drafter", "correct")]
    assert len(r["per_position"]) == 7
    assert 1 + sum(r["per_position"]) == pytest.approx(r["mean_acceptance_length"])
    assert all(a >= b for a, b in zip(r["per_position"], r["per_position"][1:], strict=False))


def test_the_mask_token_is_read_from_the_config(pair):
    """Drafting with vocab-1 as the mask (the common wrong guess) must not work as well as the configured id."""
    target, prompts, runners = pair
    runner, cfg = runners["drafter"]
    taps = hf_taps(cfg.target_layer_ids, 0, target.num_layers)
    assert cfg.mask_token_id != target.vocab_size - 1
    import dataclasses

    wrong = PairRunner(
        target, runner.drafter, dataclasses.replace(cfg, mask_token_id=target.vocab_size - 1), block=8, max_new=MAX_NEW
    )
    right = runner.run(prompts[:3], taps)["mean_acceptance_length"]
    bad = wrong.run(prompts[:3], taps)
    assert bad["lossless"] is True
    assert bad["mean_acceptance_length"] < right - 2


def test_budget_end_rule_never_counts_more_steps(pair):
    target, prompts, runners = pair
    runner, cfg = runners["drafter"]
    taps = hf_taps(cfg.target_layer_ids, 0, target.num_layers)
    budget = PairRunner(target, runner.drafter, cfg, block=8, max_new=MAX_NEW, end_rule="budget")
    b = budget.run(prompts[:3], taps)
    r = runner.run(prompts[:3], taps)
    assert b["lossless"] is True and b["generated"] == r["generated"]


def test_cli_probe_json(cli):
    res = cli(
        "probe",
        "--target",
        str(TINY / "target"),
        "--drafter",
        str(TINY / "drafter-swa"),
        "--prompts",
        str(TINY / "prompts.jsonl"),
        "--limit",
        "2",
        "--max-new-tokens",
        "24",
        "--device",
        "cpu",
        "--ablate",
        "offset,swa,context",
        "--format",
        "json",
        "--log",
        str(FIXTURES / "seed" / "vllm-0.20.1.log"),
        "--force-probe-pair",
        timeout=300,
    )
    # the served seed τ (1.18) fails against the probe: a failed check is exit 1 (issue 17 item 9)
    assert res.returncode == 1, res.stderr
    r = json.loads(res.stdout)
    assert r["lossless"] is True
    assert r["acceptance"]["steps"] > 0 and len(r["acceptance"]["per_position"]) == 7
    assert r["acceptance"]["mean_acceptance_length"] == pytest.approx(1 + sum(r["acceptance"]["per_position"]))
    names = [a["name"] for a in r["ablations"]]
    assert names[:5] == ["offset-1", "offset+0", "offset+1", "swa-honoured", "swa-ignored"]
    assert any(n.startswith("context:") for n in names)
    assert r["end_rule"]["name"] == "reference"
    assert r["decoding"] == "greedy"
    for a in r["ablations"][:5]:
        assert a["lossless"] is True
    # the seed log's served τ (1.18) against the probe's: the probe beats it, and the window ablation matches it
    statuses = {f["status"] for f in r["served_comparison"]}
    assert "fail" in statuses
    assert any("sliding windows ignored" in f["message"] for f in r["served_comparison"])


def test_cli_probe_text_prompts_without_tokenizer_is_one_line_error(cli):
    res = cli(
        "probe",
        "--target",
        str(TINY / "target"),
        "--drafter",
        str(TINY / "drafter"),
        "--device",
        "cpu",
        "--limit",
        "1",
        timeout=300,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and "tokenizer" in res.stderr


def test_sampling_is_labelled_and_reproducible(pair):
    target, prompts, runners = pair
    runner, cfg = runners["drafter"]
    taps = hf_taps(cfg.target_layer_ids, 0, target.num_layers)
    hot = [PairRunner(target, runner.drafter, cfg, block=8, max_new=32, temperature=1.0, seed=7) for _ in range(2)]
    a, b = (h.run(prompts[:2], taps) for h in hot)
    assert a["lossless"] is None  # token equality is not defined when sampling
    assert a["per_position"] == b["per_position"] and a["steps"] == b["steps"]  # same seed, same run
    greedy = runner.run(prompts[:2], taps)
    assert a["mean_acceptance_length"] < greedy["mean_acceptance_length"]


def test_a_decode_step_reads_the_host_once(pair, monkeypatch):
    """On a GPU every value read into Python and every tensor built from host data is a blocking transfer:
    a draft-and-verify step reads once (drafts and the target's choices together), a greedy step once, and
    neither builds a tensor from host data."""
    from dflash_doctor.probe.engine import greedy_generate, speculative_generate

    target, prompts, runners = pair
    runner, cfg = runners["drafter"]
    taps = hf_taps(cfg.target_layer_ids, 0, target.num_layers)
    calls = {"read": 0, "build": 0}

    def counting(kind, real):
        def wrapper(*args, **kwargs):
            calls[kind] += 1
            return real(*args, **kwargs)

        return wrapper

    for name in ("item", "tolist", "__int__", "__bool__", "__index__", "__float__"):
        monkeypatch.setattr(torch.Tensor, name, counting("read", getattr(torch.Tensor, name)))
    monkeypatch.setattr(torch, "tensor", counting("build", torch.tensor))
    ids = list(prompts[0].ids)

    def counted(run, max_new):
        calls.update(read=0, build=0)
        return run(max_new), dict(calls)

    def spec(max_new):
        return speculative_generate(
            target, runner.drafter, ids, max_new=max_new, block=8, taps=taps, mask_token_id=cfg.mask_token_id
        )

    (short, short_calls), (long, long_calls) = counted(spec, 8), counted(spec, MAX_NEW)
    assert len(long.step_lengths) > len(short.step_lengths) > 0
    assert long_calls["read"] == 1 + len(long.step_lengths)  # the first token, then one read per step
    assert long_calls["build"] == short_calls["build"]  # the prompt, the mask id (and the cache's set-up): not per step
    (short, short_calls), (long, long_calls) = (
        counted(lambda n: greedy_generate(target, ids, n), n) for n in (8, MAX_NEW)
    )
    assert long_calls["read"] == len(long.tokens) == MAX_NEW
    assert long_calls["build"] == short_calls["build"]


def test_attention_runs_without_cudnn_graphs(pair, monkeypatch):
    """cuDNN attention builds a graph per new key length (every decode step): the target's and the drafter's
    attention calls must run with it disabled."""
    from dflash_doctor.probe.engine import speculative_generate

    target, prompts, runners = pair
    runner, cfg = runners["drafter"]
    seen = []
    real = torch.nn.functional.scaled_dot_product_attention

    def sdpa(*args, **kwargs):
        seen.append(torch.backends.cuda.cudnn_sdp_enabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", sdpa)
    speculative_generate(
        target,
        runner.drafter,
        list(prompts[0].ids),
        max_new=16,
        block=8,
        taps=hf_taps(cfg.target_layer_ids, 0, target.num_layers),
        mask_token_id=cfg.mask_token_id,
    )
    layers = target.num_layers + len(runner.drafter.layers)
    assert len(seen) >= 2 * layers and not any(seen)
    assert torch.backends.cuda.cudnn_sdp_enabled()  # restored outside the forwards
