"""The console entry point (`dflash-doctor`, `python -m dflash_doctor`): a `logs` run's large-file scan
is begun from the raw arguments (cli/early.py) before the Typer app is imported, then the app runs."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    """Run the CLI. As the console entry (`argv` None) the process ends here (`_leave`); called with `argv`,
    the caller gets the SystemExit any Typer app raises."""
    # numpy's OpenBLAS starts a thread per core at import, which spin while it loads: CPU the scan's
    # workers need, for matrix work this tool never does (the user's own setting is kept)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        _begin_early_scan(sys.argv[1:] if argv is None else argv, console=argv is None)
        from .app import main as run

        run(argv)
        code = 0
    except SystemExit as exc:
        if argv is not None:
            raise
        code = exc.code
    except KeyboardInterrupt:  # (a Ctrl-C while the CLI loads, before the command's own handler is in place)
        from ..errors import ExitCode

        print("interrupted", file=sys.stderr)
        code = int(ExitCode.INTERRUPTED)
        if argv is not None:
            raise SystemExit(code) from None
    _leave(code)


def _begin_early_scan(args: list[str], console: bool) -> None:
    """A `logs` run's large-file scan begun from the raw arguments (cli/early.py)."""
    from .early import logs_files, start_scan_early

    files = logs_files(list(args))
    if not files:
        return
    import gc

    # A short-lived run over a large file: no cyclic collection passes (~80 of them, 20 ms of CPU the scan
    # workers need, the first ones while they are not started yet); whatever cycles the run leaves end with
    # the process. Any other run keeps the collector.
    collecting = gc.isenabled()
    gc.disable()
    begun = False
    try:
        begun = start_scan_early(files)
    except Exception:  # noqa: BLE001 - only a head start: the command scans the file itself and reports
        pass
    finally:
        if collecting and not (begun and console):
            gc.enable()


def _leave(code) -> None:  # (never returns)
    """End the process as `sys.exit(code)` would, less the interpreter's teardown: freeing a large scan's
    arrays and row objects one by one takes longer than some whole runs' report (10-20 ms on a 1 GiB log).
    The exit handlers still run and the output streams are flushed; with another thread still alive the
    usual exit is taken (it waits for that thread)."""
    import threading

    if threading.active_count() > 1:
        sys.exit(code)
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    import atexit

    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # (as Python's own exit: output lost on the way out)
                code = code or 120
        os._exit(code)
