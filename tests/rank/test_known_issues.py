"""The known-issues database: its loader refuses bad entries, the matcher grades matches, the check feeds
the ranking, and `dflash-doctor known-issues` lists what affects a deployment with pip-audit's exit codes."""

from __future__ import annotations

import copy
import json
import tomllib
from importlib import resources

import pytest

from dflash_doctor.evidence import EvidenceSet, Source, Status
from dflash_doctor.evidence.engine_facts import EngineSupport
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import LaunchConfig, Workload
from dflash_doctor.interpret.known_issues import (
    Deployment,
    MatchQuality,
    RuledOut,
    default_known_issues,
    evaluate,
    match_deployment,
    parse_known_issues,
)
from dflash_doctor.knowledge.causes import KnowledgeError, default_knowledge
from dflash_doctor.versions import parse_range, parse_version
from tests.conftest import run_cli

GOOD = {
    "schema": 1,
    "engine": "vllm",
    "runner_env": "VLLM_USE_V2_MODEL_RUNNER",
    "runner_default": [{"versions": "<0.22.0", "runner": "v1"}],
    "issue": [
        {
            "id": "x-1",
            "title": "t",
            "affected": ">=0.20.0,<0.22.0",
            "fixed_in": "0.22.0",
            "methods": ["dflash"],
            "conditions": {"drafter_swa": "mixed"},
            "symptoms": ["uniform-low"],
            "cause": "swa-ignored",
            "links": ["https://github.com/vllm-project/vllm/pull/1"],
            "summary": "s",
            "verified": "v",
        }
    ],
}


def _db(doc=GOOD):
    return parse_known_issues({"vllm.toml": doc})


def _broken(mutate):
    doc = copy.deepcopy(GOOD)
    mutate(doc["issue"][0])
    return doc


# --- the packaged data ---------------------------------------------------------------------------


def test_packaged_database_has_30_sourced_entries_across_engines():
    db = default_known_issues()
    assert len(db) >= 30
    assert {i.engine for i in db.issues} == {"vllm", "sglang", "vllm-ascend", "tensorrt-llm"}
    for i in db.issues:
        assert i.link.startswith("https://") and str(i.fixed_in) and len(i.verified) > 40, i.id


def test_every_implied_cause_has_rules_for_each_match_quality():
    k = default_knowledge()
    for cause in {i.cause for i in default_known_issues().issues}:
        for family in ("known-issue", "known-issue-likely", "known-issue-possible"):
            rules = [r for r in k.rules_for(f"{family}:{cause}") if r.cause == cause]
            assert rules and rules[0].weight > 0, f"{family}:{cause}"
    certain = k.rules_for("known-issue:engine-bug")[0].weight
    assert (
        certain
        > k.rules_for("known-issue-likely:engine-bug")[0].weight
        > k.rules_for("known-issue-possible:engine-bug")[0].weight
    )


# --- the loader fails loudly -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(fixd_in="0.22.0"), "unknown key"),
        (lambda d: d.update(fixed_in="0.21.0"), "inside its own affected range"),
        (lambda d: d.update(fixed_in="0.21.5", affected=">=0.20.0,<0.22.0"), "inside its own affected range"),
        (lambda d: d.update(affected=">=0.20.0"), "no upper bound"),
        (lambda d: d.update(affected=">=0.23.0,<0.24.0"), "reaches past fixed_in"),
        (lambda d: d.update(affected="0.20"), "not a clause"),
        (lambda d: d.update(fixed_in="soon"), "not a release version"),
        (lambda d: d.update(cause="gremlins"), "not a cause id"),
        (lambda d: d.update(links=[]), "links"),
        (lambda d: d.update(links=["http://example.com/fix"]), "links"),
        (lambda d: d.update(methods=["dflsah"]), "unknown method"),
        (lambda d: d.update(conditions={"drafter_sawa": "mixed"}), "unknown fact"),
        (lambda d: d.update(conditions={"drafter_swa": "some"}), "takes none, uniform, mixed"),
        (lambda d: d.update(conditions={"pd_disaggregation": "yes"}), "true or false"),
        (lambda d: d.update(conditions_any={"pd_disaggregation": True}), "single fact"),
        (lambda d: d.update(symptoms=["sad"]), "symptoms"),
        (lambda d: d.update(runner="v3"), "runner"),
        (lambda d: d.pop("verified"), "'verified'"),
        (lambda d: d.update(id="Bad Id"), "vllm.toml: issue[0].id: expected a string matching"),
    ],
)
def test_a_broken_entry_fails_loudly_naming_file_and_entry(mutate, message):
    with pytest.raises(KnowledgeError) as exc:
        _db(_broken(mutate))
    assert message in str(exc.value) and str(exc.value).startswith("vllm.toml: issue[0]") and "\n" not in str(exc.value)


def test_duplicate_ids_and_a_second_file_for_one_engine_are_refused():
    doc = copy.deepcopy(GOOD)
    doc["issue"].append(copy.deepcopy(doc["issue"][0]))
    with pytest.raises(KnowledgeError, match="duplicate id"):
        _db(doc)
    with pytest.raises(KnowledgeError, match="second file"):
        parse_known_issues({"a.toml": GOOD, "b.toml": GOOD})


def test_every_packaged_file_is_valid_toml_with_schema_1():
    folder = resources.files("dflash_doctor.interpret.known_issues")
    names = [p.name for p in folder.iterdir() if p.name.endswith(".toml")]
    assert sorted(names) == ["sglang.toml", "tensorrt-llm.toml", "vllm-ascend.toml", "vllm.toml"]
    for n in names:
        assert tomllib.loads(folder.joinpath(n).read_text("utf-8"))["schema"] == 1


# --- versions ----------------------------------------------------------------------------------------


def test_release_ordering_handles_pre_post_and_local_tags():
    order = ["0.11.0rc0", "0.11.0rc3", "0.11.0", "0.11.0.post1", "0.11.1", "v0.20.2rc1", "0.20.2+cu129", "1.0.0"]
    keys = [parse_version(v).key for v in order]
    assert keys == sorted(keys)
    assert parse_version("0.20.1+cu129").key == parse_version("0.20.1").key
    r = parse_range(">=0.20.0,<0.22.0")
    assert r.contains(parse_version("0.21.0")) and not r.contains(parse_version("0.22.0"))
    assert r.contains(parse_version("0.22.0rc1"))  # an rc of the fixing release still comes before it


# --- the matcher grades ------------------------------------------------------------------------------


def test_all_conditions_known_and_met_is_certain():
    issue = _db().issues[0]
    m = evaluate(issue, Deployment("vllm", "0.20.1", "dflash", facts={"drafter_swa": "mixed"}))
    assert m.quality == MatchQuality.CERTAIN and not m.unknown


def test_an_unknown_condition_on_an_affected_release_is_likely():
    m = evaluate(_db().issues[0], Deployment("vllm", "0.20.1", "dflash"))
    assert m.quality == MatchQuality.LIKELY and any("sliding" in u for u in m.unknown)


def test_two_unknown_conditions_on_an_affected_release_are_only_possible():
    doc = _broken(lambda d: d.update(conditions={"drafter_swa": "mixed", "pd_disaggregation": True}))
    issue = _db(doc).issues[0]
    assert evaluate(issue, Deployment("vllm", "0.20.1", "dflash")).quality == MatchQuality.POSSIBLE
    assert (
        evaluate(
            issue, Deployment("vllm", "0.20.1", None, facts={"drafter_swa": "mixed", "pd_disaggregation": True})
        ).quality
        == MatchQuality.LIKELY
    )  # only the method unknown


def test_an_unknown_release_is_only_possible():
    m = evaluate(_db().issues[0], Deployment("vllm", None, "dflash", facts={"drafter_swa": "mixed"}))
    assert m.quality == MatchQuality.POSSIBLE and "release" in m.unknown[0]


@pytest.mark.parametrize(
    "dep, reason",
    [
        (Deployment("vllm", "0.22.0", "dflash", facts={"drafter_swa": "mixed"}), "has the fix"),
        (Deployment("vllm", "0.19.1", "dflash"), "outside the affected range"),
        (Deployment("vllm", "0.20.1", "eagle3"), "method eagle3"),
        (Deployment("vllm", "0.20.1", "dflash", facts={"drafter_swa": "none"}), "not the drafter's sliding"),
        (Deployment("sglang", "0.20.1", "dflash"), "engine is sglang"),
    ],
)
def test_a_known_contradicting_fact_rules_the_entry_out(dep, reason):
    out = evaluate(_db().issues[0], dep)
    assert isinstance(out, RuledOut) and reason in out.reason


def test_runner_from_the_release_default_or_unknown_after_it():
    doc = _broken(lambda d: d.update(runner="v2", conditions={}))
    db = _db(doc)
    assert match_deployment(db, Deployment("vllm", "0.21.0", "dflash")) == []  # v1 by default before 0.22
    assert match_deployment(db, Deployment("vllm", "0.21.0", "dflash", runner="v2"))[0].quality == MatchQuality.CERTAIN
    doc2 = _broken(lambda d: d.update(runner="v2", conditions={}, affected=">=0.20.0,<0.23.0", fixed_in="0.23.0"))
    assert match_deployment(_db(doc2), Deployment("vllm", "0.22.0", "dflash"))[0].quality == MatchQuality.LIKELY


def test_conditions_any_needs_one_of_them():
    doc = _broken(
        lambda d: d.update(
            conditions={}, conditions_any={"drafter_ships_lm_head": True, "drafter_ships_embed_tokens": True}
        )
    )
    issue = _db(doc).issues[0]
    dep = lambda **f: Deployment("vllm", "0.20.1", "dflash", facts=f)  # noqa: E731
    assert (
        evaluate(issue, dep(drafter_ships_lm_head=False, drafter_ships_embed_tokens=True)).quality
        == MatchQuality.CERTAIN
    )
    assert isinstance(evaluate(issue, dep(drafter_ships_lm_head=False, drafter_ships_embed_tokens=False)), RuledOut)
    assert evaluate(issue, dep(drafter_ships_lm_head=False)).quality == MatchQuality.LIKELY


def test_packaged_data_dflash_on_0_20_1_and_0_33_0():
    db = default_known_issues()
    old = {m.issue.id for m in match_deployment(db, Deployment("vllm", "0.20.1", "dflash"))}
    assert {"vllm-40727-dflash-layer-ids-raw", "vllm-47914-dflash-swa-mixed-ignored"} <= old
    assert match_deployment(db, Deployment("vllm", "0.33.0", "dflash")) == []


# --- the check and the ranking -----------------------------------------------------------------------


def _typed(kind, spec):
    """Typed payloads from the few fields each test states (the rest from a real fixture config)."""
    import dataclasses

    from dflash_doctor.evidence.model_facts import LayerAttention
    from dflash_doctor.evidence.payloads import LaunchConfig, Workload
    from dflash_doctor.models.engine_support import lookup
    from dflash_doctor.models.facts import drafter_facts, target_facts
    from tests.conftest import FIXTURES

    if kind == LaunchConfig:
        return LaunchConfig(
            engine="vllm",
            model=None,
            method=spec.get("method"),
            env=spec.get("env", {}),
            args=spec.get("args", {}),
            speculative=spec.get("speculative"),
        )
    if kind == DrafterFacts:
        base = drafter_facts(str(FIXTURES / "models" / "Qwen3-8B-DFlash-b16"), with_weights=False)
        layers = tuple(
            LayerAttention(i, x["attention"], None, x["attention"] == "sliding")
            for i, x in enumerate(spec.get("layers", []))
        )
        return dataclasses.replace(base, **{k: v for k, v in spec.items() if k != "layers"}, layers=layers)
    if kind == TargetFacts:
        base = target_facts(str(FIXTURES / "models" / "Qwen3-8B"))
        return dataclasses.replace(base, **{k: (tuple(v) if k == "architectures" else v) for k, v in spec.items()})
    if kind == Workload:
        return Workload(**spec)
    if kind == EngineSupport:
        return lookup(spec["engine"], spec["version"])
    raise AssertionError(kind)


def _evidence(engine="vllm", version="0.24.0", launch=None, drafter=None, target=None, workload=None, support=False):
    from dflash_doctor.evidence.payloads import EngineId

    ev = EvidenceSet()
    ev.add(f"{engine} {version}", Source("flag", "--engine"), EngineId(engine, version))
    if launch is not None:
        ev.add("launch", Source("flag", "--launch"), _typed(LaunchConfig, launch))
    if drafter is not None:
        ev.add("drafter", Source("file", "drafter/config.json"), _typed(DrafterFacts, drafter))
    if target is not None:
        ev.add("target", Source("file", "target/config.json"), _typed(TargetFacts, target))
    if workload is not None:
        ev.add("workload", Source("flag", "--temperature"), _typed(Workload, workload))
    if support:
        ev.add(
            "row",
            Source("derived", "engine_support.toml"),
            _typed(EngineSupport, {"engine": engine, "version": version}),
        )
    return ev


def _run(ev):
    from checks.known_engine_bugs import KnownIssues

    return KnownIssues().run(ev)


def _names(findings):
    return {o.name for f in findings for o in f.observations}


def test_v2_runner_dflash_with_padded_vocab_is_a_certain_engine_bug():
    ev = _evidence(
        version="0.24.0",
        launch={"method": "dflash", "env": {"VLLM_USE_V2_MODEL_RUNNER": "1"}, "args": {}},
        drafter={"method": "dflash", "vocab_size": 152064, "layers": []},
        target={"architectures": ["Qwen2ForCausalLM"], "vocab_size": 152576, "quantization": None},
    )
    findings = _run(ev)
    assert "known-issue:engine-bug" in _names(findings)
    hit = next(f for f in findings if "46435" in f.message)
    assert hit.status == Status.FAIL and "fixed in 0.25.0" in hit.message and "vLLM PR #46435" in hit.message
    assert ev.item(LaunchConfig).ref in hit.refs


def test_a_p_eagle_drafter_read_from_its_config_is_matched_as_p_eagle():
    """The drafter readers call P-EAGLE `peagle`, the database `p-eagle`: with only the drafter naming the method
    (no launch method), the entry for P-EAGLE on the V2 runner was ruled out as 'method peagle is not p-eagle'."""
    from dflash_doctor.interpret.known_issues.deployment import deployment_from_evidence

    v2 = {"env": {"VLLM_USE_V2_MODEL_RUNNER": "1"}, "args": {}}
    peagle = {"method": "peagle", "architectures": ["LlamaForCausalLMEagle3"], "layers": []}
    ev = _evidence(version="0.21.0", launch=v2, drafter=peagle)
    assert deployment_from_evidence(ev).method == "p-eagle"
    hit = next(f for f in _run(ev) if "43010" in f.message)
    assert hit.status == Status.FAIL and "known-issue:engine-bug" in {o.name for o in hit.observations}
    assert ev.item(DrafterFacts).ref in hit.refs
    # the launch's own word still comes first: served as eagle3 without parallel drafting, it is not P-EAGLE there
    plain = _evidence(version="0.21.0", launch={"method": "eagle3", **v2}, drafter=peagle)
    assert deployment_from_evidence(plain).method == "eagle3"
    assert not [f for f in _run(plain) if "43010" in f.message and f.status == Status.FAIL]


def test_covered_entries_are_cited_not_weighed_when_the_support_table_decides():
    launch = {"method": "dflash", "args": {}}
    drafter = {
        "method": "dflash",
        "layers": [{"attention": "sliding"}, {"attention": "full"}],
        "speculators_format": False,
    }
    alone = _names(_run(_evidence(version="0.20.1", launch=launch, drafter=drafter)))
    assert {"known-issue:swa-ignored", "known-issue:layer-offset"} <= alone
    with_table = _names(_run(_evidence(version="0.20.1", launch=launch, drafter=drafter, support=True)))
    assert {"known-issue-cited:swa-ignored", "known-issue-cited:layer-offset"} <= with_table
    assert not any(n.startswith("known-issue:") for n in with_table)


def test_a_live_curve_downgrades_an_entry_whose_bug_leaves_nothing_accepted():
    from dflash_doctor.evidence.acceptance import AcceptanceSummary

    acc = AcceptanceSummary(
        mean_acceptance_length=2.6,
        per_position=(0.8, 0.5, 0.3),
        drafts=5000,
        drafted=15000,
        accepted=8000,
        k=3,
        draft_acceptance_rate=0.53,
        intervals=10,
        formats=("test",),
    )
    ev = _evidence(
        version="0.24.0",
        launch={"method": "dflash", "env": {"VLLM_USE_V2_MODEL_RUNNER": "1"}, "args": {}},
        drafter={"method": "dflash", "vocab_size": 152064, "layers": []},
        target={"architectures": ["X"], "vocab_size": 152576, "quantization": None},
    )
    ev.add("acc", Source("file", "log"), acc)
    names = _names(_run(ev))
    assert "known-issue-likely:engine-bug" in names and "known-issue:engine-bug" not in names


def test_no_match_is_an_ok_finding_and_an_unknown_engine_could_not_check():
    ok = _run(_evidence(version="0.33.0", launch={"method": "dflash", "args": {}}))
    # no match, but a named release clear of every known bug of a cause says so (known-issue-clear:CAUSE)
    assert [f.status for f in ok] == [Status.OK] and all(n.startswith("known-issue-clear:") for n in _names(ok))
    assert {"known-issue-clear:swa-ignored", "known-issue-clear:layer-offset"} <= _names(ok)
    unknown = _run(_evidence(engine="llama.cpp", version="b9000"))
    assert unknown[0].status == Status.COULD_NOT_CHECK


def test_a_release_inside_a_bugs_range_is_not_clear_of_it():
    # 0.24.0 is inside the sliding-window bugs' range: those entries match or are ruled out by a condition, never
    # by the release, so no clear observation for swa-ignored (a clear one for layer-offset, fixed in 0.22.0)
    names = _names(_run(_evidence(version="0.24.0", launch={"method": "dflash", "args": {}})))
    assert "known-issue-clear:swa-ignored" not in names
    assert "known-issue-clear:layer-offset" in names


def test_a_certain_match_moves_its_cause_in_the_ranking():
    from dflash_doctor.rank.scoring import rank

    ev = _evidence(
        version="0.24.0",
        launch={"method": "dflash", "env": {"VLLM_USE_V2_MODEL_RUNNER": "1"}, "args": {}},
        drafter={"method": "dflash", "vocab_size": 152064, "layers": []},
        target={"architectures": ["X"], "vocab_size": 152576, "quantization": None},
    )
    ranking = rank(_run(ev), ev, default_knowledge())
    causes = {c.id: c for c in ranking.causes}
    assert "engine-bug" in causes
    assert any(
        c.observation == "known-issue:engine-bug" and "46435" in c.text for c in causes["engine-bug"].evidence_for
    )


# --- the command ---------------------------------------------------------------------------------------


def test_cli_old_vllm_dflash_lists_the_layer_fix_and_swa_support_and_exits_1():
    r = run_cli("known-issues", "--engine", "vllm==0.20.1", "--method", "dflash")
    assert r.returncode == 1, r.stderr
    assert "pull/40727" in r.stdout and "fixed in 0.22.0" in r.stdout
    assert "sliding" in r.stdout and "pull/47914" in r.stdout


def test_cli_current_vllm_dflash_lists_nothing_and_exits_0():
    r = run_cli("known-issues", "--engine", "vllm==0.33.0", "--method", "dflash")
    assert r.returncode == 0, r.stderr
    assert "40727" not in r.stdout and "47914" not in r.stdout and "No known issues affect" in r.stdout


def test_cli_lists_the_whole_database_with_links_and_fixed_in():
    r = run_cli("known-issues", "--format", "json")
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert doc["schema"] == "dflash-doctor/known-issues@1" and len(doc["issues"]) >= 30
    assert all(i["links"] and i["fixed_in"] for i in doc["issues"])


def test_cli_json_for_a_deployment_names_quality_and_unknowns():
    r = run_cli(
        "known-issues",
        "--engine",
        "vllm==0.24.0",
        "--method",
        "dflash",
        "--runner",
        "v2",
        "--fact",
        "vocab_padded=true",
        "--format",
        "json",
    )
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["affected"] >= 1
    m = next(x for x in doc["matches"] if x["id"] == "vllm-46435-v2-dflash-lm-head-vocab-padding")
    assert m["quality"] == "certain" and m["issue"]["fixed_in"] == "0.25.0"


def test_cli_release_unknown_lists_possible_matches_but_exits_0():
    r = run_cli("known-issues", "--engine", "vllm", "--method", "dflash", "--format", "markdown")
    assert r.returncode == 0 and "| possible |" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("--engine", "vllm==zero"),
        ("--engine", "nope==1.0"),
        ("--engine", "vllm==0.20.1", "--method", "magic"),
        ("--engine", "vllm==0.20.1", "--fact", "pd_disaggregation"),
        ("--engine", "vllm==0.20.1", "--fact", "x=1"),
        ("--engine", "vllm==0.20.1", "--runner", "v9"),
        ("--method", "dflash"),
    ],
)
def test_cli_usage_errors_exit_2_with_one_line(args):
    r = run_cli("known-issues", *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.startswith("error:")


def test_one_version_reader_orders_releases_as_pep_440_and_drops_the_local_tag():
    from dflash_doctor.versions import parse_version, release_of

    order = ["0.5.15.dev3", "0.5.15rc1", "0.5.15", "v0.5.15+cu129", "0.5.15.post1", "0.5.16"]
    keys = [parse_version(v) for v in order]
    assert keys == sorted(keys) and keys[2] == keys[3]
    assert str(keys[3]) == "v0.5.15+cu129"  # the spelling is kept for messages
    assert release_of("0.22.0rc1") == release_of("0.22.0.dev5+g1a2b") == parse_version("0.22.0")
