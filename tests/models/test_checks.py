"""The drafter/pairing/engine checks, fed evidence the way diagnose gathers it."""

from __future__ import annotations

import json

from dflash_doctor.collect.inputs import FileInputs, gather_files
from dflash_doctor.evidence import Status
from dflash_doctor.evidence.engine_facts import EngineSupport
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.services.doctor import build_report


def run(fixtures_dir, drafter=None, target=None, engine=None, log=None, launch=None):
    m = fixtures_dir / "models"
    ev = gather_files(
        FileInputs(
            drafter=str(m / drafter) if drafter else None,
            target=str(m / target) if target else None,
            engine=engine,
            logs=[str(fixtures_dir / log)] if log else [],
        )
    )
    report, _ = build_report(ev)
    obs = {o.name for f in report.findings for o in f.observations}
    by_check: dict[str, list] = {}
    for f in report.findings:
        by_check.setdefault(f.check_id, []).append(f)
    return ev, report, obs, by_check


def test_seed_scenario_yields_swa_ignored_raw_map_and_undertrained_card(fixtures_dir):
    ev, report, obs, checks = run(
        fixtures_dir, "Qwen3.6-27B-DFlash", "Qwen3.6-27B", "vllm==0.20.1", log="seed/vllm-0.20.1.log"
    )
    assert ev.has(DrafterFacts) and ev.has(TargetFacts) and ev.has(EngineSupport)
    assert {
        "drafter-swa:present",
        "engine-swa:ignored",
        "engine-layer-map:raw",
        "card:under-training",
        "pairing:ok",
        "rope:ok",
        "vocab-map:ok",
        "method:ok",
    } <= obs
    assert checks["engine-drafter-swa"][0].status == Status.FAIL
    assert report.causes[0].id == "swa-ignored"


def test_seed_drafter_on_a_fixed_engine_is_honoured_or_refused_not_ignored(fixtures_dir):
    _, report, obs, checks = run(fixtures_dir, "Qwen3.6-27B-DFlash", engine="vllm==0.25.0")
    # refused is a fact about the launch: a failing finding, and no window or tap observation at all
    assert "engine-launch:refused" in obs and not any(o.startswith(("engine-swa:", "engine-layer-map:")) for o in obs)
    f = checks["engine-drafter-swa"][0]
    assert f.status == Status.FAIL and "40898" in " ".join(f.details) and f.remedy
    assert {c.id for c in report.causes if c.confidence > 0.2}.isdisjoint({"swa-ignored", "layer-offset"})
    _, _, obs, _ = run(fixtures_dir, "Qwen3.6-27B-DFlash", engine="vllm==0.29.0")
    assert "engine-swa:honoured" in obs


def test_full_attention_drafter_says_swa_absent_and_pairs(fixtures_dir):
    _, _, obs, checks = run(fixtures_dir, "Qwen3-8B-DFlash-b16", "Qwen3-8B", "vllm==0.20.1")
    assert "drafter-swa:absent" in obs and "pairing:ok" in obs and "card:non-thinking" in obs
    assert not any(o.startswith("engine-swa:") for o in obs)
    assert "engine-layer-map:raw" in obs


def test_wrong_target_is_a_pairing_mismatch_naming_the_hidden_size(fixtures_dir):
    _, report, obs, checks = run(fixtures_dir, "Qwen3-8B-DFlash-b16", "Qwen3-4B")
    assert "pairing:mismatch" in obs and "pairing:ok" not in obs
    msg = checks["drafter-target-pairing"][0].message
    assert "hidden size 4096; target has 2560" in msg and "fc weight takes 20480" in msg
    _, _, obs, checks = run(fixtures_dir, "Qwen3.6-27B-DFlash", "Qwen3-8B")
    assert "pairing:mismatch" in obs and "64-layer target" in checks["drafter-target-pairing"][0].message


def test_eagle3_without_d2t_is_vocab_map_missing_and_with_d2t_ok(fixtures_dir):
    _, _, obs, _ = run(fixtures_dir, "Qwen3-8B-EAGLE3-no-d2t", "Qwen3-8B")
    assert "vocab-map:missing" in obs
    _, _, obs, _ = run(fixtures_dir, "Qwen3-8B-EAGLE3", "Qwen3-8B")
    assert "vocab-map:ok" in obs and "vocab-map:missing" not in obs


def test_truncated_shard_fails_the_weights_check(fixtures_dir):
    _, _, _, checks = run(fixtures_dir, "tiny-dflash-truncated")
    f = checks["drafter-weights"][0]
    assert f.status == Status.FAIL and "model-00002-of-00002.safetensors" in f.message and "truncated" in f.message


def test_header_only_weights_warn_but_shapes_are_still_checked(fixtures_dir):
    _, _, _, checks = run(fixtures_dir, "Qwen3-8B-DFlash-b16")
    statuses = [f.status for f in checks["drafter-weights"]]
    assert statuses == [Status.WARN, Status.OK]


def test_rope_theta_mismatch(fixtures_dir, tmp_path):
    cfg = json.loads((fixtures_dir / "models" / "Qwen3-8B" / "config.json").read_text())
    cfg["rope_theta"] = 10000
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "config.json").write_text(json.dumps(cfg))
    _, _, obs, _ = run(fixtures_dir, "Qwen3-8B-DFlash-b16", str(tmp_path / "t"))
    assert "rope:mismatch" in obs


def test_method_mismatch_from_the_launch_evidence(fixtures_dir):
    # the seed log launches method 'dflash'; an EAGLE-3 drafter there is a mismatch
    _, _, obs, checks = run(fixtures_dir, "Qwen3-8B-EAGLE3", log="seed/vllm-0.20.1.log")
    assert "method:mismatch" in obs


def test_unreadable_drafter_is_a_could_not_check_finding_in_diagnose(fixtures_dir, tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "config.json").write_text("[]")
    _, report, _, checks = run(fixtures_dir, str(tmp_path / "d"))
    assert any("not an object" in f.message for f in checks["inputs"])
    assert checks["drafter-swa"][0].status == Status.COULD_NOT_CHECK


def test_engine_outside_the_table_leaves_engine_checks_could_not_check(fixtures_dir):
    ev, _, _, checks = run(fixtures_dir, "Qwen3.6-27B-DFlash", engine="vllm==0.9.0rc1")
    ev2, _, _, checks2 = run(fixtures_dir, "Qwen3.6-27B-DFlash", engine="tgi==3.0.0")
    assert not ev2.has(EngineSupport)
    assert checks2["engine-layer-map"][0].status == Status.COULD_NOT_CHECK
    assert "not in the engine-support table" in checks2["engine-layer-map"][0].message


def test_rotated_target_quantisation_is_flagged(fixtures_dir, tmp_path):
    cfg = json.loads((fixtures_dir / "models" / "Qwen3-8B" / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "compressed-tensors", "transform_config": {"type": "hadamard"}}
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "config.json").write_text(json.dumps(cfg))
    _, _, obs, _ = run(fixtures_dir, "Qwen3-8B-DFlash-b16", str(tmp_path / "t"))
    assert "quant:rotation" in obs
    _, _, obs, checks = run(fixtures_dir, "Qwen3-8B-DFlash-b16", "Qwen3-8B")
    assert "quant:rotation" not in obs and checks["target-quant-rotation"][0].status == Status.OK


def test_peagle_drafter_launched_as_eagle3_is_how_vllm_serves_it(fixtures_dir, tmp_path):
    """vLLM has no `peagle` method: it serves P-EAGLE as eagle3 with parallel_drafting (its speculators loader
    turns a `peagle` config into exactly that). Not a mismatch; without parallel_drafting, a warning."""
    import shutil

    d = tmp_path / "pe"
    d.mkdir()
    shutil.copy(fixtures_dir / "configs" / "real" / "specforge--qwen3-8b-peagle.json", d / "config.json")

    def launch_check(spec: str):
        ev = gather_files(
            FileInputs(
                drafter=str(d), engine="vllm==0.29.0", launch=f"vllm serve Qwen/Qwen3-8B --speculative-config '{spec}'"
            )
        )
        report, _ = build_report(ev)
        (f,) = [f for f in report.findings if f.check_id == "launch-method"]
        return f

    ok = launch_check('{"method": "eagle3", "model": "x", "num_speculative_tokens": 5, "parallel_drafting": true}')
    assert ok.status == Status.OK and "parallel_drafting" in ok.message
    warn = launch_check('{"method": "eagle3", "model": "x", "num_speculative_tokens": 5}')
    assert warn.status == Status.WARN and not warn.observations and "parallel_drafting" in warn.remedy
    bad = launch_check('{"method": "dflash", "model": "x", "num_speculative_tokens": 5}')
    assert bad.status == Status.FAIL and {o.name for o in bad.observations} == {"method:mismatch"}
