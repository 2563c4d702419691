"""`healthy` is a claim: it needs τ compared with what the deployment should reach — the pair's baseline, or
what trained drafters of its method reach at its k (interpret/reference.toml). Where neither can be had, or the
method decides and is unknown, the verdict is insufficient-data, never healthy."""

import json

import pytest

from tests.conftest import FIXTURES


@pytest.mark.parametrize("log,method", [("sglang-0.5.2.log", "eagle3"), ("vllm-0.8.3.log", "eagle3")])
def test_a_method_band_can_say_healthy_and_names_the_band(cli, log, method):
    proc = cli("diagnose", "--log", str(FIXTURES / "logs" / log), "--format", "json")
    report = json.loads(proc.stdout)
    assert report["verdict"] == "healthy", report["notes"]
    tvb = next(f for f in report["findings"] if f["check"] == "tau-vs-baseline")
    assert f"trained {method} drafters" in tvb["message"] and tvb["status"] == "ok"
    assert proc.returncode == 0


def test_an_unnamed_method_that_decides_the_level_gives_insufficient_data(cli, tmp_path):
    """Metrics lines alone name k but not the method: τ 1.90 at k = 2 is in EAGLE-3's band (≥ 1.83) and below
    MTP's (≥ 1.96: native MTP heads land the second token far more often)."""
    log = tmp_path / "k2.log"
    log.write_text(
        "".join(
            f"(APIServer pid=7) INFO 05-14 09:{10 + i:02d}:00 [metrics.py:101] SpecDecoding metrics: Mean acceptance "
            "length: 1.90, Accepted throughput: 90.00 tokens/s, Drafted throughput: 200.00 tokens/s, Accepted: 2700 "
            "tokens, Drafted: 6000 tokens, Per-position acceptance rate: 0.600, 0.300, Avg Draft acceptance rate: "
            "45.0%\n"
            for i in range(30)
        )
    )
    proc = cli("diagnose", "--log", str(log), "--format", "json")
    report = json.loads(proc.stdout)
    assert report["verdict"] == "insufficient-data"
    assert any("depends on the method" in n and "--launch" in n for n in report["notes"])
    assert proc.returncode == 3  # exit codes follow the verdict: insufficient-data is 3


def test_no_band_to_compare_with_is_not_healthy(cli, tmp_path):
    """An n-gram proposer has no healthy floor: its τ depends on how repetitive the text is."""
    log = tmp_path / "ngram.log"
    src = (FIXTURES / "logs" / "vllm-0.11.0.log").read_text().splitlines()
    log.write_text("\n".join(x for x in src if "SpecDecoding metrics" in x) + "\n")  # metrics lines only
    proc = cli(
        "diagnose",
        "--log",
        str(log),
        "--launch",
        'vllm serve Q --speculative-config \'{"method": "ngram", "num_speculative_tokens": 5, '
        '"prompt_lookup_max": 4}\'',
        "--format",
        "json",
    )
    report = json.loads(proc.stdout)
    assert report["verdict"] == "insufficient-data"
    assert any("no healthy band" in n for n in report["notes"])
    assert proc.returncode == 3


def test_healthy_needs_the_pair_at_its_baseline(cli):
    proc = cli("check", "bundle", str(FIXTURES / "hosts" / "healthy-qwen3-8b"), "--format", "json")
    report = json.loads(proc.stdout)
    obs = {o["name"] for f in report["findings"] for o in f["observations"]}
    assert report["verdict"] == "healthy" and "tau:at-baseline" in obs
