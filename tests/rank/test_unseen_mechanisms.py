"""Diagnosis that holds on cases it has never seen (issue 29): each test is one mechanism, on a log written here from
the engines' print statements, and the behaviour a user needs from it."""

from __future__ import annotations

import json

import pytest

from dflash_doctor.collect.inputs import FileInputs, gather_files
from dflash_doctor.collect.workload import gather_workload
from dflash_doctor.evidence import Verdict
from dflash_doctor.services.doctor import build_report
from tests.conftest import FIXTURES, run_cli


def v1_log(path, pp, k=None, drafts=400, intervals=30, version=None, startup=None):
    """vLLM V1 `SpecDecoding metrics` lines (metrics.py's format string) for a per-position curve."""
    k = k or len(pp)
    lines = []
    if version:
        lines.append(f"INFO 05-14 09:00:00 [api_server.py:1000] vLLM API server version {version}")
    if startup:
        lines.append(f"(APIServer pid=7) INFO 05-14 09:00:01 [utils.py:189] non-default args: {startup}")
    for i in range(intervals):
        acc = [round(p * drafts) for p in pp]
        a = sum(acc)
        lines.append(
            f"(APIServer pid=7) INFO 05-14 09:{10 + i // 6:02d}:{(i % 6) * 10:02d} [metrics.py:101] SpecDecoding "
            f"metrics: Mean acceptance length: {1 + a / drafts:.2f}, Accepted throughput: 10.00 tokens/s, Drafted "
            f"throughput: 120.00 tokens/s, Accepted: {a} tokens, Drafted: {drafts * k} tokens, Per-position "
            f"acceptance rate: {', '.join(f'{x / drafts:.3f}' for x in acc)}, Avg Draft acceptance rate: "
            f"{a / (drafts * k) * 100:.1f}%"
        )
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def report(*, dataset=None, temperature=None, **kw):
    ev = gather_files(FileInputs(**kw))
    gather_workload(ev, temperature=temperature, thinking=None, dataset=dataset)
    return build_report(ev)[0]


def launch(method, drafter, k, **extra):
    spec = json.dumps({"method": method, "model": drafter, "num_speculative_tokens": k, **extra})
    return f"vllm serve Qwen/Qwen3-8B --speculative-config '{spec}'"


CLIFF = [0.22, 0.02, 0.0]


def test_a_printed_tau_inside_the_band_is_healthy_and_says_how_sure(tmp_path):
    """An SGLang benchmark client prints τ without counts: inside EAGLE-3's band at k = 3 it is evidence of health
    (the bug: insufficient-data, '1 drafts is too few to judge')."""
    log = tmp_path / "bench.txt"
    log.write_text("#questions: 80, Throughput: 1234.56 token/s, Acceptance length: 2.71\n")
    sglang = (
        "python -m sglang.launch_server --model meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE3 "
        "--speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B --speculative-num-steps 3 "
        "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
    )
    r = report(logs=[str(log)], launch=sglang)
    assert r.acceptance.standing == "printed"
    assert r.verdict == Verdict.HEALTHY
    assert r.verdict_detail["level"]["basis"] == "printed" and 0.9 <= r.verdict_detail["sure"] < 1.0


def test_a_self_trained_drafters_cliff_is_its_training_before_a_release_bug(tmp_path):
    """No release, no drafter config, a drafter from a training run: the engine-release causes have no support of
    their own, so weak training / training bugs and RoPE rank above them."""
    log = v1_log(tmp_path / "cliff.log", CLIFF)
    r = report(logs=[log], launch=launch("eagle3", "/data/outputs/llama3-eagle3/epoch_9", 3))
    order = [c.id for c in r.causes]
    assert order[:2] == ["undertrained-drafter", "rope-mismatch"], order
    assert "layer-offset" not in order[:2] and "engine-bug" not in order[:1]
    offset = next(c for c in r.causes if c.id == "layer-offset")
    assert any("release unknown its prior is ×0.25" in n for n in offset.notes)


def test_the_release_in_the_log_drives_the_known_issues_and_the_plan(tmp_path):
    """`vLLM API server version 0.20.1` in the log: its known DFlash bugs are in the fix plan (the bug: 'try another
    engine version', with the three issues 30 lines below)."""
    log = v1_log(tmp_path / "v.log", [0.17, 0.02] + [0.0] * 13, drafts=2600, version="0.20.1")
    r = report(logs=[log])
    upgrade = next(s for s in r.plan.steps if s.kind == "upgrade-engine")
    assert "0.20.1 → 0.26.0" in upgrade.action
    assert any("#40727" in d for d in upgrade.details)


def test_with_the_release_unknown_known_issues_are_candidates(tmp_path):
    log = v1_log(tmp_path / "v.log", [0.17, 0.02] + [0.0] * 13, drafts=2600)
    r = report(logs=[log])
    ki = next(f for f in r.findings if f.check_id == "known-issues")
    assert ki.message.startswith("release unknown") and all(d.startswith("if you run vllm") for d in ki.details)
    assert any(s.action.startswith("if you run vLLM before") for s in r.plan.steps)


def test_a_requoted_launch_string_does_not_outrank_a_log_that_shows_it_running(tmp_path):
    args = {
        "model": "Qwen/Qwen3-8B",
        "speculative_config": {"method": "dflash", "model": "x/y", "num_speculative_tokens": 15},
    }
    log = v1_log(tmp_path / "v.log", [0.8**i for i in range(1, 16)], drafts=2000, startup=repr(args))
    broken = (
        'vllm serve Qwen/Qwen3-8B --speculative-config {"method":"dflash","model":"x/y","num_speculative_tokens":15}'
    )
    r = report(logs=[log], launch=broken)
    assert "launch-config" not in [c.id for c in r.causes]
    f = next(f for f in r.findings if f.check_id == "launch-config")
    assert "the log shows speculative decoding running" in f.message and "k = 15" in f.message


def test_advice_never_contradicts_its_evidence(tmp_path):
    """A published pair far below its published τ: the weights can do better, so 'use a finished drafter checkpoint'
    is not advised."""
    log = v1_log(tmp_path / "v.log", [0.3 * 0.6**i for i in range(15)], drafts=2000)
    r = report(logs=[log], launch=launch("dflash", "z-lab/Qwen3-8B-DFlash-b16", 15), dataset="gsm8k")
    weak = next((c for c in r.causes if c.id == "undertrained-drafter"), None)
    assert weak is not None and any(x.observation == "tau:far-below-pair" for x in weak.evidence_against)
    assert not any("finished drafter checkpoint" in s.action for s in r.plan.steps)


def test_forced_acceptance_from_the_launch_is_named_and_the_tau_called_fake(tmp_path):
    log = v1_log(tmp_path / "v.log", [1.0, 1.0, 0.3, 0.0, 0.0], drafts=500, intervals=20)
    forced = launch("eagle3", "RedHatAI/Qwen3-8B-speculator.eagle3", 5, rejection_sample_method="synthetic")
    r = report(logs=[log], launch=forced)
    assert r.verdict == Verdict.PROBLEM and r.causes[0].id == "launch-config"
    assert "forced-acceptance" in r.causes[0].fix and "not the drafter's" in r.causes[0].fix


def test_forced_acceptance_is_recognised_from_the_curve_alone(tmp_path):
    """vLLM's synthetic schedule: exact 1.000s, one fraction, exact 0.000s."""
    log = v1_log(tmp_path / "v.log", [1.0, 1.0, 0.3, 0.0, 0.0], drafts=500, intervals=20)
    r = report(logs=[log])
    assert r.causes[0].id == "launch-config"
    assert "acceptance:forced-schedule" in {x.observation for x in r.causes[0].evidence_for}


def test_vllm_034_refuses_removed_keys_and_has_no_runner_to_toggle(tmp_path):
    bad = "VLLM_USE_V2_MODEL_RUNNER=0 " + launch(
        "dflash", "z-lab/Qwen3-8B-DFlash-b16", 15, disable_padded_drafter_batch=True
    )
    r = report(engine="vllm==0.34.0", launch=bad)
    assert r.causes[0].id == "launch-config" and "disable_padded_drafter_batch" in r.causes[0].fix
    assert "VLLM_USE_V2_MODEL_RUNNER" in r.causes[0].fix
    log = v1_log(tmp_path / "v.log", CLIFF, drafts=2000)
    bug = next(c for c in report(logs=[log], engine="vllm==0.34.0").causes if c.id == "engine-bug")
    assert "toggle VLLM_USE_V2_MODEL_RUNNER" not in bug.fix and "0.33.0" in bug.fix


def test_with_the_workload_unknown_the_band_is_shown_and_the_workload_decides(tmp_path):
    """τ 3.3 on Qwen3-8B-DFlash-b16: healthy for chat (alpaca 3.16), impaired for math (gsm8k 6.55). 'expected ≈
    3.16' was the bug."""
    a = 0.775
    log = v1_log(tmp_path / "v.log", [a**i for i in range(1, 16)], drafts=400)
    r = report(logs=[log], launch=launch("dflash", "z-lab/Qwen3-8B-DFlash-b16", 15))
    assert r.verdict == Verdict.INSUFFICIENT_DATA and r.verdict_detail["level"]["decides"] == "workload"
    assert r.plan.reference_range[1] == "alpaca" and r.plan.reference_range[3] == "math500"
    math = report(logs=[log], launch=launch("dflash", "z-lab/Qwen3-8B-DFlash-b16", 15), dataset="gsm8k")
    assert math.verdict == Verdict.PROBLEM


@pytest.mark.parametrize("ref", ["golden.yaml", "profile.json"])
def test_a_users_own_reference_judges_the_run(tmp_path, ref):
    (tmp_path / "golden.yaml").write_text(
        "_metadata:\n  draft-model: my/eagle3\nmy-model:\n  thinking_on:\n    1: 1.9\n    3: 3.3\n    5: 3.9\n"
    )
    (tmp_path / "profile.json").write_text(
        json.dumps(
            {
                "schema_version": "1.0",
                "measured": True,
                "method": "eagle3",
                "num_speculative_tokens": 3,
                "marginal_accept_rates": [0.9, 0.8, 0.6],
                "mean_accept_length": 3.3,
                "accept_length_model": "chain_analytic",
            }
        )
    )
    log = v1_log(tmp_path / "v.log", [0.73, 0.52, 0.35], drafts=2000)  # healthy for the packaged EAGLE-3 band
    r = run_cli("diagnose", "--log", log, "--reference", str(tmp_path / ref), "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "problem", doc["verdict"]  # but far under the user's own 3.3 at k = 3
    assert "your reference" in doc["plan"]["reference"]


def test_a_reference_that_is_neither_format_is_one_line(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{}")
    r = run_cli("diagnose", "--log", str(FIXTURES / "seed" / "vllm-0.20.1.log"), "--reference", str(p))
    assert r.returncode == 2 and "not a speculation_profile.json" in r.stderr and "Traceback" not in r.stderr


def test_close_causes_name_the_input_that_separates_them(tmp_path):
    log = v1_log(tmp_path / "v.log", [0.17, 0.02] + [0.0] * 13, drafts=2600)
    r = report(logs=[log])
    u = r.verdict_detail["undecided"]
    assert len(u["between"]) == 2 and u["input"] and u["how"]


def test_a_lossy_verifier_qualifies_a_healthy_verdict(tmp_path):
    log = v1_log(tmp_path / "v.log", [0.75, 0.55, 0.4], drafts=2000)
    r = report(
        logs=[log], launch=launch("eagle3", "RedHatAI/Qwen3-8B-speculator.eagle3", 3, rejection_sample_method="fly")
    )
    assert r.verdict == Verdict.HEALTHY and "lossless" in r.verdict_detail["caveat"]


def test_releases_toml_is_shaped_and_a_bad_entry_is_one_line():
    import copy
    import tomllib
    from importlib import resources

    from dflash_doctor import schema
    from dflash_doctor.checks.launch_release import entries

    assert entries() and all(e["range"] for e in entries())
    data = tomllib.loads(resources.files("dflash_doctor.interpret").joinpath("releases.toml").read_text("utf-8"))
    bad = copy.deepcopy(data)
    bad["entry"][0]["kind"] = "forbidden"
    with pytest.raises(schema.SchemaError, match=r"^releases.toml: entry\[0\].kind: invalid enum value 'forbidden'$"):
        schema.convert(bad, schema.ReleasesFile, "releases.toml")


def test_a_damaged_profile_is_one_line_naming_the_place(tmp_path):
    p = tmp_path / "profile.json"
    p.write_text(json.dumps({"num_speculative_tokens": 3, "marginal_accept_rates": [0.9, "high", 0.6]}))
    r = run_cli("diagnose", "--log", str(FIXTURES / "seed" / "vllm-0.20.1.log"), "--reference", str(p))
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert errors == ["error: profile.json: marginal_accept_rates[1]: expected a number, got str"], r.stderr


NGRAM = (
    "{'model': 'Qwen/Qwen3-8B', 'speculative_config': {'method': 'ngram', 'num_speculative_tokens': 3, "
    "'prompt_lookup_max': 3, 'prompt_lookup_min': 2}}"
)


@pytest.mark.parametrize("pp", [[0.18, 0.08, 0.03], [0.0, 0.0, 0.0]])
def test_ngram_with_nothing_to_copy_is_the_workload_not_a_bug(tmp_path, pp):
    """n-gram lookup drafts only what repeats in the context (vLLM ngram_proposer.py): low acceptance over many drafts
    is the traffic (issue 27: it was insufficient-data on vLLM, engine-bug first on llama.cpp)."""
    r = report(logs=[v1_log(tmp_path / "v.log", pp, drafts=60, intervals=12, version="0.32.0", startup=NGRAM)])
    assert r.verdict == Verdict.PROBLEM
    assert r.causes[0].id == "workload-shift" and "lookup:little-repeats" in {
        c.observation for c in r.causes[0].evidence_for
    }
    assert "learned drafter" in r.causes[0].fix
    assert all(c.id != "engine-bug" or c.confidence < 0.2 for c in r.causes)


def test_ngram_that_finds_text_to_copy_is_not_called_a_workload_problem(tmp_path):
    r = report(logs=[v1_log(tmp_path / "v.log", [0.7, 0.55, 0.45], drafts=60, intervals=12, startup=NGRAM)])
    assert r.verdict != Verdict.PROBLEM and all(c.id != "workload-shift" or c.confidence < 0.5 for c in r.causes)


def _vllm_scrape(path, drafts, accepted, generated):
    """A vLLM V1 /metrics page (loggers.py's counter names) with the generation counter beside the spec-decode ones."""
    lab = 'engine="0",model_name="m"'
    path.write_text(
        f"vllm:spec_decode_num_drafts_total{{{lab}}} {drafts}\n"
        f"vllm:spec_decode_num_draft_tokens_total{{{lab}}} {drafts * 3}\n"
        f"vllm:spec_decode_num_accepted_tokens_total{{{lab}}} {accepted}\n"
        f"vllm:generation_tokens_total{{{lab}}} {generated}\n"
    )
    return str(path)


def test_ngram_drafting_on_few_steps_is_the_workload_even_when_its_drafts_are_accepted(tmp_path):
    """vLLM counts a draft only for a step whose lookup found a match (ngram_proposer.py proposes nothing
    otherwise): τ over the drafts can be high while most steps draft nothing. The live vLLM CPU build showed it:
    τ 2.3 over 154 drafts among 1763 decode steps of 1920 tokens. The counters' share tells."""
    log = v1_log(tmp_path / "v.log", [0.7, 0.55, 0.45], drafts=60, intervals=12, version="0.32.0", startup=NGRAM)
    r = report(logs=[log], metrics=[_vllm_scrape(tmp_path / "m.prom", 720, 1224, 9000)])
    assert r.verdict == Verdict.PROBLEM
    assert r.causes[0].id == "workload-shift", [(c.id, c.confidence) for c in r.causes]
    tau = next(f for f in r.findings if f.check_id == "tau-vs-baseline")
    assert "of the 9000 generated tokens came from drafting steps" in tau.message, tau.message
    # the same drafts covering nearly every step: a lookup that finds text to copy, no workload cause
    r = report(logs=[log], metrics=[_vllm_scrape(tmp_path / "m2.prom", 720, 1224, 2000)])
    assert r.verdict != Verdict.PROBLEM and all(c.id != "workload-shift" or c.confidence < 0.5 for c in r.causes)


def test_an_ngram_launch_has_no_drafter_to_wait_for(tmp_path):
    """n-gram lookup drafts from the context: the checks that read a drafter model do not apply (they used to be
    listed as waiting for `--drafter`); a draft-model launch without its drafter still waits for it."""
    from dflash_doctor.check import DOES_NOT_APPLY
    from dflash_doctor.evidence import Status

    log = v1_log(tmp_path / "v.log", [0.18, 0.08, 0.03], drafts=60, intervals=12, version="0.32.0", startup=NGRAM)
    cmd = tmp_path / "serve.txt"
    cmd.write_text('vllm serve Qwen/Qwen3-8B --speculative-config \'{"method": "ngram", "num_speculative_tokens": 3}\'')
    r = report(logs=[log], launch=f"@{cmd}")
    drafter_checks = [f for f in r.findings if f.check_id in ("drafter-config", "drafter-target-pairing")]
    assert drafter_checks and all(f.status == Status.NOT_APPLICABLE for f in drafter_checks), drafter_checks
    assert all(f.message.startswith(DOES_NOT_APPLY) and "no drafter model" in f.message for f in drafter_checks)
    assert not [f for f in r.findings if "drafter" in f.waiting_for]
    assert r.causes[0].id == "workload-shift"
    cmd.write_text(
        'vllm serve Qwen/Qwen3-8B --speculative-config \'{"method": "eagle3", "num_speculative_tokens": 3}\''
    )
    r = report(logs=[log], launch=f"@{cmd}")
    assert [f for f in r.findings if "drafter" in f.waiting_for]


def test_the_drafted_share_needs_counters_that_fit_together(tmp_path):
    """Too few generated tokens, or drafts and accepted tokens above what was generated (another span, a restart):
    no share is read."""
    from checks.baseline import drafted_share

    few = gather_files(FileInputs(metrics=[_vllm_scrape(tmp_path / "a.prom", 20, 30, 150)]))
    assert drafted_share(few) is None
    odd = gather_files(FileInputs(metrics=[_vllm_scrape(tmp_path / "b.prom", 700, 1200, 1000)]))
    assert drafted_share(odd) is None
    ok = gather_files(FileInputs(metrics=[_vllm_scrape(tmp_path / "c.prom", 100, 150, 1000)]))
    assert drafted_share(ok) == pytest.approx((0.25, 1000.0, 100.0, 150.0))


def test_a_low_tau_of_an_unnamed_method_is_not_read_as_lookup(tmp_path):
    """Without the engine or the user naming n-gram, the same curve says nothing about lookup."""
    r = report(logs=[v1_log(tmp_path / "v.log", [0.18, 0.08, 0.03], drafts=60, intervals=12)])
    assert all("lookup:little-repeats" not in {e.observation for e in c.evidence_for} for c in r.causes)


def test_the_engines_startup_line_names_the_method_it_runs(tmp_path):
    """A method the engine's own startup lines name is known (≥ 0.9) even when it is rare (n-gram's prior is 9 %);
    SGLang's `EAGLE` names EAGLE-1/2 or MTP alike (ServerArgs rewrites NEXTN to EAGLE), so it settles neither."""
    from dflash_doctor.interpret.method import infer_method

    ev = gather_files(FileInputs(logs=[v1_log(tmp_path / "v.log", [0.5, 0.3, 0.1], version="0.32.0", startup=NGRAM)]))
    assert infer_method(ev).known == "ngram"
    sgl = tmp_path / "s.log"
    sgl.write_text(
        "[2026-01-22 10:00:00] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', "
        "speculative_algorithm='EAGLE', speculative_num_steps=3, speculative_eagle_topk=1, "
        "speculative_num_draft_tokens=4)\n"
        "[2026-01-22 10:27:57 TP0] Decode batch, #running-req: 4, #token: 1108, token usage: 0.01, accept len: 2.60, "
        "accept rate: 0.53, cuda graph: True, gen throughput (token/s): 90.39, #queue-req: 0\n"
    )
    b = infer_method(gather_files(FileInputs(logs=[str(sgl)])))
    assert b.known is None and b.p(("mtp", "eagle")) > 0.95 and b.probs["mtp"] > 0.3 and b.probs["eagle"] > 0.05


def _sglang_log(path, algorithm, drafter, accept_len=1.0):
    """SGLang 0.5.x: its server_args line, then `Decode batch` lines (scheduler.py's format)."""
    lines = [
        "[2026-01-15 08:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', "
        f"speculative_algorithm='{algorithm}', "
        f"speculative_draft_model_path='{drafter}', speculative_num_steps=3, speculative_eagle_topk=1, "
        "speculative_num_draft_tokens=4)"
    ]
    for i in range(20):
        lines.append(
            f"[2026-01-15 08:{1 + i:02d}:00 TP0] Decode batch, #running-req: 16, #token: {3000 + i}, "
            "token usage: 0.03, "
            f"accept len: {accept_len:.2f}, cuda graph: True, gen throughput (token/s): 300.0, #queue-req: 0"
        )
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_eagle3_head_launched_as_eagle_is_named_from_the_drafter_name(tmp_path):
    """SGLang's EAGLE algorithm never feeds an EAGLE-3 head its three-layer features: every draft rejected. Without
    the drafter's config, its published name (`…_eagle3`) is the witness: method-mismatch first, not a guess between
    engine causes; the same name launched as EAGLE3 lowers it instead."""
    rep = report(logs=[_sglang_log(tmp_path / "a.log", "EAGLE", "org/Qwen3-8B_eagle3")])
    assert rep.causes[0].id == "method-mismatch" and rep.causes[0].confidence >= 0.5
    name = next(f for f in rep.findings if f.check_id == "launch-method-name")
    assert name.status.value == "warn" and "eagle3" in name.message
    ok = report(logs=[_sglang_log(tmp_path / "b.log", "EAGLE3", "org/Qwen3-8B_eagle3")])
    assert next(f for f in ok.findings if f.check_id == "launch-method-name").status.value == "ok"
    assert all(c.id != "method-mismatch" or c.confidence < 0.2 for c in ok.causes)


@pytest.mark.parametrize(
    ("drafter", "method", "status"),
    [
        ("lmsys/sglang-EAGLE-llama2-chat-7B", "EAGLE", "ok"),
        ("org/DeepSeek-V3-NextN", "EAGLE", "ok"),  # SGLang's EAGLE runs DeepSeek-style MTP layers too
        ("org/Qwen3-8B-P-EAGLE", "EAGLE3", "not-applicable"),  # served as eagle3 + parallel drafting
        ("Qwen/Qwen3-0.6B", "STANDALONE", "not-applicable"),
        ("z-lab/Qwen3-8B-DFlash-b16", "EAGLE3", "warn"),
    ],
)
def test_drafter_name_against_the_launch(tmp_path, drafter, method, status):
    rep = report(logs=[_sglang_log(tmp_path / "c.log", method, drafter, accept_len=2.5)])
    assert next(f for f in rep.findings if f.check_id == "launch-method-name").status.value == status


def test_upgrade_is_not_offered_for_an_eagle3_offset(tmp_path):
    """The engine table's +1 rule is DFlash's target_layer_ids: on an EAGLE-3 deployment an upgrade is not the fix
    for a tap offset (its ids must be written in the field the release reads), so the plan does not say it is."""
    log = v1_log(
        tmp_path / "e3.log",
        [0.6, 0.33, 0.17, 0.1],
        drafts=500,
        version="0.11.0",
        startup="{'model': 'Qwen/Qwen3-8B', 'speculative_config': {'method': 'eagle3', 'model': "
        "'RedHatAI/Qwen3-8B-speculator.eagle3', 'num_speculative_tokens': 4}}",
    )
    rep = report(logs=[log])
    for step in rep.plan.steps:
        assert not (step.kind == "upgrade-engine" and "layer-offset" in step.fixes), step


def test_llama_cpp_timing_lines_with_draft_max_never_claim_healthy(tmp_path):
    """Old llama-server lines print accepted/generated per request, no drafts: with --draft-max 16, generated / 16 is
    the fewest drafts (a draft stops below --draft-p-min), so τ from it is a ceiling: 10.9 must not read as
    healthy (it said P 1.00); a ceiling below the band still shows a problem."""
    lines = [
        f"slot print_timing: id  0 | task {t} | draft acceptance rate = {a / g:.5f} "
        f"({a:5d} accepted / {g:5d} generated)"
        for t, (a, g) in enumerate([(337, 594), (290, 512), (410, 700)])
    ]
    log = tmp_path / "llama.log"
    log.write_text("\n".join(lines) + "\n")
    rep = report(logs=[str(log)], launch="llama-server -m t.gguf -md d.gguf --draft-max 16")
    assert rep.acceptance is not None and rep.acceptance.standing == "upper-bound"
    assert rep.verdict != Verdict.HEALTHY
    low = [
        f"slot print_timing: id  0 | task {t} | draft acceptance rate = 0.01000 (    4 accepted /   400 generated)"
        for t in range(8)
    ]
    log.write_text("\n".join(low) + "\n")
    bad = report(logs=[str(log)], launch="llama-server -m t.gguf -md d.gguf --draft-max 4")
    assert bad.verdict == Verdict.PROBLEM


def test_first_position_right_and_the_rest_never_is_no_weak_drafter(tmp_path):
    """Position 1 at 0.84 and position 2 at 0.004 (MTP, k = 3): a drafter that good at its first token is not weak;
    its later steps get other inputs (a later MTP module unloaded or reused wrongly). It read as a 'steep' weak
    drafter (undertrained-drafter first); the engine's drafter path comes first now."""
    log = v1_log(tmp_path / "mtp.log", [0.836, 0.004, 0.0], drafts=1000, version="0.28.0")
    rep = report(logs=[log], launch=launch("mtp", None, 3))
    curve = next(f for f in rep.findings if f.check_id == "acceptance-curve")
    assert "first-only" in curve.message
    assert rep.causes[0].id == "engine-bug"
    assert all(c.id != "undertrained-drafter" or c.confidence < 0.1 for c in rep.causes)


def test_every_draft_rejected_at_temperature_is_not_a_sampling_mismatch_first(tmp_path):
    """A sampling mismatch lowers acceptance (AL 1.16 at worst, published); exact zeros over thousands of drafts are
    garbage drafts: at temperature 0.7 on a release outside every sampling bug, the engine path comes first."""
    log = v1_log(tmp_path / "zero.log", [0.0, 0.0, 0.0], drafts=1000, version="0.24.0")
    rep = report(logs=[log], launch=launch("eagle3", "RedHatAI/Qwen3-8B-speculator.eagle3", 3), temperature=0.7)
    assert rep.causes[0].id != "sampling-mismatch"
    assert all(c.id != "sampling-mismatch" or c.confidence < 0.35 for c in rep.causes)


def test_a_temperature_never_makes_the_band_stricter_than_greedy(tmp_path):
    """A few figures measured at a sampling temperature can sit above the greedy ones (other pairs, other
    workloads): an EAGLE-3 deployment healthy at the greedy band stays healthy when told it samples at 0.8."""
    log = v1_log(tmp_path / "e3.log", [0.66, 0.42, 0.26], drafts=1000)
    drafter = launch("eagle3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", 3)
    assert report(logs=[log], launch=drafter).verdict == Verdict.HEALTHY
    assert report(logs=[log], launch=drafter, temperature=0.8).verdict == Verdict.HEALTHY


def test_the_plan_never_predicts_less_than_tau_now(tmp_path):
    """τ 6.8 on a DFlash pair published from 3.16 (alpaca) to 7.87 (math500), workload unknown: the fix's expected τ
    was capped at the lowest workload's 3.16 ('0.5× tokens/step'); it is capped at the most published instead."""
    for scale in (0.8, 1.0):  # τ 6.8 between the workloads' figures, τ 8.5 above all of them
        pp = [scale * x for x in (0.95, 0.9, 0.85, 0.8, 0.74, 0.66, 0.58, 0.5, 0.42, 0.34, 0.27, 0.2, 0.14, 0.09, 0.05)]
        log = v1_log(tmp_path / f"d{scale}.log", pp, drafts=800, version="0.20.1")
        rep = report(logs=[log], launch=launch("dflash", "z-lab/Qwen3-8B-DFlash-b16", 15))
        tau = rep.acceptance.mean_acceptance_length
        for step in rep.plan.steps:
            assert step.expected_tau is None or step.expected_tau >= tau, step
        assert all(c.expected_tau_if_fixed is None or c.expected_tau_if_fixed <= 7.87 + 1e-6 for c in rep.causes)


def test_an_sglang_launch_is_not_read_as_vllm_greedy_drafts(tmp_path):
    """vLLM's draft_sample_method is a key of its --speculative-config; an SGLang launch has no such config, so its
    sampling advice must not be vLLM's."""
    log = _sglang_log(tmp_path / "s.log", "DFLASH", "z-lab/Qwen3-4B-DFlash-b16", accept_len=1.3)
    sglang = (
        "python -m sglang.launch_server --model-path Qwen/Qwen3-4B --speculative-algorithm DFLASH "
        "--speculative-draft-model-path z-lab/Qwen3-4B-DFlash-b16 --speculative-num-draft-tokens 16"
    )
    rep = report(logs=[log], launch=sglang, temperature=0.8)
    assert not any("draft_sample_method" in (f.remedy or "") for f in rep.findings)
    assert not any("draft_sample_method" in s.action for s in rep.plan.steps)
