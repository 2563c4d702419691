"""Third-party checks through the `dflash_doctor.checks` entry point: installed, listed, run — and a
plugin that raises on import becomes a warning while the report still comes out."""

import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import FIXTURES

GOOD = """
from dflash_doctor.check import Check
from dflash_doctor.evidence import Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary


class TauFloor(Check):
    id = "acme-tau-floor"
    area = "acceptance"
    title = "ACME: τ above the team floor of 2.0"
    needs = (AcceptanceSummary,)

    def run(self, evidence):
        acc = evidence.get(AcceptanceSummary)
        ok = acc.mean_acceptance_length >= 2.0
        return [self.finding(Status.OK if ok else Status.FAIL, f"acme floor: τ {acc.mean_acceptance_length:.2f}")]
"""

BROKEN = """
raise RuntimeError("acme plugin is broken")
"""


def _install_plugin(tmp_path, name, module_src, entry):
    src = tmp_path / f"src-{name}"
    (src / name).mkdir(parents=True)
    (src / name / "__init__.py").write_text(module_src)
    (src / "pyproject.toml").write_text(
        textwrap.dedent(f'''
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{name.replace("_", "-")}"
        version = "0.0.1"
        [project.entry-points."dflash_doctor.checks"]
        {entry} = "{name}"
        [tool.setuptools]
        packages = ["{name}"]
    ''')
    )
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(src),
        ],
        check=True,
        capture_output=True,
    )
    return target


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plugins")
    _install_plugin(tmp, "acme_checks", GOOD, "acme")
    _install_plugin(tmp, "broken_checks", BROKEN, "broken")
    return tmp / "site"


def test_installed_plugin_is_listed(plugin_site, cli):
    proc = cli("checks", "list", "--format", "json", env={"PYTHONPATH": str(plugin_site)})
    assert proc.returncode == 0, proc.stderr
    listed = {c["id"]: c for c in json.loads(proc.stdout)["checks"]}
    assert "acme-tau-floor" in listed
    assert listed["acme-tau-floor"]["origin"].startswith("plugin acme")
    assert len([c for c in listed.values() if c["origin"] == "builtin"]) >= 3


def test_installed_plugin_runs_and_broken_plugin_is_only_a_warning(plugin_site, cli):
    log = str(FIXTURES / "seed" / "vllm-0.20.1.log")
    proc = cli("diagnose", "--log", log, "--format", "json", env={"PYTHONPATH": str(plugin_site)})
    report = json.loads(proc.stdout)
    acme = [f for f in report["findings"] if f["check"] == "acme-tau-floor"]
    assert acme and acme[0]["status"] == "fail" and "1.18" in acme[0]["message"]
    assert "warning: plugin broken" in proc.stderr and "acme plugin is broken" in proc.stderr
    assert report["causes"], "the rest of the report is missing"
