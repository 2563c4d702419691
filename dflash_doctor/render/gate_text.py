"""Gate results as plain text (terminal) and Markdown (step summaries, MR comments)."""

from __future__ import annotations

from ..services.gate import GateResult, Outcome
from ..textsafe import plain
from .json_report import dumps_safe
from .markdown import md
from .report_view import step_words, summary_causes
from .style import Format, Style

FORMATS = (Format.TERMINAL, Format.JSON, Format.MARKDOWN)


def render(result: GateResult, fmt: Format, style: Style) -> str:
    if fmt == Format.JSON:
        return dumps_safe(result.to_dict())
    if fmt == Format.MARKDOWN:
        return render_gate_markdown(result)
    return render_gate_text(result)


MARK = {Outcome.PASS: "✓", Outcome.FAIL: "✗", Outcome.NO_DATA: "?"}
ICON = {Outcome.PASS: "✅", Outcome.FAIL: "❌", Outcome.NO_DATA: "❔"}
HEADLINE = {Outcome.PASS: "passed", Outcome.FAIL: "FAILED", Outcome.NO_DATA: "no data"}


def render_gate_text(result: GateResult) -> str:
    out = [f"dflash-doctor gate: {HEADLINE[result.outcome]}  ({plain(result.source)})"]
    m = result.measured
    if m:
        out.append(
            f"τ {m['mean_acceptance_length']:.2f} over {m['drafts']:.0f} drafts"
            + (f", k = {m['k']}" if m.get("k") else "")
        )
    for r in result.results:
        out.append(f"  [{MARK[r.outcome]}] {r.name}: {plain(r.message)}")
    if result.report is not None and result.outcome == Outcome.FAIL and result.report.causes:
        rep = result.report
        out.append("causes, by what fixing them buys (`dflash-doctor diagnose` shows the evidence):")
        for pos, c, _ in summary_causes(rep) or [(i, c, None) for i, c in enumerate(rep.causes[:3], 1)]:
            out.append(f"  {pos}. {c.id} ({c.confidence:.2f}): {plain(c.title)}")
        if rep.plan is not None and rep.plan.steps:
            out.append(f"fix plan: {plain(step_words(rep, rep.plan.steps[0]))}")
    for n in result.notes:
        out.append(f"note: {plain(n)}")
    return "\n".join(out) + "\n"


def render_gate_markdown(result: GateResult) -> str:
    out = [f"### dflash-doctor gate: {ICON[result.outcome]} {HEADLINE[result.outcome]}", ""]
    m = result.measured
    if m:
        out.append(
            f"Mean acceptance length **{m['mean_acceptance_length']:.2f}** over {m['drafts']:.0f} drafts"
            + (f" (k = {m['k']})" if m.get("k") else "")
            + f" — source: {md(result.source)}"
        )
        out.append("")
    out.append("| | threshold | measured | limit | result |")
    out.append("|---|---|---|---|---|")
    for r in result.results:
        meas = "—" if r.measured is None else (f"{r.measured:.0f}" if abs(r.measured) >= 100 else f"{r.measured:.3g}")
        lim = "—" if r.threshold is None else f"{r.threshold:g}"
        out.append(f"| {ICON[r.outcome]} | `{r.name}` | {meas} | {lim} | {md(r.message)} |")
    if result.report is not None and result.outcome == Outcome.FAIL and result.report.causes:
        rep = result.report
        out.append("")
        out.append("Causes, by what fixing them buys (`dflash-doctor diagnose` shows the evidence):")
        out.append("")
        for pos, c, _ in summary_causes(rep) or [(i, c, None) for i, c in enumerate(rep.causes[:3], 1)]:
            out.append(f"{pos}. `{c.id}` ({c.confidence:.2f}): {md(c.title)}")
        if rep.plan is not None and rep.plan.steps:
            out.append("")
            out.append(f"**Fix plan:** {md(step_words(rep, rep.plan.steps[0]))}")
    for n in result.notes:
        out.append("")
        out.append(f"_note: {md(n)}_")
    return "\n".join(out) + "\n"
