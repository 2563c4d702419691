"""`checks list`: every check with its id, area, title, the evidence it needs and where it comes from
(registry.CheckRegistry in, text out)."""

from __future__ import annotations

from ..evidence import kind_of
from .json_report import dumps_safe
from .layout import Page, Style
from .markdown import md
from .style import Format

FORMATS = (Format.TERMINAL, Format.JSON, Format.MARKDOWN)


def rows(reg) -> list[dict]:
    return [
        {
            "id": c.id,
            "area": c.area,
            "title": c.title,
            "needs": [kind_of(k).value for k in c.needs],
            "origin": reg.origins[c.id],
        }
        for c in sorted(reg.checks, key=lambda c: (c.area, c.id))
    ]


def render(reg, fmt: Format, style: Style) -> str:
    rs = rows(reg)
    if fmt == Format.JSON:
        return dumps_safe({"checks": rs, "warnings": list(reg.warnings)})
    if fmt == Format.MARKDOWN:
        lines = ["| id | area | title | needs | origin |", "|---|---|---|---|---|"]
        lines += [
            f"| `{md(r['id'])}` | {md(r['area'])} | {md(r['title'])} | {', '.join(r['needs'])} | {md(r['origin'])} |"
            for r in rs
        ]
        return "\n".join(lines) + "\n"
    page = Page(style)
    wid = max((len(r["id"]) for r in rs), default=0)
    area = max((len(r["area"]) for r in rs), default=0)
    page.line((f"{len(rs)} checks", "bold"))
    for r in rs:
        page.line(
            (f"{r['id']:<{wid}}", "bold"),
            f"  {r['area']:<{area}}  ",
            r["title"],
            (
                f"  needs {', '.join(r['needs']) or 'nothing'}"
                + ("" if r["origin"] == "builtin" else f"; from {r['origin']}"),
                "dim",
            ),
            hang=wid + area + 4,
        )
    return page.text() + "\n"
