"""The console entry point (`dflash-doctor`, `python -m dflash_doctor`): a `logs` run's large-file scan
is begun from the raw arguments (cli/early.py) before the Typer app is imported, then the app runs."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from .early import logs_files, start_scan_early

    files = logs_files(list(sys.argv[1:] if argv is None else argv))
    if files:
        try:
            start_scan_early(files)
        except KeyboardInterrupt:
            from ..errors import ExitCode

            print("interrupted", file=sys.stderr)
            sys.exit(int(ExitCode.INTERRUPTED))
        except Exception:  # noqa: BLE001 - only a head start: the command scans the file itself and reports
            pass
    from .app import main as run

    run(argv)
