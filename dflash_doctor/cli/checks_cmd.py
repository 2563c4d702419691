"""`dflash-doctor checks list`: every check with its id, area and title (built-in and plugins)."""

from __future__ import annotations

import typer

from ..registry import load_checks
from ..render import Format
from .common import FormatOpt, examples
from .output import Output


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The checks dflash-doctor runs.", no_args_is_help=True)
    app.add_typer(group, name="checks")

    @group.command("list", epilog=examples("dflash-doctor checks list", "dflash-doctor checks list --format json"))
    def list_checks(fmt: Format = FormatOpt) -> int:
        """List every check: id, area, title, the evidence it needs, where it comes from."""

        reg = load_checks()
        out = Output(fmt=fmt)
        for w in reg.warnings:
            out.warn(w)
        out.show(reg)
        return 0
