"""A Markdown report, pasteable into a GitHub issue: the answer first (as on the terminal), then the causes,
the checks and the evidence. Untrusted text is escaped; a command in backticks stays a code span when
nothing in it could become markup."""

from __future__ import annotations

import re

from ..evidence import Report, Status
from ..textsafe import plain
from .report_view import (
    cited_refs,
    fixing_words,
    fold_checks,
    notes_for,
    ordered_causes,
    step_words,
    summary_causes,
    tau_line,
    verdict_words,
)

# & too: an entity such as &#x202e; would render as the character it names.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")
ICON = {Status.OK: "✅", Status.WARN: "⚠️", Status.FAIL: "❌", Status.COULD_NOT_CHECK: "❔", Status.NOT_APPLICABLE: "➖"}
_SPAN = re.compile(r"`([^`\n]+)`")
# A code span is kept only when its text cannot close it, open HTML or an entity, or split a table cell.
_SAFE_SPAN = re.compile(r"^[^<>&|\\\[\]]*$")


def _escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def md(text: object) -> str:
    """Escape untrusted text for Markdown (no links, HTML or formatting can be injected); a `command` in
    backticks stays a code span when it holds nothing that could become markup."""
    s = plain(text).replace("\n", " ")
    out, pos = [], 0
    for m in _SPAN.finditer(s):
        if not _SAFE_SPAN.match(m.group(1)):
            continue
        out.append(_escape(s[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_escape(s[pos:]))
    return "".join(out)


def render_markdown(report: Report, verbose: bool = False) -> str:  # noqa: C901 -- the report's sections in reading order, each present only when it has content
    out: list[str] = [f"## dflash-doctor report: {md(report.target)}", ""]
    tl = tau_line(report)
    if tl:
        out.append(f"**{md(tl)}**")
        out.append("")
    out.append(f"**Verdict:** `{report.verdict.value}` — {md(verdict_words(report).split(': ', 1)[-1])}")
    out.append("")
    plan = report.plan
    top = summary_causes(report)
    if top:
        for pos, c, pc in top:
            out.append(f"{pos}. `{c.id}` ({c.confidence:.2f}) {md(c.title)} — {md(fixing_words(pc, c))}")
        out.append("")
    if plan is not None and plan.steps and report.verdict.value != "healthy":
        first, *rest = plan.steps
        out.append(
            f"**Fix plan:** {md(step_words(report, first))}" + (f" — {md(first.details[0])}" if first.details else "")
        )
        for s in rest[:2]:
            out.append(f"- then: {md(step_words(report, s))}")
        out.append("")
    if plan is not None and plan.next_command and report.verdict.value != "healthy":
        out.append(
            f"**Next:** {md('`' + plan.next_command.replace('`', '') + '`')}"
            + (f" ({md(plan.next_why)})" if plan.next_why else "")
        )
        out.append("")
    acc = report.acceptance
    if acc is not None and acc.per_position:
        out.append("| position | " + " | ".join(str(i + 1) for i in range(len(acc.per_position))) + " |")
        out.append("|---|" + "---|" * len(acc.per_position))
        out.append("| rate | " + " | ".join(f"{r:.3f}" for r in acc.per_position) + " |")
        out.append("")
    out.append("### Causes, by what fixing them buys")
    out.append("")
    if not report.causes:
        out.append("_No cause stands out._")
    for place, c, pc in ordered_causes(report):
        head = f"{place}. " if place else "- "
        indent = "   " if place else "  "
        explained = f" — explained by `{pc.explained_by}`" if pc is not None and pc.explained_by else ""
        out.append(f"{head}**{md(c.title)}** (`{c.id}`, confidence {c.confidence:.2f}){explained}")
        for con in c.evidence_for:
            out.append(f"{indent}- for ({con.weight:+.1f}): {md(con.text)}" + _refs(con.refs))
        for con in c.evidence_against:
            out.append(f"{indent}- against ({con.weight:+.1f}): {md(con.text)}" + _refs(con.refs))
        if c.expected_tau_if_fixed is not None:
            out.append(
                f"{indent}- expected τ if fixed: {c.expected_tau_if_fixed:.2f}"
                + (f" (≈ {c.speedup_if_fixed:.2f}× tokens/step at the same k)" if c.speedup_if_fixed else "")
                + (f"; step {pc.step} of the plan" if pc is not None and pc.step else "")
            )
        if c.missing_evidence:
            out.append(f"{indent}- missing: " + ", ".join(f"`{m.split(':', 1)[0]}`" for m in c.missing_evidence))
        if verbose:
            for n in c.notes:
                out.append(f"{indent}- note: {md(n)}")
        out.append(f"{indent}- **fix:** {md(c.fix)}")
        out.append(f"{indent}- **next step:** {md(c.next_step)}")
    out.append("")
    folded = fold_checks(report)
    out.append("### Checks")
    out.append("")
    out.append(md(folded.counts()) + ".")
    out.append("")
    out.append("| | check | result |")
    out.append("|---|---|---|")
    for f in (*folded.inputs, *folded.problems, *folded.warnings, *folded.not_checked):
        out.append(
            f"| {ICON[f.status]} | `{f.check_id}` | {md(f.message)}"
            + (f" — fix: {md(f.remedy)}" if f.remedy and f.status in (Status.FAIL, Status.WARN) else "")
            + " |"
        )
    for w in folded.waiting:
        waits = (
            f" — {len(w.checks)} check{'s' if len(w.checks) != 1 else ''} waiting: "
            + ", ".join(f"`{c}`" for c in w.checks)
            if w.checks
            else ""
        )
        out.append(f"| {ICON[Status.COULD_NOT_CHECK]} | `{w.kind}` | {md(w.reason)}{waits} |")
    for f in (*folded.passed, *folded.not_applicable):
        out.append(f"| {ICON[f.status]} | `{f.check_id}` | {md(f.message)} |")
    notes = notes_for(report, verbose)
    if notes:
        out.append("")
        out.append("### Notes")
        out.append("")
        for n in notes:
            out.append(f"- {md(n)}")
    refs = cited_refs(report, report.findings, report.causes)
    if refs:
        by_ref = {e.ref: e for e in report.evidence}
        out.append("")
        out.append("### Evidence cited")
        out.append("")
        for r in refs:
            e = by_ref[r]
            out.append(f"- **{r}** `{e.kind.value}`: {md(e.summary)} ({md(e.source.describe())})")
    out.append("")
    out.append(f"<sub>dflash-doctor {md(report.tool_version)}</sub>")
    return "\n".join(out) + "\n"


def _refs(refs) -> str:
    return f" [{', '.join(refs)}]" if refs else ""
