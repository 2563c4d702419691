"""The seed scenario end to end through `diagnose`: the arithmetic, the schema and the ranked causes."""

import json

from tests.conftest import FIXTURES

SEED_LOG = str(FIXTURES / "seed" / "vllm-0.20.1.log")


def test_seed_log_json_has_schema_tau_and_ranked_causes(cli):
    proc = cli("diagnose", "--log", SEED_LOG, "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["schema"] == "dflash-doctor/report@1"
    acc = report["acceptance"]
    assert abs(acc["mean_acceptance_length"] - 1.18) <= 0.005
    assert acc["k"] == 15
    assert abs(acc["per_position"][0] - 0.166) < 0.002 and abs(acc["per_position"][1] - 0.017) < 0.002
    assert all(r == 0 for r in acc["per_position"][2:])
    assert report["verdict"] == "problem"
    causes = report["causes"]
    assert causes, "no ranked causes"
    confidences = [c["confidence"] for c in causes]
    assert confidences == sorted(confidences, reverse=True)
    for c in causes:
        assert {"id", "confidence", "evidence_for", "evidence_against", "fix", "next_step"} <= c.keys()


def test_seed_log_terminal_shows_curve_and_causes(cli):
    proc = cli("diagnose", "--log", SEED_LOG, "-v")  # the full report (the default is the one-screen summary)
    out = proc.stdout
    assert "τ = 1.18" in out
    assert "Causes, by what fixing them buys" in out and "1. " in out
    assert "pos  1" in out and "pos 3–15" in out and "█" in out  # the bar chart, the dead tail folded
    full = cli("diagnose", "--log", SEED_LOG, "-vv").stdout
    assert "pos 15" in full


def test_drafts_weighting_not_mean_of_means(tmp_path, cli):
    # Two intervals: 100 drafts at τ 3.0 and 900 drafts at τ 1.0 -> weighted τ 1.2, mean of means 2.0.
    lines = [
        "INFO 05-14 09:00:00 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 3.00, Accepted "
        "throughput: 20.00 tokens/s, "
        "Drafted throughput: 20.00 tokens/s, Accepted: 200 tokens, Drafted: 200 tokens, Per-position acceptance "
        "rate: 1.000, 1.000, "
        "Avg Draft acceptance rate: 100.0%",
        "INFO 05-14 09:00:10 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 1.00, Accepted "
        "throughput: 0.00 tokens/s, "
        "Drafted throughput: 180.00 tokens/s, Accepted: 0 tokens, Drafted: 1800 tokens, Per-position acceptance "
        "rate: 0.000, 0.000, "
        "Avg Draft acceptance rate: 0.0%",
    ]
    log = tmp_path / "two.log"
    log.write_text("\n".join(lines) + "\n")
    report = json.loads(cli("diagnose", "--log", str(log), "--format", "json").stdout)
    assert abs(report["acceptance"]["mean_acceptance_length"] - 1.2) < 1e-9
    assert report["acceptance"]["per_position"] == [0.1, 0.1]


def test_a_missing_log_is_one_error_line_not_a_report(cli, tmp_path):
    proc = cli("diagnose", "--log", str(tmp_path / "absent.log"), "--format", "json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: --log ") and "absent.log: no such file" in proc.stderr
    assert "\nhint: " in proc.stderr and len(proc.stderr.splitlines()) == 2


def test_bad_engine_flag_is_a_usage_error(cli):
    proc = cli("diagnose", "--log", SEED_LOG, "--engine", "vllm==0.20.1 ; rm -rf /")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_k_advice_is_withheld_for_a_broken_curve(cli):
    report = json.loads(cli("diagnose", "--log", SEED_LOG, "--format", "json").stdout)
    k = next(f for f in report["findings"] if f["check"] == "k-choice")
    assert k["status"] == "warn" and "fix the ranked causes first" in k["message"]
    assert "block_size − 1" in k["remedy"]
