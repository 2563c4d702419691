"""`EvidenceSet.require(T)`: the typed read of a payload a check declared in `needs`."""

import re

import pytest

from dflash_doctor.evidence import EvidenceSet, MissingEvidence
from dflash_doctor.evidence.payloads import LaunchConfig
from dflash_doctor.registry import load_checks
from tests.conftest import ROOT


def test_require_returns_the_payload_and_refuses_an_absent_one():
    ev = EvidenceSet()
    with pytest.raises(MissingEvidence):
        ev.require(LaunchConfig)
    with pytest.raises(MissingEvidence):
        ev.require_item(LaunchConfig)


def test_every_built_in_check_requires_only_what_it_declares():
    """A require() of a payload outside `needs` would be a crash whenever that evidence is absent."""
    by_module = {type(c).__module__.rsplit(".", 1)[-1]: c for c in load_checks().checks}
    bad = []
    for path in sorted((ROOT / "checks").glob("[!_]*.py")):  # helper modules (_*.py) read only what they test for
        text = path.read_text()
        required = set(re.findall(r"evidence\.require(?:_item)?\((\w+)\)", text))
        if not required:
            continue
        check = by_module.get(path.stem)
        assert check is not None, path
        declared = {t.__name__ for t in check.needs}
        bad += [f"{path.name}: {name}" for name in sorted(required - declared)]
    assert not bad, bad
