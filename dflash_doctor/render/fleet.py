"""The fleet table: one row per engine (outliers first), in terminal, markdown or JSON form.

Fleet in, text out; never prints. Untrusted text (label values come from the scraped engines) enters
rich only as plain `Text`.
"""

from __future__ import annotations

import io

from ..prometheus.queries import label_selector, promql_duration
from ..redact import redact_text
from ..textsafe import Placeholder, command, markdown_text, plain

FORMATS = ("terminal", "json", "markdown")


def render(fleet, fmt, style) -> str:
    return render_fleet(fleet, fmt, color=style.color, width=style.width or 150)


VERDICT_MARK = {
    "problem": ("✗", "red"),
    "healthy": ("✓", "green"),
    "insufficient-data": ("?", "yellow"),
    "could-not-check": ("?", "bright_black"),
}


def render_fleet(fleet, fmt, color: bool = False, width: int = 100) -> str:
    from . import Format

    if fmt == Format.JSON:
        from .json_report import dumps_safe

        out = dumps_safe(fleet.to_dict())
    elif fmt == Format.MARKDOWN:
        out = _markdown(fleet)
    else:
        out = _terminal(fleet, color, width)
    return redact_text(out)


def _tau(e) -> str:
    if e.tau is None:
        return "—"
    if e.interval is not None and e.interval.high != float("inf"):
        return f"{e.tau:.2f} [{e.interval.low:.2f}–{e.interval.high:.2f}]"
    return f"{e.tau:.2f}"


def _curve(e) -> str:
    if not e.per_position:
        return f"k={e.k}" if e.k else "—"
    shown = " ".join(f"{r:.2f}" for r in e.per_position[:3])
    return f"{shown}{' …' if len(e.per_position) > 3 else ''} k={e.k}" + (f" {e.signature}" if e.signature else "")


def _trend(e) -> str:
    if e.change and e.change["drop"] > 0.15:
        c = e.change
        return f"↓ {c['tau_before']:.2f}→{c['tau_after']:.2f} at {c['time'][11:16]}" + (
            " (restart)" if c["after_restart"] else ""
        )
    if e.first_third is not None and e.last_third is not None:
        arrow = "→"
        if e.first_third > 1 and (e.first_third - e.last_third) / e.first_third > 0.15:
            arrow = "↘"
        elif e.last_third > e.first_third * 1.15:
            arrow = "↗"
        return f"{e.first_third:.2f}{arrow}{e.last_third:.2f}" + (f" ({e.restarts} restart)" if e.restarts else "")
    return f"{e.restarts} restart" if e.restarts else "—"


def _cause(e) -> str:
    c = e.top_cause
    if not c or e.verdict != "problem":
        return "—"
    return f"{c['id']} ({c['confidence']:.2f})" + ("" if c.get("decided") else " undecided")


def _drafts(e) -> str:
    return "—" if e.drafts is None else f"{e.drafts:,.0f}"


def _engine(e, by) -> str:
    return " ".join(e.labels.get(b, "") or "—" for b in by)


def _peers(e, by, peers) -> str:
    return " ".join(e.labels.get(p, "") or "—" for p in peers if p not in by) or "—"


def _summary(fleet) -> str:
    n = len(fleet.engines)
    counts: dict[str, int] = {}
    for e in fleet.engines:
        counts[e.verdict] = counts.get(e.verdict, 0) + 1
    outliers = sum(1 for e in fleet.engines if e.outlier)
    parts = [
        f"{counts[v]} {v}" for v in ("problem", "healthy", "insufficient-data", "could-not-check") if counts.get(v)
    ]
    return (
        f"{n} engine(s): "
        + ", ".join(parts)
        + (f"; {outliers} outlier(s)" if outliers else "")
        + f" — {fleet.queries} Prometheus queries, {fleet.seconds:.2f} s"
    )


def _terminal(fleet, color: bool, width: int) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    def t(x, style=""):
        return Text(plain(str(x)).replace("\n", " ⏎ "), style=style)

    buf = io.StringIO()
    con = Console(
        file=buf,
        force_terminal=color,
        color_system="standard" if color else None,
        width=max(width, 150),
        no_color=not color,
        highlight=False,
        emoji=False,
        markup=False,
    )
    con.print(
        t(
            f"dflash-doctor fleet  {fleet.url}  {fleet.query.selector or '(all series)'}  last "
            f"{promql_duration(fleet.end - fleet.start)}, step {promql_duration(fleet.query.step)}, "
            f"by {','.join(fleet.query.by)}",
            "bold",
        )
    )
    if not fleet.engines:
        con.print(t("no spec-decode series matched: nothing to judge", "bold yellow"))
    else:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        by, peers = fleet.query.by, fleet.query.peers
        for col in (
            "",
            ",".join(by),
            ",".join(p for p in peers if p not in by) or "peers",
            "τ [95 %]",
            "drafts",
            "curve p1 p2 p3",
            "trend",
            "verdict",
            "top cause",
        ):
            table.add_column(col, overflow="fold")
        for e in fleet.ordered():
            mark, style = VERDICT_MARK.get(e.verdict, ("?", ""))
            verdict = e.verdict + (" (outlier)" if e.outlier else "")
            table.add_row(
                t(mark, style),
                t(_engine(e, by)),
                t(_peers(e, by, peers)),
                t(_tau(e)),
                t(_drafts(e)),
                t(_curve(e)),
                t(_trend(e)),
                t(verdict, style),
                t(_cause(e)),
            )
        con.print(table)
        problems = [e for e in fleet.ordered() if e.reasons]
        if problems:
            con.print()
            for e in problems:
                con.print(t(f"{'✗'} {e.name}", "bold red"))
                for r in e.reasons:
                    con.print(t(f"    {r}"))
                if e.top_cause:
                    details = command(
                        "dflash-doctor",
                        "diagnose",
                        "--prometheus",
                        Placeholder("URL"),
                        "--selector",
                        label_selector(e.labels),
                    )
                    con.print(
                        t(
                            f"    top cause: {e.top_cause['title']} ({e.top_cause['confidence']:.2f}); "
                            f"details: {details}"
                        )
                    )
    notes = list(fleet.notes) + sorted(
        {n for e in fleet.engines for n in e.notes if not n.startswith(("in line", "no peer"))}
    )
    if notes:
        con.print()
        for n in notes:
            con.print(t(f"note: {n}", "bright_black"))
    con.print()
    con.print(t(_summary(fleet), "bold"))
    from .layout import rstrip_lines

    return rstrip_lines(buf.getvalue())


def _md(x) -> str:
    return markdown_text(x)


def _markdown(fleet) -> str:
    lines = [
        "# dflash-doctor fleet",
        "",
        f"{_md(fleet.url)} · selector {_md(fleet.query.selector or '(all)')} · last "
        f"{promql_duration(fleet.end - fleet.start)} · "
        f"by {_md(','.join(fleet.query.by))}",
        "",
        "| | engine | peers | τ [95 %] | drafts | curve | trend | verdict | top cause |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    by, peers = fleet.query.by, fleet.query.peers
    for e in fleet.ordered():
        mark = VERDICT_MARK.get(e.verdict, ("?", ""))[0]
        lines.append(
            f"| {mark} | {_md(_engine(e, by))} | {_md(_peers(e, by, peers))} | {_tau(e)} | {_drafts(e)} | "
            f"{_md(_curve(e))} | {_md(_trend(e))} | {e.verdict}{' (outlier)' if e.outlier else ''} | {_md(_cause(e))} |"
        )
    problems = [e for e in fleet.ordered() if e.reasons]
    if problems:
        lines += ["", "## Problems", ""]
        for e in problems:
            lines.append(f"- **{_md(e.name)}**: " + "; ".join(_md(r) for r in e.reasons))
    if fleet.notes:
        lines += ["", "## Notes", ""] + [f"- {_md(n)}" for n in fleet.notes]
    lines += ["", _md(_summary(fleet)), ""]
    return "\n".join(lines)
