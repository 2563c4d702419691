"""Entry point: builds the Typer app, maps known errors to one line + hint + exit code."""

from __future__ import annotations

import os
import sys

import typer

from .. import __version__
from ..errors import DoctorError, ExitCode


def _plain_required_metavars() -> None:
    """Typer writes a required argument as {DRAFTER} in usage lines; click's convention (and ours) is DRAFTER."""
    from typer.core import TyperArgument

    original = TyperArgument.make_metavar

    def make_metavar(self, ctx, *args, **kw):
        var = original(self, ctx, *args, **kw)
        return var[1:-1] if var.startswith("{") and var.endswith("}") else var

    TyperArgument.make_metavar = make_metavar


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


def _new_app() -> typer.Typer:
    """The root app: its help, its options (the `_root` callback); commands are registered on it after."""
    new = typer.Typer(
        name="dflash-doctor",
        help="Ranked root causes for low speculative-decoding acceptance (DFlash, EAGLE-3, MTP, Medusa) on vLLM and "
        "SGLang.\n\nExit codes: 0 healthy or passed, 1 problem found or failed, 2 usage error, 3 insufficient "
        "data (nothing could be checked), 130 interrupted.",
        epilog="Examples:\n\n\b\n  dflash-doctor check bundle fixtures/hosts/seed\n  dflash-doctor diagnose --log "
        "server.log --drafter DIR|REPO_ID --engine vllm==0.20.1\n  dflash-doctor check host ssh://ops@gpu-7\n"
        "  dflash-doctor COMMAND --help",
        no_args_is_help=True,
        add_completion=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        pretty_exceptions_show_locals=False,  # this tool handles SSH credentials
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    new.callback()(_root)
    return new


# The module (cli/NAME.py) that registers each top-level command or group, in the order `--help` lists them
# (commands, then groups). Each module adds its own commands; none imports heavy libraries at import time.
# (A test keeps this table equal to what the modules register.)
COMMANDS = {
    "diagnose": "diagnose",
    "logs": "logs",
    "inspect-model": "inspect_model",
    "collect": "host",
    "probe": "probe",
    "layer-offset": "probe",
    "gate": "gate",
    "fleet": "fleet",
    "known-issues": "known_issues",
    "check": "host",
    "monitor": "monitor",
    "checks": "checks_cmd",
}


def build_app(only: str | None = None) -> typer.Typer:
    """The app with every command, or with only the command `only` names (a run of that command builds
    nothing else: the other commands' modules and options cost a `logs` run ~30 ms of CPU, while its
    scan workers need it)."""
    import importlib

    new = _new_app()
    names = [only] if only in COMMANDS else list(COMMANDS)
    for name in dict.fromkeys(COMMANDS[n] for n in names):
        importlib.import_module(f"{__package__}.{name}").register(new)
    return new


def _app_for(args: list[str]) -> typer.Typer:
    """The app a command line needs: its command alone when the line starts with a command's name (the root
    options, `--help`, no arguments or a mistyped name get the whole app, whose messages list them all)."""
    return build_app(args[0] if args and args[0] in COMMANDS else None)


def __getattr__(name: str):
    if name == "app":  # the whole app, built on first use (tests, documentation tools)
        globals()["app"] = whole = build_app()
        return whole
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _tolerant_streams() -> None:
    """The report is never lost to an output encoding (ASCII, Latin-1, a C locale: what the stream cannot
    encode is replaced), and a standard stream the shell closed (`>&-`, `<&-`) is not a crash."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
            if name == "stdout" and sys.stderr is not None:
                print("warning: stdout is closed: the report goes nowhere (use -o FILE)", file=sys.stderr)
            continue
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="replace")
            except (ValueError, OSError):  # a detached or closed stream: nothing to write to anyway
                pass
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")


def _say(line: str) -> None:
    from ..redact import redact_text
    from ..textsafe import plain

    # plain() redacts; the message may hold whatever the user typed (a token as an argument).
    print(plain(redact_text(line)), file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    _tolerant_streams()
    from . import common

    common.ARGV = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in (argv or sys.argv) or os.environ.get("DFLASH_DOCTOR_DEBUG") == "1"
    try:
        rv = _app_for(common.ARGV)(args=argv, standalone_mode=False, prog_name="dflash-doctor")
    except DoctorError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        _say(f"error: {exc.message}")
        if exc.hint:
            _say(f"hint: {exc.hint}")
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(int(ExitCode.INTERRUPTED))
    except SystemExit:
        raise
    except Exception as exc:  # click usage errors and the unexpected
        # Typer vendors its own click, so match click's exception types by name, not by import.
        names = {cls.__name__ for cls in type(exc).__mro__}
        if "Exit" in names:
            sys.exit(getattr(exc, "exit_code", 0))
        if "Abort" in names:
            print("aborted", file=sys.stderr)
            sys.exit(int(ExitCode.INTERRUPTED))
        if "ClickException" in names:
            # One line, like every other usage error (click's own form is four: usage, try, blank, error);
            # the message may echo a typed secret: _say redacts.
            _say("error: " + " ".join(exc.format_message().split()))  # type: ignore[attr-defined]
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                _say(f"hint: see {ctx.command_path} --help")
            sys.exit(int(ExitCode.USAGE))
        if debug:
            raise
        _say(f"error: internal error ({type(exc).__name__}: {exc}); rerun with --debug for a traceback")
        sys.exit(int(ExitCode.NOT_CHECKED))
    else:
        if rv == int(ExitCode.INTERRUPTED):
            from .output import INTERRUPT_SAID

            if not INTERRUPT_SAID:  # (a Ctrl-C Typer ended the command at, before it could say anything)
                print("interrupted", file=sys.stderr)
        sys.exit(rv if isinstance(rv, int) else 0)
