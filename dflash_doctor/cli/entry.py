"""The console entry point (`dflash-doctor`, `python -m dflash_doctor`): the CLI (cli/app.py) imported
and run, a Ctrl-C while it loads said as "interrupted" (exit 130) instead of a traceback."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; the SystemExit it raises carries the exit code."""
    try:
        from .app import main as run
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    run(argv)
