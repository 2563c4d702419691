"""`--help` and `--version` must stay instant: none of the heavy libraries may be imported."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

# The libraries the package imports only inside the functions that use them (everything else is imported at
# the top of its module): each costs 40 ms to seconds, and none is needed to print help.
HEAVY = (
    "torch",
    "transformers",
    "pandas",
    "paramiko",
    "matplotlib",
    "numpy",
    "pyarrow",
    "httpx2",
    "prometheus_client",
    "huggingface_hub",
)

# (the list is written by an exit handler: it sees every module the run imported)
PROBE = """
import atexit, json, runpy, sys
sys.argv = ["dflash-doctor", ARGS]
atexit.register(
    lambda: sys.stderr.write("\\nLOADED=" + json.dumps(sorted(m for m in HEAVY if m in sys.modules)) + "\\n")
)
try:
    runpy.run_module("dflash_doctor", run_name="__main__")
except SystemExit:
    pass
"""


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["diagnose", "--help"], ["checks", "--help"]])
def test_cli_entry_imports_no_heavy_library(args):
    code = PROBE.replace("ARGS", json.dumps(args)[1:-1]).replace("HEAVY", repr(HEAVY))
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    loaded = json.loads(proc.stderr.rsplit("LOADED=", 1)[1])
    assert loaded == [], f"{' '.join(args)} imported {loaded}"
    assert proc.stdout.strip(), "the command printed nothing"


def test_version_prints_the_package_version(cli):
    from dflash_doctor import __version__

    proc = cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"dflash-doctor {__version__}"


def test_the_command_table_names_what_each_module_registers():
    """cli/app.py COMMANDS names every command each module registers, in the order `--help` lists them."""
    import importlib

    import typer

    from dflash_doctor.cli import app as app_mod

    whole = typer.main.get_command(app_mod.app)
    registered = {}
    for module in dict.fromkeys(app_mod.COMMANDS.values()):
        part = typer.Typer()
        importlib.import_module(f"dflash_doctor.cli.{module}").register(part)
        registered.update(dict.fromkeys(typer.main.get_group(part).commands, module))
    assert registered == app_mod.COMMANDS
    assert whole.list_commands(None) == list(app_mod.COMMANDS)
    assert all(whole.get_command(None, name) is not None for name in app_mod.COMMANDS)


def test_the_entry_point_called_in_process_raises_systemexit_and_returns(capsys):
    """Called with arguments (as tests and embedding callers do), the entry point ends in the SystemExit any
    Typer app raises — for a finished run, a usage error and a Ctrl-C alike — and never ends the caller's
    process (the console entry's quick exit once did, killing pytest with status 2)."""
    from dflash_doctor.cli.entry import main

    for args, code in ((["logs", "--no-such-option"], 2), (["--version"], 0)):
        with pytest.raises(SystemExit) as e:
            main(args)
        assert e.value.code == code, args
    assert "dflash-doctor" in capsys.readouterr().out


# Not heavy, but no part of printing help or the version: the schema library and the shapes read input.
NOT_AT_START = ("msgspec", "pydantic", "dflash_doctor.schema")


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_import_no_schema_library(args):
    code = PROBE.replace("ARGS", json.dumps(args)[1:-1]).replace("HEAVY", repr(NOT_AT_START))
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    loaded = json.loads(proc.stderr.rsplit("LOADED=", 1)[1])
    assert loaded == [], f"{' '.join(args)} imported {loaded}"
