"""Cause knowledge and baselines are data: validated at load, extensible without code."""

from __future__ import annotations

import copy
import dataclasses
from importlib import resources

import pytest
import tomllib

from dflash_doctor.interpret.baselines import default_baselines, geometric_ratio, parse_baselines
from dflash_doctor.knowledge.causes import KnowledgeError, default_knowledge, parse_knowledge

from .scenarios import diagnose, load

EXTRA_CAUSE = """
schema = 1

[[cause]]
id = "kv-cache-fp8-drafter"
title = "Drafter KV cache quantised to FP8 by the engine"
prior = -1.0
expected_tau = "baseline"
fix = "Keep the drafter's KV cache in BF16."
next_step = "relaunch with --kv-cache-dtype auto and compare"
decided_by = ["launch"]

[[rule]]
observation = "signature:cliff-after-first"
cause = "kv-cache-fp8-drafter"
weight = 5.0
text = "single lucky hits: the drafter's cached context is unreadable"
"""


def _packaged() -> dict:
    return tomllib.loads(resources.files("dflash_doctor.knowledge").joinpath("causes.toml").read_text("utf-8"))


def test_packaged_knowledge_loads_every_documented_cause():
    k = default_knowledge()
    assert set(k.causes) == {
        "undertrained-drafter",
        "layer-offset",
        "swa-ignored",
        "wrong-pairing",
        "method-mismatch",
        "draft-vocab-map",
        "rope-mismatch",
        "workload-shift",
        "context-not-repeated",
        "sampling-mismatch",
        "engine-bug",
        "rotated-quantization",
        "launch-config",
        # the usual suspects root-causes.md lists as "not causes, though often blamed"
        "prefix-caching",
        "eager-mode",
        "tensor-parallel",
        "k-too-large",
    }
    assert {c.id for c in k.causes.values() if c.suspect} == {
        "undertrained-drafter",
        "prefix-caching",
        "eager-mode",
        "tensor-parallel",
        "k-too-large",
    }
    assert k.separator("swa-ignored", "undertrained-drafter").startswith("run `dflash-doctor probe --ablate swa`")


def test_adding_a_cause_through_a_data_file_changes_the_ranking(tmp_path):
    extra = tmp_path / "extra.toml"
    extra.write_text(EXTRA_CAUSE)
    before, _ = diagnose(load("seed-log-only"))
    after, _ = diagnose(load("seed-log-only"), knowledge=default_knowledge((str(extra),)))
    assert before.causes[0].id != "kv-cache-fp8-drafter"
    assert "kv-cache-fp8-drafter" not in {c.id for c in before.causes}
    assert after.causes[0].id == "kv-cache-fp8-drafter"
    assert after.causes[0].evidence_for[0].observation == "signature:cliff-after-first"


def test_extra_knowledge_reaches_the_cli_by_flag_and_by_environment(cli, tmp_path, fixtures_dir):
    extra = tmp_path / "extra.toml"
    extra.write_text(EXTRA_CAUSE)
    log = str(fixtures_dir / "seed" / "vllm-0.20.1.log")
    import json

    by_flag = json.loads(cli("diagnose", "--log", log, "--knowledge", str(extra), "-f", "json").stdout)
    by_env = json.loads(cli("diagnose", "--log", log, "-f", "json", env={"DFLASH_DOCTOR_KNOWLEDGE": str(extra)}).stdout)
    assert by_flag["causes"][0]["id"] == by_env["causes"][0]["id"] == "kv-cache-fp8-drafter"
    bad = tmp_path / "bad.toml"
    bad.write_text(
        "schema = 1\n[[rule]]\nobservation = 'signature:all-zero'\ncause = 'nope'\nweight = 1.0\ntext = 'x'\n"
    )
    r = cli("diagnose", "--log", log, "--knowledge", str(bad))
    assert r.returncode == 2 and "unknown cause 'nope'" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d["cause"][0].update(prior="high"), "'prior' must be float"),
        (lambda d: d["cause"][0].update(decided_by=["drafters"]), "unknown evidence kind"),
        (lambda d: d["cause"][0].update(expected_tau="twice"), "expected_tau"),
        (lambda d: d["cause"][0].update(colour="red"), "unknown key(s) colour"),
        (lambda d: d["cause"].append(dict(d["cause"][0])), "duplicate cause id"),
        (lambda d: d["rule"][0].update(weight=9.0), "within ±6"),
        (lambda d: d["rule"][0].update(observation="cliff after first"), "family:value"),
        (lambda d: d["rule"][0].update(cause="unheard-of"), "unknown cause 'unheard-of'"),
        (lambda d: d["rule"].append(dict(d["rule"][0])), "already exists"),
        (lambda d: d.update(rule=[r for r in d["rule"] if r["cause"] != "launch-config"]), "could never be ranked"),
        (lambda d: d["separator"][0].update(causes=["swa-ignored"]), "two cause ids"),
        (lambda d: d.update(schema=2), "unsupported causes schema"),
        (lambda d: d["cause"][0].update(remedy="reboot"), "remedy must be one of"),
        (lambda d: d["cause"][0].update(ablation="window"), "ablation must be one of"),
        (lambda d: d["cause"][0].update(table_fix={"field": "swa", "fixed": ["x"]}), "not an engine_support.toml"),
        (lambda d: d["cause"][0].update(table_fix={"field": "layer_map", "fixed": []}), "needs the values"),
    ],
)
def test_bad_knowledge_fails_loudly(mutate, message):
    data = copy.deepcopy(_packaged())
    mutate(data)
    with pytest.raises(KnowledgeError, match=None) as exc:
        parse_knowledge(data)
    assert message in str(exc.value)


def test_every_rule_weight_is_documented_with_a_sentence():
    for r in default_knowledge().rules:
        assert len(r.text) > 20, r


# --- baselines ---------------------------------------------------------------------------------


def test_reference_curve_reproduces_the_published_tau():
    b = default_baselines().find("z-lab/Qwen3-8B-DFlash-b16")
    for ds, tau in b.tau.items():
        assert 1 + sum(b.reference_curve(ds)) == pytest.approx(tau, abs=1e-6)
    assert b.tau_at_k("gsm8k", 5) < b.tau_at_k("gsm8k", 15)
    assert geometric_ratio(1.0, 15) == pytest.approx(0.0, abs=1e-6)


def test_baselines_are_found_by_repo_id_alias_and_path():
    bl = default_baselines()
    assert bl.find("fixtures/models/Qwen3.6-27B-DFlash").id == "z-lab/Qwen3.6-27B-DFlash"
    assert bl.find("/data/hf/Qwen3-8B-DFlash-b16/").id == "z-lab/Qwen3-8B-DFlash-b16"
    assert bl.find("acme/Qwen3-8B-DFlash-preview") is None


def test_unknown_dataset_compares_with_the_lowest_published_tau():
    b = default_baselines().find("Qwen3-8B-DFlash-b16")
    assert b.tau_for(None)[:2] == ("alpaca", 3.16)
    assert b.tau_for("MT-Bench")[:2] == ("mt-bench", 4.25)


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d["drafter"][0].update(trust="rumour"), "trust"),
        (lambda d: d["drafter"][0].update(k=0), "'k'"),
        (lambda d: d["drafter"][0]["tau"].update(gsm8k=40.0), "gsm8k"),
        (lambda d: d["drafter"][0].update(curve=[0.5, 0.7]), "non-increasing"),
        (lambda d: d["cost_model"].update(verify_per_draft_position=-1), "verify_per_draft_position"),
        (lambda d: d["drafter"].append(dict(d["drafter"][0])), "duplicate"),
    ],
)
def test_bad_baselines_fail_loudly(mutate, message):
    data = tomllib.loads(resources.files("dflash_doctor.interpret").joinpath("baselines.toml").read_text("utf-8"))
    mutate(data)
    with pytest.raises(KnowledgeError) as exc:
        parse_baselines(data)
    assert message in str(exc.value)


def test_a_cause_is_one_place_the_plan_reads_its_remedy_and_ablation_from_the_data(tmp_path):
    """Before, the plan's remedy kinds and probe ablations were tables in rank/plan.py keyed by cause id: a cause
    added by a data file got "change" and no ablation whatever its entry said."""
    extra = tmp_path / "extra.toml"
    extra.write_text(
        EXTRA_CAUSE.replace(
            'decided_by = ["launch"]', 'decided_by = ["probe"]\nremedy = "launch"\nablation = "context"'
        )
    )
    knowledge = default_knowledge((str(extra),))
    report, _ = diagnose(load("seed-log-only"), knowledge=knowledge)
    step = next(s for s in report.plan.steps if "kv-cache-fp8-drafter" in s.fixes)
    assert step.kind == "launch"
    from dflash_doctor.names import Names
    from dflash_doctor.rank.plan import _next_command

    open_cause = next(c for c in report.causes if c.id == "kv-cache-fp8-drafter")
    open_cause = dataclasses.replace(open_cause, confidence=0.5, missing_evidence=("probe: no probe was run",))
    cmd, _ = _next_command([open_cause], [open_cause], Names(drafter="z/D", target="q/T"), None, knowledge)
    assert cmd == "dflash-doctor probe --target q/T --drafter z/D --ablate context"


def test_the_cause_ids_a_known_issue_may_name_are_causes_toml_s():
    from dflash_doctor.knowledge.causes import cause_ids

    assert cause_ids() == tuple(_packaged_ids())


def _packaged_ids() -> list[str]:
    return [c["id"] for c in _packaged()["cause"]]
