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

# (the console entry ends the process without the interpreter's teardown, exit handlers run: the list is
# written by one)
PROBE = """
import atexit, json, runpy, sys
sys.argv = ["dflash-doctor", ARGS]
atexit.register(lambda: sys.stderr.write("\\nLOADED=" + json.dumps(sorted(m for m in HEAVY if m in sys.modules)) + "\\n"))
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


@pytest.mark.parametrize("code, rc", [(3, 3), (None, 0), (0, 0), ("a message", 1)])
def test_the_entry_point_s_quick_exit_is_an_ordinary_exit(code, rc):
    """The console entry ends the process without the interpreter's teardown (cli/entry.py `_leave`): the exit
    status, every byte written (more than a pipe holds), the exit handlers and a message code must be as
    `sys.exit` gives them; with another thread alive the ordinary exit is taken (it waits for that thread)."""
    script = (
        "import atexit, sys, threading, time\n"
        "from dflash_doctor.cli.entry import _leave\n"
        "atexit.register(lambda: sys.stdout.write('handler ran\\n'))\n"
        "sys.stdout.write('x' * 300000 + '\\n')\n"
        "if sys.argv[2] == 'thread':\n"
        "    threading.Thread(target=lambda: (time.sleep(0.3), sys.stdout.write('thread done\\n'))).start()\n"
        "_leave(eval(sys.argv[1]))\n"
        "sys.stdout.write('not reached\\n')\n"
    )
    for mode in ("alone", "thread"):
        proc = subprocess.run(
            [sys.executable, "-c", script, repr(code), mode],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        assert proc.returncode == rc, (mode, proc.stderr)
        lines = proc.stdout.splitlines()
        assert lines[0] == "x" * 300000 and "handler ran" in lines and "not reached" not in lines, mode
        assert ("thread done" in lines) == (mode == "thread")
        assert ("a message" in proc.stderr) == (code == "a message")


def test_each_command_line_builds_the_app_it_needs():
    """A command line that starts with a command's name builds the app with that command alone (cli/app.py
    COMMANDS): the table must name every command each module registers, and the app built for one command
    must give that command exactly as the whole app gives it (its options, its help)."""
    import typer

    from dflash_doctor.cli import app as app_mod

    whole = typer.main.get_command(app_mod.build_app())
    assert list(whole.commands) == list(app_mod.COMMANDS)
    for name in app_mod.COMMANDS:
        alone = typer.main.get_command(app_mod.build_app(name))
        assert name in alone.commands
        assert set(alone.commands) == {n for n, m in app_mod.COMMANDS.items() if m == app_mod.COMMANDS[name]}
        a, w = alone.commands[name], whole.commands[name]
        assert [p.opts for p in a.params] == [p.opts for p in w.params]
        assert a.help == w.help
        assert sorted(getattr(a, "commands", {})) == sorted(getattr(w, "commands", {}))
    assert list(typer.main.get_command(app_mod._app_for(["logs", "x.log"])).commands) == ["logs"]
    for args in ([], ["--help"], ["--debug", "logs"], ["nosuch"]):
        assert len(typer.main.get_command(app_mod._app_for(args)).commands) == len(app_mod.COMMANDS), args


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
