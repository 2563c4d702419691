"""`--help` and `--version` must stay instant: none of the heavy libraries may be imported."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

HEAVY = ("torch", "transformers", "pandas", "paramiko", "matplotlib", "numpy")

PROBE = """
import json, runpy, sys
sys.argv = ["dflash-doctor", ARGS]
try:
    runpy.run_module("dflash_doctor", run_name="__main__")
except SystemExit:
    pass
sys.stderr.write("\\nLOADED=" + json.dumps(sorted(m for m in HEAVY if m in sys.modules)) + "\\n")
"""


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["diagnose", "--help"], ["checks", "--help"]])
def test_cli_entry_imports_no_heavy_library(args):
    code = PROBE.replace("ARGS", json.dumps(args)[1:-1]).replace("HEAVY", repr(HEAVY))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    loaded = json.loads(proc.stderr.rsplit("LOADED=", 1)[1])
    assert loaded == [], f"{' '.join(args)} imported {loaded}"
    assert proc.stdout.strip(), "the command printed nothing"


def test_version_prints_the_package_version(cli):
    from dflash_doctor import __version__

    proc = cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"dflash-doctor {__version__}"
