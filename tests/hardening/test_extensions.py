"""What users add to the tool: check plugins (entry points) and `--knowledge` files. A plugin calling
`sys.exit(0)` at import made `gate` exit 0 with no output and no JUnit (a CI gate passing on nothing);
wrong types in a knowledge file were internal errors (`'int' object is not iterable`)."""

from __future__ import annotations

import os
import textwrap

import pytest

from tests.conftest import FIXTURES, ROOT, run_cli
from tests.hardening import tally

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")


def _plugin_site(tmp_path, body: str, name: str = "exiting_checks"):
    """A plugin registered the way pip installs one: a module and a dist-info with its entry point."""
    site = tmp_path / "site"
    site.mkdir()
    (site / f"{name}.py").write_text(textwrap.dedent(body))
    info = site / f"{name}-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(f"[dflash_doctor.checks]\n{name} = {name}\n")
    return {"PYTHONPATH": f"{site}{os.pathsep}{ROOT}"}


EXIT_AT_IMPORT = "import sys\nsys.exit(0)\n"
EXIT_IN_CONSTRUCTOR = """
import sys
from dflash_doctor.check import Check

class Exits(Check):
    id = "exits"
    area = "acceptance"
    title = "exits when built"

    def __init__(self):
        sys.exit(0)

    def run(self, evidence):
        return []
"""


@pytest.mark.parametrize(
    "body", [EXIT_AT_IMPORT, EXIT_IN_CONSTRUCTOR, "raise SystemExit('bye')\n", "raise KeyError('x')\n"]
)
def test_a_plugin_that_exits_cannot_pass_a_gate(tmp_path, body):
    tally.hostile_input("plugin: sys.exit() at import or construction")
    env = _plugin_site(tmp_path, body)
    junit = tmp_path / "gate.xml"
    res = run_cli("gate", "--log", LOG, "--min-acceptance-length", "5", "--junit", str(junit), env=env)
    assert res.returncode == 1, res.stderr  # τ 1.18 < 5: the gate fails, as it must
    assert "mean acceptance length 1.18 [" in res.stdout and "] < 5" in res.stdout
    assert junit.is_file() and "<failure" in junit.read_text()
    assert "plugin exiting_checks" in res.stderr and "warning:" in res.stderr


def test_a_plugin_that_exits_is_listed_as_a_warning(tmp_path):
    env = _plugin_site(tmp_path, EXIT_AT_IMPORT)
    res = run_cli("checks", "list", "--format", "json", env=env)
    assert res.returncode == 0 and "sys.exit(0)" in res.stderr


KNOWLEDGE = {
    "rule = 5": "k.toml: rule: expected a list, got int",
    'cause = "x"': "k.toml: cause: expected a list, got str",
    "separator = [5]": "k.toml: separator[0]: expected a table, got int",
    "circumstantial = 5": "k.toml: circumstantial: expected a list, got int",
    '[[separator]]\ncauses = "ab"\nstep = 1': "k.toml: separator[0].causes: expected a list, got str",
    '[[cause]]\nid = "x-y"\ntitle = "t"\nprior = 0.5\nfix = "f"\nnext_step = "n"\nsilence_note = 5\n'
    '[[rule]]\nobservation = "a:b"\ncause = "x-y"\nweight = 1.0\ntext = "t"': (
        "cause[0].silence_note: expected a string or nothing, got int"
    ),
    '[[rule]]\nobservation = "a:b"\ncause = "layer-offset"\nweight = nan\ntext = "t"': (
        "rule[0].weight: expected a number"
    ),
    '[[rule]]\nobservation = [1]\ncause = "layer-offset"\nweight = 1.0\ntext = "t"': (
        "rule[0].observation: expected a string"
    ),
    "tyop = 1": "k.toml: unknown key 'tyop'",
}


@pytest.mark.parametrize("toml", list(KNOWLEDGE))
def test_wrong_types_in_a_knowledge_file_are_one_line(tmp_path, toml):
    tally.hostile_input("knowledge: wrong types in a --knowledge file")
    k = tmp_path / "k.toml"
    k.write_text(toml + "\n")
    res = run_cli("diagnose", "--log", LOG, "--knowledge", str(k))
    assert res.returncode == 2, res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and KNOWLEDGE[toml] in errors[0], res.stderr
    assert "internal error" not in res.stderr
