"""The report on a terminal, doctor style: the answer first (≤ 15 lines: τ and what it should be, the verdict,
the top causes with what fixing each buys, one fix plan, the next command), then the causes in full, then
the checks — problems one per line, everything "could not check" folded into one line per missing input,
passes counted — and the evidence cited. `-v` shows every check, detail, weight and note.

Piped, every record is one line (grep finds it whole); on a terminal records wrap with their
continuation lines indented under them (render/layout.py).
"""

from __future__ import annotations

from ..evidence import Report, Status, Verdict
from .layout import Page, Style
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

MARK = {
    Status.OK: ("✓", "green"),
    Status.WARN: ("!", "yellow"),
    Status.FAIL: ("✗", "red"),
    Status.COULD_NOT_CHECK: ("?", "bright_black"),
    Status.NOT_APPLICABLE: ("–", "bright_black"),
}
VERDICT_STYLE = {Verdict.PROBLEM: "bold red", Verdict.HEALTHY: "bold green", Verdict.INSUFFICIENT_DATA: "bold yellow"}
# Details shown under a failed or warned check without -v.
DETAILS = 2


def render_terminal(
    report: Report, color: bool = False, width: int | None = None, verbose: bool = False, style: Style | None = None
) -> str:
    style = style or Style(color=color, width=width, verbose=verbose)
    page = Page(style)
    summary(page, report)
    causes(page, report, style.verbose)
    checks(page, report, style.verbose)
    notes(page, report, style.verbose)
    curve(page, report, style)
    legend(page, report, style.verbose)
    if not style.verbose:
        page.blank()
        page.line(("-v shows every check, detail, weight and note", "dim"))
    return page.text() + "\n"


def summary(page: Page, report: Report) -> None:
    page.line(("dflash-doctor ", "bold"), (report.target, "bold"))
    tl = tau_line(report)
    if tl:
        page.line((tl, "bold"))
    page.line("verdict: ", (verdict_words(report), VERDICT_STYLE.get(report.verdict, "bold")))
    plan = report.plan
    top = summary_causes(report)
    for pos, c, pc in top:
        page.line(
            f"  {pos}. ",
            (c.id, "magenta"),
            (f" {c.confidence:.2f}", "bold cyan"),
            "  ",
            (c.title, "bold"),
            f" — {fixing_words(pc, c)}",
            hang=5,
        )
    if plan is not None and plan.steps and report.verdict != Verdict.HEALTHY:
        first, *rest = plan.steps
        page.line(("fix plan: ", "bold green"), step_words(report, first), hang=2)
        for d in first.details[:1]:
            page.line("  ", (d, "dim"), hang=2)
        for s in rest[:2]:
            page.line(("then: ", "green"), step_words(report, s), hang=2)
    if plan is not None and plan.next_command and report.verdict != Verdict.HEALTHY:
        page.line(("next: ", "bold"), plan.next_command, hang=2)
        if plan.next_why:
            page.line("  ", (f"why: {plan.next_why}", "dim"), hang=7)


def causes(page: Page, report: Report, verbose: bool) -> None:  # noqa: C901 -- the causes block: none, healthy, undecided and ranked each read differently
    if not report.causes:
        if report.verdict == Verdict.PROBLEM:
            page.blank()
            page.line(("no cause stands out", "dim"))
        return
    page.blank()
    page.line(("Causes, by what fixing them buys", "bold underline"))
    plan = report.plan
    shown_low = []
    for pos, c, pc in ordered_causes(report):
        explained = pc is not None and pc.explained_by
        low = pc is not None and pc.step is None and not explained
        if not verbose and (explained or low):
            if low:
                shown_low.append(c)
            continue
        if explained:
            page.line(
                "   ",
                (f"explained by {pc.explained_by}: ", "dim"),
                (c.title, "bold"),
                (f"  [{c.id}]", "magenta"),
                (f"  confidence {c.confidence:.2f}", "cyan"),
                hang=5,
            )
            ind = "     "
        else:
            page.line(
                (f"{pos}. " if pos else "- ", "bold"),
                (c.title, "bold"),
                (f"  [{c.id}]", "magenta"),
                (f"  confidence {c.confidence:.2f}", "bold cyan"),
                hang=3,
            )
            ind = "   "
        for con in c.evidence_for:
            page.line(ind, (f"+ ({con.weight:+.1f}) ", "green"), con.text, _refs(con.refs), hang=len(ind) + 9)
        for con in c.evidence_against:
            page.line(ind, (f"− ({con.weight:+.1f}) ", "red"), con.text, _refs(con.refs), hang=len(ind) + 9)
        if c.expected_tau_if_fixed is not None:
            page.line(
                ind,
                f"if fixed: τ ≈ {c.expected_tau_if_fixed:.2f}"
                + (f" ({c.speedup_if_fixed:.2f}× tokens/step at the same k)" if c.speedup_if_fixed else "")
                + (f"; step {pc.step} of the plan" if pc is not None and pc.step else ""),
                hang=len(ind),
            )
        if verbose:
            if c.missing_evidence:
                page.line(
                    ind,
                    ("missing: ", "yellow"),
                    ", ".join(m.split(":", 1)[0] for m in c.missing_evidence),
                    hang=len(ind) + 9,
                )
            for n in c.notes:
                page.line(ind, ("note: ", "yellow"), n, hang=len(ind) + 6)
        if not explained or verbose:
            page.line(ind, ("fix: ", "bold green"), c.fix, hang=len(ind) + 5)
            page.line(ind, ("next: ", "bold"), c.next_step, hang=len(ind) + 6)
        if not verbose and plan is not None:
            under = [(e, x) for _, e, x in ordered_causes(report) if x is not None and x.explained_by == c.id]
            if under:
                page.line(
                    ind,
                    ("explains: ", "dim"),
                    ", ".join(f"{e.id} ({e.confidence:.2f})" for e, _ in under)
                    + f" — only the acceptance figures point at {'them' if len(under) > 1 else 'it'}",
                    hang=len(ind) + 10,
                )
    if shown_low:
        page.line(("also considered: ", "dim"), ", ".join(f"{c.id} ({c.confidence:.2f})" for c in shown_low), hang=2)


def _refs(refs) -> tuple[str, str]:
    return (f" [{', '.join(refs)}]" if refs else "", "dim")


def checks(page: Page, report: Report, verbose: bool) -> None:
    folded = fold_checks(report)
    page.blank()
    page.line(("Checks", "bold underline"), f"  {folded.counts()}")
    for f in folded.inputs:
        _finding(page, f, verbose)
    for f in (*folded.problems, *folded.warnings):
        _finding(page, f, verbose)
    for f in folded.not_checked:
        _finding(page, f, verbose)
    for w in folded.waiting:
        if not verbose and (not w.checks or not w.asked):
            continue
        mark, st = MARK[Status.COULD_NOT_CHECK]
        waits = (
            (
                f" — {len(w.checks)} check{'s' if len(w.checks) != 1 else ''} waiting"
                + (f": {', '.join(w.checks)}" if verbose or len(w.checks) <= 3 else "")
            )
            if w.checks
            else ""
        )
        page.line((f"{mark} ", st), (w.kind, "bold"), f": {w.reason}{waits}", hang=2)
    if verbose:  # every check on its own line; the reason stays said once, above
        for f in report.findings:
            if f.status == Status.COULD_NOT_CHECK and f.waiting_for:
                page.line(
                    (f"{MARK[f.status][0]} ", MARK[f.status][1]),
                    (f.check_id, "bold"),
                    f": waiting for {', '.join(f.waiting_for)}",
                    hang=2,
                )
    if verbose:
        for f in (*folded.passed, *folded.not_applicable):
            _finding(page, f, verbose)
    else:
        if folded.passed:
            ids = list(dict.fromkeys(f.check_id for f in folded.passed))
            page.line(
                (f"{MARK[Status.OK][0]} ", MARK[Status.OK][1]), f"{len(ids)} passed: ", (", ".join(ids), "dim"), hang=2
            )
        if folded.not_applicable:
            ids = list(dict.fromkeys(f.check_id for f in folded.not_applicable))
            page.line(
                (f"{MARK[Status.NOT_APPLICABLE][0]} ", "dim"),
                f"{len(ids)} not applicable: ",
                (", ".join(ids), "dim"),
                hang=2,
            )


def _finding(page: Page, f, verbose: bool) -> None:
    mark, st = MARK[f.status]
    page.line((f"{mark} ", st), (f.check_id, "bold"), ": ", f.message, _refs(f.refs if verbose else ()), hang=2)
    for d in f.details if verbose else f.details[:DETAILS] if f.status in (Status.FAIL, Status.WARN) else ():
        page.line("    ", (d, "dim"), hang=4)
    if f.remedy and f.status in (Status.FAIL, Status.WARN):
        page.line("    ", ("fix: ", "yellow"), f.remedy, hang=9)


def notes(page: Page, report: Report, verbose: bool) -> None:
    ns = notes_for(report, verbose)
    if ns:
        page.blank()
        for n in ns:
            page.line(("note: ", "yellow"), n, hang=6)


def curve(page: Page, report: Report, style: Style) -> None:
    acc = report.acceptance
    if acc is None or not acc.per_position:
        return
    page.blank()
    page.line(("per-position acceptance (unconditional)", "bold underline"))
    rates = [max(0.0, min(1.0, r)) for r in acc.per_position]
    last = len(rates)
    if not style.verbose:  # a run of negligible rates at the end is one row
        while last > 1 and rates[last - 1] < 0.005:
            last -= 1
        last = min(len(rates), last + 1)
    bar_w = 40 if style.width is None else max(10, min(40, style.width - 20))
    for i, r in enumerate(rates[:last]):
        n = r * bar_w
        bar = "█" * int(n) + ("▌" if n - int(n) >= 0.5 else "")
        label = f"pos {i + 1:>2}" if last == len(rates) or i < last - 1 else f"pos {i + 1}–{len(rates)}"
        page.line(f"  {label:<10} ", (bar.ljust(bar_w), "cyan"), f" {r:.3f}")


def legend(page: Page, report: Report, verbose: bool) -> None:
    shown_causes = report.causes
    findings = report.findings if verbose else ()
    refs = cited_refs(report, findings, shown_causes)
    if not refs:
        return
    by_ref = {e.ref: e for e in report.evidence}
    page.blank()
    page.line(("Evidence cited", "bold underline"))
    for r in refs:
        e = by_ref[r]
        page.line(
            f"  {r:<4} ",
            (e.kind.value, "bold"),
            f": {e.summary}",
            (f" ({e.source.describe()})" if verbose else "", "dim"),
            hang=7,
        )
