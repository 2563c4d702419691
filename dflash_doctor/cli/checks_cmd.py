"""`dflash-doctor checks list`: every check with its id, area and title (built-in and plugins)."""

from __future__ import annotations

import typer

from ..render import Format
from .common import FormatOpt


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The checks dflash-doctor runs.", no_args_is_help=True)
    app.add_typer(group, name="checks")

    @group.command("list")
    def list_checks(fmt: Format = FormatOpt) -> int:
        """List every check: id, area, title, the evidence it needs, and where it comes from."""
        import json

        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        from ..registry import load_checks
        from ..textsafe import plain
        from .output import Output

        reg = load_checks()
        out = Output(fmt=fmt)
        for w in reg.warnings:
            out.warn(w)
        rows = [{"id": c.id, "area": c.area, "title": c.title, "needs": [k.value for k in c.needs],
                 "origin": reg.origins[c.id]} for c in sorted(reg.checks, key=lambda c: (c.area, c.id))]
        if fmt == Format.JSON:
            out.write(json.dumps({"checks": rows, "warnings": reg.warnings}, indent=2) + "\n")
            return 0
        if fmt == Format.MARKDOWN:
            lines = ["| id | area | title | needs | origin |", "|---|---|---|---|---|"]
            lines += [f"| `{r['id']}` | {r['area']} | {plain(r['title'])} | {', '.join(r['needs'])} | {plain(r['origin'])} |"
                      for r in rows]
            out.write("\n".join(lines) + "\n")
            return 0
        table = Table(title=f"{len(rows)} checks")
        for col in ("id", "area", "title", "needs", "origin"):
            table.add_column(col)
        for r in rows:
            table.add_row(Text(plain(r["id"])), r["area"], Text(plain(r["title"])), ", ".join(r["needs"]),
                          Text(plain(r["origin"])))
        import io

        # Through Output like every report: colour only where allowed (NO_COLOR, TERM=dumb), secrets redacted.
        buf = io.StringIO()
        Console(file=buf, force_terminal=out.color, color_system="standard" if out.color else None,
                no_color=not out.color, width=out.width, highlight=False, markup=False).print(table)
        out.write(buf.getvalue())
        return 0
