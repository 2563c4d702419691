"""Several hosts or bundles (hostcheck.HostFleet): the fleet table first — one line per host, an unreachable
one included —, then each checked host's answer (its summary; `-v`: its full report, `-vv` every detail)."""

from __future__ import annotations

from .json_report import dumps_safe
from .layout import Page, Style
from .markdown import md, render_markdown
from .style import Format
from .terminal import render_terminal, summary

FORMATS = (Format.TERMINAL, Format.JSON, Format.MARKDOWN)
MARK = {
    "problem": ("✗", "red"),
    "healthy": ("✓", "green"),
    "insufficient-data": ("?", "yellow"),
    "unreachable": ("✗", "red"),
    "failed": ("✗", "red"),
    "interrupted": ("?", "yellow"),
}


def render(fleet, fmt: Format, style: Style) -> str:
    if fmt == Format.JSON:
        return dumps_safe(fleet.to_dict())
    if fmt == Format.MARKDOWN:
        return _markdown(fleet, style)
    return _terminal(fleet, style)


def _cause(row) -> str:
    return f"{row['top_cause']} ({row['confidence']:.2f})" if row["top_cause"] else "—"


def _terminal(fleet, style: Style) -> str:
    rows = [r.row() for r in fleet.results]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    page = Page(style)
    page.line(
        (f"dflash-doctor fleet: {len(rows)} {fleet.kind}s — ", "bold"),
        ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda x: -x[1])),
    )
    width = max((len(r["host"]) for r in rows), default=4)
    status_w = max((len(r["status"]) for r in rows), default=6)
    for r in rows:
        mark, st = MARK.get(r["status"], ("?", ""))
        tau = "τ —   " if r["tau"] is None else f"τ {r['tau']:.2f}"
        if r["error"]:
            tail = f"{r['error']}" + (f" (hint: {r['hint']})" if r["hint"] else "")
        else:
            tail = _cause(r) + (f" — fix: {r['fix']}" if r["fix"] else "")
        page.line(
            (f"{mark} ", st),
            (f"{r['host']:<{width}}", "bold"),
            "  ",
            (f"{r['status']:<{status_w}}", st),
            f"  {tau}  {tail}",
            hang=width + status_w + 6,
        )
    for res in fleet.results:
        if res.state not in ("checked", "interrupted"):
            continue
        page.blank()
        page.line((f"━━ {res.spec} ━━", "bold"))
        if not style.screen:
            for line in render_terminal(res.report, style=style).rstrip("\n").split("\n"):
                page.line(line)
        else:
            summary(page, res.report)
    if style.screen and any(r.state == "checked" for r in fleet.results):
        page.blank()
        page.line(("-v shows each host's whole report", "dim"))
    return page.text() + "\n"


def _markdown(fleet, style: Style) -> str:
    rows = [r.row() for r in fleet.results]
    out = [
        f"## Fleet: {len(rows)} {fleet.kind}s",
        "",
        "| host | status | τ | top cause | fix or error |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        tail = md(r["error"] or "") if r["error"] else md(r["fix"] or "—")
        out.append(
            f"| {md(r['host'])} | {r['status']} | {r['tau'] if r['tau'] is not None else '—'} | "
            f"{md(_cause(r))} | {tail} |"
        )
    parts = ["\n".join(out) + "\n"]
    for res in fleet.results:
        if res.state in ("checked", "interrupted"):
            parts.append(render_markdown(res.report, verbose=style.verbose))
    return "\n".join(parts)
