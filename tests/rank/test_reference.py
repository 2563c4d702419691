"""Method reference bands (interpret/reference.toml): every figure cited, bands built the documented way, a pair
baseline overriding the method band, the dead band, and a loader that refuses bad data."""

from __future__ import annotations

import copy
import math
import tomllib
from importlib import resources

import pytest

from dflash_doctor.interpret.reference import band, default_reference, healthy_band, method_prior, parse_reference
from dflash_doctor.knowledge.causes import KnowledgeError


def _data():
    return tomllib.loads(resources.files("dflash_doctor.interpret").joinpath("reference.toml").read_text("utf-8"))


def test_every_figure_names_its_source_dataset_and_pair():
    ref = default_reference()
    assert len(ref.figures) >= 30
    for f in ref.figures:
        assert f.source.url.startswith("https://") and f.dataset and f.pair
        assert 1.0 <= f.tau <= f.k + 1


def test_prior_over_methods_sums_to_one_and_covers_the_engines_methods():
    p = method_prior()
    assert math.isclose(sum(p.values()), 1.0)
    assert {"dflash", "eagle3", "eagle", "mtp", "medusa", "p-eagle", "draft", "ngram"} <= set(p)


def test_eagle3_k3_band_holds_vllm_ci_baselines_and_stops_well_above_a_dead_drafter():
    b = band("eagle3", 3)
    for ci in (2.60, 2.26, 2.56):  # vLLM's CI acceptance baselines at k = 3
        assert b.contains(ci)
    assert 1.9 < b.low < 2.26 and b.p1_low < 0.6540
    assert not b.contains(1.32)  # τ 1.32 at k = 3 sits below anything trained EAGLE-3 drafters reach
    assert b.is_dead(1.05) and not b.is_dead(1.32)
    assert not b.extrapolated


def test_the_low_edge_is_the_margin_times_the_lowest_measured_figure_at_k():
    ref = default_reference()
    b = band("eagle3", 3)
    measured = [x.tau for x in b.figures if x.figure.role == "measured"]
    assert b.low == pytest.approx(ref.margin * min(measured))


def test_a_figure_below_its_own_k_keeps_its_rates_and_above_it_is_flagged_extrapolated():
    b3, b7 = band("eagle3", 3), band("eagle3", 7)
    ci = next(x for x in b3.figures if "Qwen3-8B" in x.figure.pair)
    assert ci.tau == pytest.approx(2.26, abs=1e-6) and not ci.extrapolated
    assert next(x for x in b7.figures if "Qwen3-8B" in x.figure.pair).extrapolated
    assert b7.low > b3.low  # more draft positions never lower the healthy τ of a chain


def test_dflash_band_at_block_16_and_per_dataset():
    b = band("dflash", 15)
    assert 2.5 < b.low < 3.2 and b.typical > 5
    assert not b.contains(1.18)  # the seed's τ
    mt = band("dflash", 15, "mt-bench")
    # 0.9 × vLLM's own measurement (4.11) sits below its e2e threshold (3.82): the lower one decides
    assert mt.dataset == "mt-bench" and mt.low == pytest.approx(0.9 * 4.11)
    assert band("dflash2", 15).low == b.low


def test_ngram_has_no_healthy_floor_and_no_dead_band():
    b = band("ngram", 3)
    assert b.low is None and not b.is_dead(1.0) and "repetitive" in b.note


def test_sparse_methods_say_so():
    assert band("medusa", 3).sparse and band("draft", 4).sparse and not band("eagle3", 3).sparse


def test_a_known_pair_overrides_the_method_band():
    pair = healthy_band("dflash", 15, "gsm8k", drafter="z-lab/Qwen3-8B-DFlash-b16")
    assert pair.basis == "pair" and pair.typical == pytest.approx(6.55, abs=0.01)
    assert pair.low == pytest.approx(0.9 * 6.55, abs=0.01)
    assert healthy_band("dflash", 15, drafter="someone/unknown-drafter").basis == "method"
    assert healthy_band(None, 3) is None and band("nonsense", 3) is None


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["figure"][0].update(sourc="x"), "reference.toml: figure[0]: unknown key 'sourc'"),
        (lambda d: d["figure"][0].update(source="nowhere"), "reference.toml: figure[0].source: 'nowhere' names no"),
        (lambda d: d["figure"][0].update(k=0), "reference.toml: figure[0].k: expected an integer >= 1"),
        (lambda d: d["figure"][0].update(tau={"gsm8k": 40.0}), "reference.toml: figure[0].tau.gsm8k: 40.0 is above"),
        (lambda d: d["figure"][0].update(use=False), "reference.toml: figure[0].use: use = false needs a `why`"),
        (lambda d: d["figure"][0].update(role="guess"), "reference.toml: figure[0].role: invalid enum value 'guess'"),
        (lambda d: d["method"][0].update(prior=0.9), "reference.toml: method: priors sum to"),
        (lambda d: d["source"][0].update(url="http://x"), "reference.toml: source[0].url: expected a string matching"),
        (lambda d: d.update(schema=2), "reference.toml: schema: invalid enum value 2"),
    ],
)
def test_bad_reference_data_fails_loudly(mutate, message):
    data = copy.deepcopy(_data())
    mutate(data)
    with pytest.raises(KnowledgeError) as exc:
        parse_reference(data)
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)


def test_per_position_rates_must_add_up_to_the_stated_tau():
    data = copy.deepcopy(_data())
    fig = next(f for f in data["figure"] if f.get("per_position"))
    fig["per_position"] = [0.9] * len(fig["per_position"])
    with pytest.raises(KnowledgeError, match="disagrees"):
        parse_reference(data)


def test_a_per_k_series_is_read_at_k_not_by_the_geometric_model():
    """InferenceX measured Qwen3.5-397B MTP at k = 1, 3, 5, 8: at k = 8 the geometric model from k = 1 predicts
    6.85, the series says 5.21; between two k it interpolates, above the largest it saturates."""
    from dflash_doctor.interpret.reference import default_reference

    ref = default_reference()
    figs = [f for f in ref.figures_for("mtp") if f.pair.startswith("Qwen3.5-397B")]
    from dflash_doctor.interpret.reference import _at_k

    def at(k):
        return next(x.tau for x in _at_k(figs, k))

    assert at(8) == pytest.approx(5.21) and at(12) == pytest.approx(5.21)
    assert at(4) == pytest.approx((3.39 + 4.41) / 2)
    assert figs[0].tau_at(8) > 6.0  # what the geometric model alone would have said
