"""Entry point: builds the Typer app, maps known errors to one line + hint + exit code."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import signal
import sys
import threading
import traceback
from typing import TYPE_CHECKING

import typer
from typer.core import TyperArgument, TyperGroup

from .. import __version__
from ..errors import DoctorError, ExitCode
from ..redact import redact_text
from ..textsafe import plain
from . import common

if TYPE_CHECKING:
    # the click typer's own classes are typed with (typer vendors it since 0.2x); never imported at run time
    from typer.core import _click as click


def _plain_required_metavars() -> None:
    """Typer writes a required argument as {DRAFTER} in usage lines; click's convention (and ours) is DRAFTER."""
    original = TyperArgument.make_metavar

    def make_metavar(self, ctx, *args, **kw):
        var = original(self, ctx, *args, **kw)
        return var[1:-1] if var.startswith("{") and var.endswith("}") else var

    TyperArgument.make_metavar = make_metavar  # type: ignore[method-assign]  # a deliberate patch of typer's class


_plain_required_metavars()


def _version(value: bool) -> None:
    if value:
        print(f"dflash-doctor {__version__}")
        raise typer.Exit(0)


def _root(
    version: bool | None = typer.Option(
        None, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors (also DFLASH_DOCTOR_DEBUG=1)."),
) -> None:
    if debug:
        os.environ["DFLASH_DOCTOR_DEBUG"] = "1"


class _Commands(TyperGroup):
    """The root group: a command's module (cli/NAME.py, COMMANDS) is imported when the command is asked for —
    to run it, or to list it in `--help` — so `--version` loads none of them and a run loads its own (click's
    documented way of loading subcommands lazily). Each module imports what it needs at its top."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        return None if module is None else _registered(module).commands.get(cmd_name)


@functools.cache
def _registered(module: str) -> TyperGroup:
    """The commands one module (cli/NAME.py) registers."""
    part = typer.Typer(rich_markup_mode=None)
    importlib.import_module(f"{__package__}.{module}").register(part)
    return typer.main.get_group(part)


def _new_app() -> typer.Typer:
    """The root app: its help, its options (the `_root` callback); its commands come from COMMANDS."""
    new = typer.Typer(
        cls=_Commands,
        name="dflash-doctor",
        help="Ranked root causes for low speculative-decoding acceptance (DFlash, EAGLE-3, MTP, Medusa) on vLLM and "
        "SGLang.\n\nWith no command it examines this machine (check host local).\n\nExit codes: 0 healthy or passed, "
        "1 problem found or failed, 2 usage error, 3 insufficient data (nothing could be checked), 130 interrupted.",
        epilog="Examples:\n\n\b\n  dflash-doctor                 (this machine: check host local)\n"
        "  dflash-doctor check bundle fixtures/hosts/seed\n  dflash-doctor diagnose --log "
        "server.log --drafter DIR|REPO_ID --engine vllm==0.20.1\n  dflash-doctor check host ssh://ops@gpu-7\n"
        "  dflash-doctor COMMAND --help",
        no_args_is_help=False,  # bare: check host local (main)
        add_completion=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        pretty_exceptions_show_locals=False,  # this tool handles SSH credentials
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    new.callback()(_root)
    return new


# The module (cli/NAME_cmd.py) that registers each top-level command or group, in the order `--help` lists them
# (commands, then groups). Each module adds its own commands; none imports heavy libraries at import time.
# (A test keeps this table equal to what the modules register.)
COMMANDS = {
    "diagnose": "diagnose_cmd",
    "logs": "logs_cmd",
    "inspect-model": "inspect_model_cmd",
    "collect": "host_cmd",
    "probe": "probe_cmd",
    "layer-offset": "probe_cmd",
    "gate": "gate_cmd",
    "fleet": "fleet_cmd",
    "known-issues": "known_issues_cmd",
    "explain": "explain_cmd",
    "check": "host_cmd",
    "monitor": "monitor_cmd",
    "checks": "checks_cmd",
}


app = _new_app()


def _tolerant_streams() -> None:
    """The report is never lost to an output encoding (ASCII, Latin-1, a C locale: what the stream cannot
    encode is replaced), and a standard stream the shell closed (`>&-`, `<&-`) is not a crash."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - the process's stream
            if name == "stdout" and sys.stderr is not None:
                print("warning: stdout is closed: the report goes nowhere (use -o FILE)", file=sys.stderr)
            continue
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a detached or closed stream: nothing to write to
                reconfigure(errors="replace")
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - the process's stream


def _say(line: str) -> None:
    # plain() redacts; the message may hold whatever the user typed (a token as an argument).
    print(plain(redact_text(line)), file=sys.stderr)


# The signal (SIGTERM, SIGHUP) that stopped the run, if one did.
_STOPPED_BY: list[int] = []


def _stop(signum, frame) -> None:
    """SIGTERM or SIGHUP (CI's `timeout`, a closed terminal): the run stops as on Ctrl-C — the scan's workers
    ended, what was read kept and reported — and exits 128 + the signal's number (143, 129)."""
    _STOPPED_BY.append(signum)
    raise KeyboardInterrupt


def _stop_on_signals() -> dict:
    """Install the handlers (main thread only); the ones they replace, to put back."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGHUP)}


def main(argv: list[str] | None = None) -> None:
    _tolerant_streams()
    previous = _stop_on_signals()
    _STOPPED_BY.clear()
    args = bare_means_local(list(sys.argv[1:] if argv is None else argv))
    common.ARGV = args
    try:
        code = _run(args)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if code == int(ExitCode.INTERRUPTED) and _STOPPED_BY:
        code = 128 + _STOPPED_BY[0]
    sys.exit(code)


# What may follow a bare `dflash-doctor` and still mean "examine this machine".
_VIEW_ONLY = {"-v", "-vv", "--verbose", "--details"}


def bare_means_local(args: list[str]) -> list[str]:
    """`dflash-doctor` alone examines this machine, as `flutter doctor` and `brew doctor` do: it is
    `dflash-doctor check host local` (with -v/-vv passed on)."""
    if all(a in _VIEW_ONLY for a in args):
        return ["check", "host", "local", *args]
    return args


def _run(argv: list[str] | None) -> int | str | None:
    """The command's exit code (a known error: its one line and hint said first)."""
    debug = "--debug" in (argv or sys.argv) or os.environ.get("DFLASH_DOCTOR_DEBUG") == "1"
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="dflash-doctor")
    except DoctorError as exc:
        if debug:
            traceback.print_exc()
        _say(f"error: {exc.message}")
        if exc.hint:
            _say(f"hint: {exc.hint}")
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except SystemExit as exc:
        return exc.code
    except Exception as exc:  # click usage errors and the unexpected
        return _failed(exc, debug)
    if rv == int(ExitCode.INTERRUPTED) and not common.INTERRUPT_SAID:
        print("interrupted", file=sys.stderr)  # (a Ctrl-C Typer ended the command at, before it could say it)
    return rv if isinstance(rv, int) else 0


def _failed(exc: Exception, debug: bool) -> int:
    # Typer vendors its own click, so match click's exception types by name, not by import.
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "Exit" in names:
        return getattr(exc, "exit_code", 0)
    if "Abort" in names:
        print("aborted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    if "ClickException" in names:
        # One line, like every other usage error (click's own form is four: usage, try, blank, error);
        # the message may echo a typed secret: _say redacts.
        _say("error: " + " ".join(exc.format_message().split()))  # type: ignore[attr-defined]
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            _say(f"hint: see {ctx.command_path} --help")
        return int(ExitCode.USAGE)
    if debug:
        raise exc
    _say(f"error: internal error ({type(exc).__name__}: {exc}); rerun with --debug for a traceback")
    return int(ExitCode.NOT_CHECKED)
