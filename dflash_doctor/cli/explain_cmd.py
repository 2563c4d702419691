"""`dflash-doctor explain CAUSE|CHECK`: what a cause or a check means (as `ruff rule` does for a rule)."""

from __future__ import annotations

import typer

from ..registry import load_checks
from ..render import Format
from ..services.explain import explain as explain_name
from .common import FormatOpt, examples
from .output import Output
from .ranking_opts import resolve_settings


def register(app: typer.Typer) -> None:
    @app.command(
        "explain",
        epilog=examples(
            "dflash-doctor explain swa-ignored",
            "dflash-doctor explain engine-source-swa",
            "dflash-doctor explain layer-offset --format json",
        ),
    )
    def explain(
        name: str = typer.Argument(..., metavar="CAUSE|CHECK", help="A cause id or a check id from a report."),
        fmt: Format = FormatOpt,
    ) -> int:
        """What a cause or a check means: the evidence that moves it and its fix."""

        reg = load_checks()
        knowledge = resolve_settings().knowledge()
        Output(fmt=fmt).show(explain_name(name.strip(), knowledge, reg.checks))
        return 0
