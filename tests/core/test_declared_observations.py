"""Declared observations: every check names what it can emit; the knowledge cannot cite anything else.

Before, observations were f-strings built inside checks and rule names were never compared with them: a
typo in causes.toml (`engine-swa:ignore`) passed validation and the rule never fired.
"""

from __future__ import annotations

import pytest

from dflash_doctor.check import Check, declared_observations, run_checks
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.knowledge.causes import KnowledgeError, default_knowledge, parse_knowledge
from dflash_doctor.registry import load_checks
from tests.rank.scenarios import SCENARIOS, diagnose, load


def _declared() -> frozenset[str]:
    return frozenset(declared_observations(load_checks(include_plugins=False).checks))


def test_every_rule_of_the_packaged_knowledge_cites_a_declared_observation():
    declared = _declared()
    know = default_knowledge((), declared)  # raises on any rule no check declares
    assert {r.observation for r in know.rules} <= declared


def test_a_rule_with_a_typo_is_refused_by_the_loader():
    import tomllib
    from importlib import resources

    data = tomllib.loads(resources.files("dflash_doctor.knowledge").joinpath("causes.toml").read_text())
    typo = {"rule": [{"observation": "engine-swa:ignore", "cause": "swa-ignored", "weight": 1.0, "text": "typo"}]}
    parse_knowledge(data, [typo])  # without declarations the name is merely well-formed
    with pytest.raises(KnowledgeError, match="engine-swa:ignore.*no check declares"):
        parse_knowledge(data, [typo], _declared())


def test_every_declared_name_is_well_formed_and_owned_by_one_family_vocabulary():
    for name in _declared():
        fam, _, value = name.partition(":")
        assert fam and value and name == name.lower(), name


def test_a_check_emitting_an_undeclared_observation_is_refused_at_run_time():
    class Sloppy(Check):
        id = "sloppy"
        area = "acceptance"
        title = "sloppy"
        observations = ("signature:geometric",)

        def run(self, evidence):
            return [self.finding(Status.FAIL, "x", observations=(Observation("signature:geometrik", "typo"),))]

    [f] = run_checks([Sloppy()], EvidenceSet())
    assert f.status == Status.COULD_NOT_CHECK and "signature:geometrik" in f.message


@pytest.mark.parametrize("name", sorted(p.name for p in SCENARIOS.iterdir() if (p / "scenario.toml").exists()))
def test_no_built_in_check_emits_an_undeclared_observation_on_any_scenario(name):
    report, _ = diagnose(load(name))
    assert not [f for f in report.findings if "undeclared observation" in f.message]
