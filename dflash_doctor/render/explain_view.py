"""`explain`: a cause or a check (services.explain.Explanation in, text out)."""

from __future__ import annotations

from .json_report import dumps_safe
from .layout import Page, Style
from .markdown import md
from .style import Format

FORMATS = (Format.TERMINAL, Format.JSON, Format.MARKDOWN)


def render(ex, fmt: Format, style: Style) -> str:
    if fmt == Format.JSON:
        return dumps_safe(ex.to_dict())
    if fmt == Format.MARKDOWN:
        out = [f"## {md(ex.id)} ({ex.kind}): {md(ex.title)}", ""]
        if ex.about:
            out += [md(ex.about), ""]
        out += [f"- **{md(k)}:** {md(v)}" for k, v in ex.fields]
        out += [f"- `{w:+.1f}` {md(o)}: {md(t)}" for w, o, t in ex.evidence]
        for label, text in (("Fix", ex.fix), ("Next", ex.next_step)):
            if text:
                out.append(f"\n**{label}:** {md(text)}")
        return "\n".join(out) + "\n"
    page = Page(style)
    page.line((ex.id, "bold magenta"), f"  ({ex.kind})  ", (ex.title, "bold"), hang=2)
    if ex.about:
        page.line("  ", ex.about, hang=2)
    for k, v in ex.fields:
        page.line(f"  {k}: ", v, hang=4)
    if ex.evidence:
        page.blank()
        page.line(("evidence", "bold underline"), "  (log-likelihood ratio: + for the cause, − against)")
        for w, o, t in ex.evidence:
            page.line(("  + " if w > 0 else "  − ", "green" if w > 0 else "red"), f"({w:+.1f}) ", (o, "bold"), f": {t}")
    if ex.related:
        page.line(
            ("checks that speak to it: " if ex.kind == "cause" else "causes it moves: ", "bold"),
            ", ".join(ex.related),
            hang=2,
        )
    if ex.fix:
        page.blank()
        page.line(("fix: ", "bold green"), ex.fix, hang=5)
    if ex.next_step:
        page.line(("next: ", "bold"), ex.next_step, hang=6)
    return page.text() + "\n"
