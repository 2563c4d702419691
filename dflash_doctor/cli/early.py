"""A `logs` run's large-file scan begun before the CLI is loaded.

The scan of a large log is the long part of `dflash-doctor logs`; its worker processes can start as
soon as the file is known, and the rest of the run (Typer and the command's modules, the evidence
model, the checks, numpy) is imported while they read. The entry point (cli/entry.py) reads the file
from the raw arguments, before Typer is imported, and the command itself (cli/logs_cmd.py) starts it
when it was not begun (called another way). Reading the arguments here is only a head start: when
they hold anything this reading does not know (another option, --engine, --help, `--`), nothing is
begun and the command scans as it always does. A scan begun for arguments the command then reads
otherwise is not taken (scan_file starts again) and is stopped at exit.
"""

from __future__ import annotations

import os

# The `logs` command's options (cli/logs_cmd.py; tests/parse/test_early_scan.py keeps the two in step): those
# that take a value, and the flags. --engine is left out on purpose: with it the workers would need its
# parsed form.
VALUE_OPTIONS = frozenset({"--since", "--until", "--csv", "--parquet", "--format", "-f", "--output", "-o"})
FLAGS = frozenset({"--verbose", "-v"})


def logs_files(args: list[str]) -> list[str] | None:
    """The files of a `logs` invocation given as raw arguments (after the program name), or None when
    the arguments are not one this reading understands exactly."""
    if not args or args[0] != "logs":
        return None
    files: list[str] = []
    rest = iter(args[1:])
    for tok in rest:
        if tok == "-" or not tok.startswith("-"):
            files.append(tok)
        elif tok in FLAGS:
            continue
        elif tok in VALUE_OPTIONS:
            if next(rest, None) is None:
                return None
        elif tok.startswith("--") and tok.partition("=")[0] in VALUE_OPTIONS:
            continue
        else:
            return None
    return files or None


def start_scan_early(files: list[str]) -> bool:
    """Begin the scan of the first file the command will read (rotated logs are read oldest first)
    when it is a large plain file; True when workers were started. The scanner's two switches are
    read as resolve_settings reads them (Settings.from_env); scan_file starts again should the
    command's settings differ."""
    from ..parse.logscan import order_rotated, start_scan
    from ..settings import Settings

    first = order_rotated(list(files))[:1]
    if first and first[0] != "-" and os.path.isfile(first[0]):
        switches = Settings.from_env(os.environ)
        return start_scan(first[0], workers=switches.workers, grep=switches.grep)
    return False
