"""Intervals from counts (dflash_doctor.stats): the figures root-causes.md and the diagnosis rest on."""

import math

import pytest

from dflash_doctor import stats


def test_wilson_matches_the_textbook_figure_for_14_of_200():
    iv = stats.wilson(14, 200, design_effect=1.0)
    assert iv.estimate == pytest.approx(0.07)
    assert iv.low == pytest.approx(0.0422, abs=5e-4) and iv.high == pytest.approx(0.1141, abs=5e-4)


def test_design_effect_widens_the_interval():
    assert stats.wilson(14, 200, design_effect=2.0).width() > stats.wilson(14, 200, design_effect=1.0).width()


def test_no_drafts_is_uninformative_not_a_crash():
    iv = stats.wilson(0, 0)
    assert (iv.low, iv.high) == (0.0, 1.0) and math.isnan(iv.estimate)
    t = stats.tau_interval(0, 0)
    assert t.low == 1.0 and math.isinf(t.high)


def test_variance_of_accepted_length_from_unconditional_rates():
    # L uniform on {0, 1, 2}: P(L>=1) = 2/3, P(L>=2) = 1/3; Var = 2/3
    assert stats.accepted_length_variance([2 / 3, 1 / 3]) == pytest.approx(2 / 3)
    # all-or-nothing k=3 with p = 0.85: L ∈ {0, 3}, Var = 9 p (1 - p)
    assert stats.accepted_length_variance([0.85, 0.85, 0.85]) == pytest.approx(9 * 0.85 * 0.15)


def test_tau_interval_decides_a_cliff_over_181_drafts_but_not_65_smooth_drafts_without_rates():
    cliff = stats.tau_interval(181, 0.183 * 181, [0.166, 0.017] + [0.0] * 13, 15)
    assert cliff.below(2.0)
    vague = stats.tau_interval(65, 2.1 * 65, (), 15)
    assert vague.contains(2.5) and vague.contains(3.7)  # a healthy and a weak DFlash drafter alike


def test_without_rates_the_spread_is_the_geometric_curves_capped_by_bhatia_davis():
    m, k = 0.0526, 5  # τ 1.05 at k = 5: nearly dead
    geo = stats.accepted_length_variance(stats.geometric_rates(m, k))
    assert geo < m * (k - m)
    iv = stats.tau_interval(494, m * 494, (), k)
    assert iv.high < 1.15  # 494 drafts settle "nearly dead"
    assert sum(stats.geometric_rates(2.1, 15)) == pytest.approx(2.1, abs=1e-9)


def test_tau_interval_never_exceeds_k_plus_one():
    assert stats.tau_interval(3, 2.9 * 3, (), 3).high <= 4.0


def test_drafts_to_settle_grows_as_the_rate_nears_the_threshold():
    near, far = stats.drafts_to_settle(0.45, 0.5), stats.drafts_to_settle(0.07, 0.5)
    assert far < near
    assert stats.drafts_to_settle(0.5, 0.5) is None


def test_overdispersion_is_one_for_binomial_like_intervals_and_more_for_spread():
    d = [100.0] * 10
    same = [150.0] * 10
    assert stats.overdispersion(d, same, 1.0) == 1.0
    spread = [100.0, 200.0] * 5
    assert stats.overdispersion(d, spread, 1.0) > 10


def test_z_for_common_levels():
    assert stats.z_for(0.95) == pytest.approx(1.95996, abs=1e-4)
    assert stats.z_for(0.99) == pytest.approx(2.5758, abs=1e-3)
