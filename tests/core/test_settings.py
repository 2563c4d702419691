"""Settings resolved once at the CLI and passed down: every command sees the same knowledge and baselines.

Before, `check host` / `check bundle` built their knowledge without DFLASH_DOCTOR_KNOWLEDGE, and with
DFLASH_DOCTOR_BASELINES the tau-vs-baseline check saw the new pair while the ranking said "no pair baseline".
"""

from __future__ import annotations

import ast
import json

from dflash_doctor.settings import Settings
from tests.conftest import FIXTURES, ROOT, run_cli

EXTRA_CAUSE = """
schema = 1
[[cause]]
id = "acme-bug"
title = "The ACME load balancer strips drafts"
prior = -1.0
fix = "bypass the balancer"
next_step = "look at the balancer"
decided_by = ["launch"]
[[rule]]
observation = "signature:cliff-after-first"
cause = "acme-bug"
weight = 3.0
text = "a cliff is what the balancer does"
"""


def test_knowledge_from_the_environment_reaches_check_bundle(tmp_path):
    extra = tmp_path / "acme.toml"
    extra.write_text(EXTRA_CAUSE)
    res = run_cli(
        "check",
        "bundle",
        str(FIXTURES / "hosts" / "seed"),
        "--format",
        "json",
        env={"DFLASH_DOCTOR_KNOWLEDGE": str(extra)},
    )
    assert res.returncode == 1, res.stderr
    assert "acme-bug" in [c["id"] for c in json.loads(res.stdout)["causes"]]


def test_baselines_from_the_environment_reach_the_check_and_the_ranking_alike(tmp_path):
    extra = tmp_path / "pair.toml"
    extra.write_text(
        'schema = 1\n[[drafter]]\nid = "acme/Tiny-DFlash"\nmethod = "dflash"\nk = 15\n'
        'trust = "published"\nsource = "ACME model card"\n[drafter.tau]\nany = 6.0\n'
    )
    log = tmp_path / "x.log"
    log.write_text(
        (FIXTURES / "seed" / "vllm-0.20.1.log").read_text().replace("z-lab/Qwen3.6-27B-DFlash", "acme/Tiny-DFlash")
    )
    res = run_cli("diagnose", "--log", str(log), "--format", "json", env={"DFLASH_DOCTOR_BASELINES": str(extra)})
    doc = json.loads(res.stdout)
    tvb = [f for f in doc["findings"] if f["check"] == "tau-vs-baseline"]
    assert tvb and "acme/Tiny-DFlash" in tvb[0]["message"]
    assert not any("No published baseline" in n for n in doc["notes"])


def test_bad_knowledge_in_the_environment_is_a_usage_error_for_every_command(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'schema = 1\n[[rule]]\nobservation = "engine-swa:ignore"\ncause = "swa-ignored"\nweight = 1.0\ntext = "t"\n'
    )
    for argv in (
        ("diagnose", "--log", str(FIXTURES / "seed" / "vllm-0.20.1.log")),
        ("check", "bundle", str(FIXTURES / "hosts" / "seed")),
    ):
        res = run_cli(*argv, env={"DFLASH_DOCTOR_KNOWLEDGE": str(bad)})
        assert res.returncode == 2 and "no check declares" in res.stderr, res.stderr


def test_settings_from_the_environment():
    s = Settings.from_env(
        {
            "DFLASH_DOCTOR_GREP": "0",
            "DFLASH_DOCTOR_WORKERS": "1",
            "HF_HOME": "/h",
            "NO_COLOR": "1",
            "DFLASH_DOCTOR_KNOWLEDGE": "/a.toml:/b.toml",
            "COLUMNS": "300",
        },
        knowledge=("/k.toml",),
    )
    assert (s.grep, s.workers, s.hf_cache, s.color, s.columns) == (False, 1, "/h/hub", False, 300)
    assert s.knowledge_files == ("/k.toml", "/a.toml", "/b.toml")
    assert Settings.from_env({"HF_HUB_CACHE": "/c", "HF_HOME": "/h"}).hf_cache == "/c"
    assert Settings.from_env({"TERM": "dumb"}).color is False


def test_no_environment_read_below_cli():
    """Settings are resolved at the CLI (dflash_doctor/cli/ and settings.py); nothing else reads os.environ."""
    offenders = []
    for path in sorted((ROOT / "dflash_doctor").rglob("*.py")) + sorted((ROOT / "checks").glob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("dflash_doctor/cli/") or rel == "dflash_doctor/settings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("environ", "getenv", "environb")
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
            ):
                offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, offenders
