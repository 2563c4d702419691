"""benchmarks/eval_cases.py: the evaluation harness scores cases the way the project is judged."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

HARNESS = ROOT / "benchmarks" / "eval_cases.py"
SHARED = ROOT.parent / "shared"


def _dd(tmp_path: Path) -> str:
    """A dflash-doctor entry point for this checkout, whatever the venv layout."""
    exe = tmp_path / "dflash-doctor"
    exe.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from dflash_doctor.cli.app import main\nmain()\n"
    )
    exe.chmod(0o755)
    return str(exe)


def _case(root: Path, name: str, log: Path, meta: dict) -> None:
    d = root / name
    d.mkdir()
    shutil.copy(log, d / "engine.log")
    (d / "case.json").write_text(json.dumps(meta))


def test_harness_scores_a_small_case_directory(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    seed = FIXTURES / "seed" / "vllm-0.20.1.log"
    healthy = FIXTURES / "scenarios" / "healthy" / "vllm.log"
    _case(
        cases,
        "a-seed",
        seed,
        {
            "label_quality": "A",
            "expected_causes": ["swa-ignored"],
            "engine": "vllm",
            "engine_version": "0.20.1",
            "expected_metrics": {"mean_acceptance_length": 1.1828, "num_drafts": 119678},
        },
    )
    _case(
        cases,
        "b-healthy",
        healthy,
        {
            "label_quality": "U",
            "expected_causes": [],
            "acceptable_causes": ["healthy"],
            "expected_metrics": {"mean_acceptance_length": 9.99},
        },
    )
    out = subprocess.run(
        [sys.executable, str(HARNESS), str(cases), "--dd", _dd(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    doc = json.loads(out.stdout)
    c = doc["cases"]
    assert (c["n"], c["tau_n"], c["tau_ok"]) == (2, 2, 1)  # the healthy case's wrong expectation is caught
    assert (c["labelled"], c["decisive"], c["decisive_ok"]) == (1, 1, 1)
    assert c["u"] == 1 and c["u_bad"] == 0
    assert 0.0 <= doc["brier_all"] <= 1.0 and doc["reliability"]


@pytest.mark.skipif(
    not (SHARED / "tools" / "score-cases").exists() or not (SHARED / "cases").is_dir(),
    reason="the shared dev set and its judge are not beside this checkout",
)
def test_harness_agrees_with_the_judge_on_the_dev_set(tmp_path):
    dd = _dd(tmp_path)
    judge = (
        subprocess.run(
            [str(SHARED / "tools" / "score-cases"), "--dd", dd, str(SHARED / "cases")],
            capture_output=True,
            text=True,
            timeout=600,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    ours = subprocess.run(
        [sys.executable, str(HARNESS), str(SHARED / "cases"), "--dd", dd], capture_output=True, text=True, timeout=600
    ).stdout
    assert judge.startswith("score:") and judge in ours.splitlines()
