"""Scoring you can read: coverage, close calls with the separating step, verdicts, k advice."""

from __future__ import annotations

import tomllib

import pytest

from dflash_doctor.evidence import EvidenceSet, Finding, Observation, Source, Status, Verdict
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.interpret.advice import advise_k
from dflash_doctor.interpret.baselines import default_baselines
from dflash_doctor.interpret.signature import against_reference
from dflash_doctor.knowledge.causes import parse_knowledge
from dflash_doctor.rank.scoring import rank, sigmoid

TWO_CAUSES = """
schema = 1
circumstantial = ["signature"]
[[cause]]
id = "alpha"
title = "Alpha"
prior = -2.0
fix = "fix alpha"
next_step = "look at alpha"
decided_by = ["drafter"]
[[cause]]
id = "beta"
title = "Beta"
prior = -2.0
fix = "fix beta"
next_step = "look at beta"
decided_by = ["probe"]
[[rule]]
observation = "signature:cliff-after-first"
cause = "alpha"
weight = 1.5
text = "the cliff fits alpha's mechanism"
[[rule]]
observation = "signature:cliff-after-first"
cause = "beta"
weight = 1.5
text = "the cliff fits beta's mechanism too"
[[rule]]
observation = "card:under-training"
cause = "beta"
weight = 1.0
text = "the model card says it is still under training"
[[separator]]
causes = ["alpha", "beta"]
step = "run `dflash-doctor probe --ablate alpha`"
"""


def acceptance(pp, drafts=5000.0, k=None):
    k = k or len(pp)
    tau = 1 + sum(pp)
    return AcceptanceSummary(
        mean_acceptance_length=tau,
        per_position=tuple(pp),
        drafts=drafts,
        drafted=int(drafts * k),
        accepted=int(drafts * (tau - 1)),
        k=k,
        draft_acceptance_rate=(tau - 1) / k,
        intervals=10,
        formats=("test",),
    )


def evidence(pp=(0.17, 0.017, 0.0, 0.0), drafts=5000.0, with_drafter=False, method=None) -> EvidenceSet:
    ev = EvidenceSet("test")
    ev.add("acc", Source("file", "x.log"), acceptance(list(pp), drafts))
    if with_drafter:
        import dataclasses

        from dflash_doctor.models.facts import drafter_facts
        from tests.conftest import FIXTURES

        facts = drafter_facts(str(FIXTURES / "models" / "Qwen3.6-27B-DFlash"))
        ev.add("drafter", Source("file", "drafter"), dataclasses.replace(facts, source="acme/drafter"))
    if method:
        from dflash_doctor.evidence.payloads import LaunchConfig

        ev.add("launch", Source("flag", "--launch"), LaunchConfig(engine=None, model=None, method=method))
    return ev


def finding(*names: str) -> Finding:
    return Finding("t", Status.FAIL, "x", observations=tuple(Observation(n, f"saw {n}", ("E1",)) for n in names))


KNOW = parse_knowledge(tomllib.loads(TWO_CAUSES))


def test_contributions_are_shown_for_and_against_with_their_weights():
    k = parse_knowledge(
        tomllib.loads(
            TWO_CAUSES.replace('weight = 1.0\ntext = "the model card', 'weight = -1.0\ntext = "the model card')
        )
    )
    r = rank([finding("signature:cliff-after-first", "card:under-training")], evidence(), k)
    beta = next(c for c in r.causes if c.id == "beta")
    assert [c.weight for c in beta.evidence_for] == [1.5] and [c.weight for c in beta.evidence_against] == [-1.0]
    assert beta.evidence_for[0].text == "the cliff fits beta's mechanism too — saw signature:cliff-after-first"


def test_close_causes_get_the_separating_step():
    r = rank([finding("signature:cliff-after-first")], evidence(), KNOW)
    assert abs(r.causes[0].confidence - r.causes[1].confidence) < 0.12
    assert any("Could not decide between" in n and "probe --ablate alpha" in n for n in r.notes)
    # the verdict says so, with the one missing input that separates them (alpha is decided by the drafter config)
    assert r.detail["undecided"]["between"] == [r.causes[0].id, r.causes[1].id]
    assert r.detail["undecided"]["input"] == "the drafter config"


def test_missing_deciding_evidence_discounts_only_curve_evidence():
    alone = rank([finding("signature:cliff-after-first", "card:under-training")], evidence(), KNOW)
    beta = next(c for c in alone.causes if c.id == "beta")
    # probe missing: coverage 0.6 on the curve weight, the card (a fact) in full.
    assert beta.confidence == pytest.approx(sigmoid(-2.0 + 1.0 + 0.6 * 1.5))
    alpha_alone = next(c for c in alone.causes if c.id == "alpha")
    full = rank([finding("signature:cliff-after-first")], evidence(with_drafter=True), KNOW)
    alpha_full = next(c for c in full.causes if c.id == "alpha")
    assert alpha_full.confidence == pytest.approx(sigmoid(-2.0 + 1.5))
    assert alpha_alone.confidence < alpha_full.confidence
    assert alpha_alone.missing_evidence and "drafter" in alpha_alone.missing_evidence[0]


def test_verdicts():
    healthy = rank(
        [Finding("t", Status.OK, "ok", observations=(Observation("tau:at-baseline", "at"),))],
        evidence(pp=(0.85, 0.72, 0.6)),
        KNOW,
    )
    assert healthy.verdict == Verdict.HEALTHY and healthy.causes == ()
    # 50 drafts near the edge of every band: healthy and impaired alike
    few = rank([], evidence(pp=(0.6, 0.35, 0.15), drafts=50), KNOW)
    assert few.verdict == Verdict.INSUFFICIENT_DATA
    # 14 hits at position 1 over 200 drafts: no trained drafter of any kind accepts so little — decided
    decided = rank([], evidence(pp=(0.07, 0.0, 0.0, 0.0), drafts=200), KNOW)
    assert decided.verdict == Verdict.PROBLEM
    none = rank([], EvidenceSet("empty"), KNOW)
    assert none.verdict == Verdict.INSUFFICIENT_DATA
    problem = rank([finding("signature:cliff-after-first")], evidence(), KNOW)
    assert problem.verdict == Verdict.PROBLEM and problem.causes


# --- signatures against the reference -----------------------------------------------------------

REF = [0.8**i for i in range(1, 16)]  # τ ≈ 4.86


@pytest.mark.parametrize("scale,expected", [(0.985, "healthy"), (0.93, "small-uniform-drop"), (0.75, "uniform-low")])
def test_level_against_reference(scale, expected):
    a = 0.8 * scale
    pp = [a**i for i in range(1, 16)]
    assert against_reference(pp, 1 + sum(pp), REF).id == expected


def test_a_cliff_is_not_read_as_a_uniform_drop():
    pp = [0.17, 0.017] + [0.0] * 13
    assert against_reference(pp, 1 + sum(pp), REF) is None


# --- k advice ------------------------------------------------------------------------------------


def test_k_advice_for_the_seed_curve_recommends_a_short_block():
    pp = [0.166, 0.017] + [0.0] * 13
    a = advise_k(evidence(pp=pp, method="dflash"))
    cost = default_baselines().cost
    assert a["advised"] and a["drafter_kind"] == "one-pass" and a["current_k"] == 15
    assert a["recommended_k"] in (1, 2)
    row = a["table"][a["recommended_k"]]
    e = 1 + sum(pp[: a["recommended_k"]])
    assert row["throughput"] == pytest.approx(e / cost.step_cost(a["recommended_k"], True), abs=1e-3)
    now = (1 + sum(pp)) / cost.step_cost(15, True)
    assert a["expected_gain_pct"] == pytest.approx(100 * (row["throughput"] / now - 1), abs=0.2)
    assert "E(k)" in a["formula"]


def test_one_pass_drafters_keep_long_blocks_that_chained_drafters_cannot_afford():
    pp = [0.75**i for i in range(1, 16)]
    one_pass = advise_k(evidence(pp=pp, method="dflash"))
    chained = advise_k(evidence(pp=pp, method="eagle3"))
    assert one_pass["recommended_k"] > chained["recommended_k"]
    assert chained["drafter_kind"] == "chained"


def test_no_k_advice_under_the_minimum_sample():
    a = advise_k(evidence(drafts=120, method="dflash"))
    assert a["advised"] is False and "120 drafts" in a["reason"]


def test_unknown_method_is_stated_as_an_assumption():
    a = advise_k(evidence(pp=[0.6, 0.4, 0.2]))
    assert any("assumed chained" in n for n in a["notes"])


# --- the packaged knowledge on the seed's observations ------------------------------------------

SEED_OBS = (
    "signature:cliff-after-first",
    "tau:far-below-baseline",
    "drafter-swa:present",
    "engine-swa:ignored",
    "engine-layer-map:raw",
    "card:under-training",
)


def _rank_seed(*extra: str):
    from dflash_doctor.knowledge.causes import default_knowledge

    ev = evidence(pp=(0.166, 0.017) + (0.0,) * 13, with_drafter=True)
    from dflash_doctor.evidence.payloads import ProbeResult
    from dflash_doctor.models.engine_support import lookup

    ev.add("vllm 0.20.1 row", Source("derived", "support table"), lookup("vllm", "0.20.1"))
    if extra:
        ev.add("probe", Source("command", "dflash-doctor probe"), ProbeResult({}))
    r = rank([finding(*SEED_OBS, *extra)], ev, default_knowledge())
    return [c.id for c in r.causes], {c.id: c for c in r.causes}


def test_engine_causes_outrank_the_weak_drafter_until_a_probe_says_otherwise():
    order, _ = _rank_seed()
    assert order.index("swa-ignored") < order.index("layer-offset") < order.index("undertrained-drafter")
    # A clean-room probe that reproduces the served τ moves the blame to the weights.
    order, causes = _rank_seed("probe:reproduces-served")
    assert order[0] == "undertrained-drafter"
    assert causes["swa-ignored"].confidence < 0.5
    # A probe whose SWA-ignored ablation reproduces the served curve settles it the other way.
    order, causes = _rank_seed("probe:exceeds-served", "probe:ablation-swa-matches")
    assert order[0] == "swa-ignored" and causes["swa-ignored"].confidence > 0.99
    assert causes["undertrained-drafter"].confidence < 0.05
