"""Doctor-style terminal output with rich: a status line per check, ranked causes with evidence for
and against, fix and next step, then the per-position acceptance curve as a bar chart.

Untrusted text always enters rich as `Text` built from `plain()`, never as markup.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..evidence import Report, Status, Verdict
from ..textsafe import plain

MARK = {Status.OK: ("✓", "green"), Status.WARN: ("!", "yellow"), Status.FAIL: ("✗", "red"),
        Status.COULD_NOT_CHECK: ("?", "bright_black")}
VERDICT_STYLE = {Verdict.PROBLEM: "bold red", Verdict.HEALTHY: "bold green", Verdict.INSUFFICIENT_DATA: "bold yellow"}


def t(text: object, style: str = "") -> Text:
    # One field, one line: a newline in untrusted text could otherwise print a forged "[✓] …" line.
    return Text(plain(text).replace("\n", " ⏎ "), style=style)


def curve_chart(per_position, width: int = 40, reference=None) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", style="bold")
    table.add_column()
    table.add_column(justify="right")
    for i, rate in enumerate(per_position):
        rate = max(0.0, min(1.0, rate))
        n = rate * width
        full = int(n)
        bar = "█" * full + ("▌" if n - full >= 0.5 else "")
        line = Text(bar.ljust(width), style="cyan")
        table.add_row(f"pos {i + 1}", line, f"{rate:.3f}")
    return table


def render_terminal(report: Report, color: bool = False, width: int = 100) -> str:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, color_system="standard" if color else None, width=width,
                      no_color=not color, highlight=False, emoji=False, markup=False)
    title = Text("dflash-doctor ", style="bold") + t(report.target)
    console.print(title)
    acc = report.acceptance
    if acc is not None:
        line = Text(f"mean acceptance length τ = {acc.mean_acceptance_length:.2f}", style="bold")
        line.append(f"  ({acc.drafts:.0f} drafts, {acc.intervals} intervals"
                    + (f", k = {acc.k}" if acc.k else "")
                    + (f", draft acceptance {acc.draft_acceptance_rate * 100:.1f} %" if acc.draft_acceptance_rate is not None else "")
                    + ")")
        console.print(line)
    console.print(Text("verdict: ") + Text(report.verdict.value, style=VERDICT_STYLE.get(report.verdict, "bold")))
    console.print()

    console.print(Text("Checks", style="bold underline"))
    for f in report.findings:
        mark, style = MARK[f.status]
        row = Text(f"[{mark}] ", style=style) + Text(f.check_id, style="bold") + Text(": ") + t(f.message)
        console.print(row)
        for d in f.details[:6]:
            console.print(Text("      ") + t(d, "dim"))
        if f.remedy and f.status in (Status.FAIL, Status.WARN):
            console.print(Text("      fix: ", style="yellow") + t(f.remedy))
    console.print(Text(f"{report.checks_passed}/{len(report.findings)} checks passed", style="dim"))
    console.print()

    console.print(Text("Ranked causes", style="bold underline"))
    if not report.causes:
        console.print(Text("  no cause stands out", style="dim"))
    for i, c in enumerate(report.causes, 1):
        head = Text(f"{i}. ", style="bold") + t(c.title, "bold") + Text(f"  [{c.id}]", style="magenta") \
            + Text(f"  confidence {c.confidence:.2f}", style="bold cyan")
        body: list = []
        for con in c.evidence_for:
            body.append(Text(f"  + ({con.weight:+.1f}) ", style="green") + t(con.text)
                        + (Text(f" [{', '.join(con.refs)}]", style="dim") if con.refs else Text("")))
        for con in c.evidence_against:
            body.append(Text(f"  − ({con.weight:+.1f}) ", style="red") + t(con.text)
                        + (Text(f" [{', '.join(con.refs)}]", style="dim") if con.refs else Text("")))
        if c.expected_tau_if_fixed is not None:
            body.append(Text(f"  expected τ if fixed: {c.expected_tau_if_fixed:.2f}"
                             + (f" (≈ {c.speedup_if_fixed:.2f}× tokens/step at the same k)" if c.speedup_if_fixed else "")))
        for m in c.missing_evidence:
            body.append(Text("  missing: ", style="yellow") + t(m))
        for n in c.notes:
            body.append(Text("  note: ", style="yellow") + t(n))
        body.append(Text("  fix: ", style="bold green") + t(c.fix))
        body.append(Text("  next step: ", style="bold") + t(c.next_step))
        console.print(head)
        for b in body:
            console.print(b)
    if report.notes:
        console.print()
        for n in report.notes:
            console.print(Text("note: ", style="yellow") + t(n))

    if acc is not None and acc.per_position:
        console.print()
        console.print(Panel(curve_chart(acc.per_position), title="per-position acceptance (unconditional)",
                            expand=False))
    if report.missing:
        console.print()
        console.print(Text("Missing evidence", style="bold underline"))
        for m in report.missing:
            console.print(Text(f"  {m.kind.value}: ", style="yellow") + t(m.reason))
    return buf.getvalue()
