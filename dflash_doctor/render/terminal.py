"""The report on a terminal, doctor style.

By default one screen (`screen`, like flutter doctor and brew doctor): τ against the band, the ranked causes
with their confidence, the one fix plan, the one next step, one line per group of checks, and the verdict as
the last line, where the eye lands when the command ends. `-v` (`--details`) gives the full report: the answer
first, then the causes in full, then the checks — problems one per line, everything "could not check" folded
into one line per missing input, passes counted — and the evidence cited. `-vv` shows every check, detail,
weight and note.

Piped, every record is one line (grep finds it whole); on a terminal records wrap with their
continuation lines indented under them (render/layout.py).
"""

from __future__ import annotations

from ..check import DOES_NOT_APPLY
from ..evidence import Report, Status, Verdict
from .layout import Cmd, Page, Style
from .report_view import (
    FoldedChecks,
    cited_refs,
    fixing_words,
    fold_checks,
    likelihood,
    next_words,
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
    if style.screen:
        screen(page, report)
        return page.text() + "\n"
    summary(page, report)
    causes(page, report, style.verbose)
    checks(page, report, style.verbose)
    notes(page, report, style.verbose)
    curve(page, report, style)
    legend(page, report, style.verbose)
    if not style.verbose:
        page.blank()
        page.line(("-vv shows every check, detail, weight and note", "dim"))
    return page.text() + "\n"


def screen(page: Page, report: Report) -> None:
    """The one-screen visit: what a person acts on, ending on the verdict."""
    page.line(("dflash-doctor ", "bold"), (report.target, "bold"))
    tl = tau_line(report)
    if tl:
        page.line((tl, "bold"))
    healthy = report.verdict == Verdict.HEALTHY
    for pos, c, pc in summary_causes(report):
        page.line(
            f"  {pos}. ",
            (c.id, "magenta"),
            (f"  confidence {c.confidence:.2f} ({likelihood(c)})", "bold cyan"),
            "  ",
            (c.title, "bold"),
            f" — {fixing_words(pc, c)}",
            hang=5,
        )
    plan = report.plan
    if plan is not None and plan.steps and not healthy:
        first, *rest = plan.steps
        page.line(("fix plan: ", "bold green"), step_words(report, first), hang=2)
        for d in first.details[:1]:
            page.line("  ", d, hang=2)
        for s in rest[:2]:
            page.line(("then: ", "green"), step_words(report, s), hang=2)
    _next(page, report)
    _check_groups(page, fold_checks(report))
    page.line(("-v shows each cause's evidence and every check", "dim"))
    page.line(("verdict: ", "bold"), (verdict_words(report), VERDICT_STYLE.get(report.verdict, "bold")), hang=2)


def _next(page: Page, report: Report) -> None:
    """The one next step: words, then its command (on its own line when the line would not hold it)."""
    words, cmd = next_words(report)
    if not words and not cmd:
        return
    if not cmd:
        page.line(("next: ", "bold"), words or "", hang=2)
        return
    head = f"next: {words}: " if words else "next: "
    width = page.style.width
    if width is not None and len(head) + len(cmd) > width:
        page.line(("next:", "bold"), f" {words}:" if words else "", hang=2)
        page.line("  ", (Cmd(cmd), "bold"))
    else:
        page.line(("next: ", "bold"), f"{words}: " if words else "", (Cmd(cmd), "bold"), hang=2)


def _check_groups(page: Page, folded: FoldedChecks) -> None:
    """One line per group of checks: failed, warned, each input checks wait for (and the command that gives
    it), could not run, and the passed / not applicable counts."""
    for status, group, word in ((Status.FAIL, folded.problems, "failed"), (Status.WARN, folded.warnings, "warned")):
        mark, st = MARK[status]
        if len(group) == 1:  # one finding: what it found, in its own words
            page.line((f"{mark} ", st), (group[0].check_id, "bold"), ": ", group[0].message, hang=2)
        elif group:
            page.line((f"{mark} ", st), f"{len(group)} {word}: ", (_ids(group), "bold"), hang=2)
    mark, st = MARK[Status.COULD_NOT_CHECK]
    for w in folded.waiting:
        if not w.checks or not w.asked:
            continue
        cmd = _ticked(w.reason)
        how = (" — run " if cmd.startswith("dflash-doctor ") else " — give ", (Cmd(cmd), "bold")) if cmd else ()
        page.line(
            (f"{mark} ", st),
            f"{len(w.checks)} waiting for {w.kind}: ",
            (", ".join(w.checks), "bold"),
            *(how or (f" — {w.reason}",)),
            hang=2,
        )
    broken = (*folded.inputs, *folded.not_checked)
    if broken:
        page.line((f"{mark} ", st), f"{len(broken)} could not run: ", (_ids(broken), "bold"), hang=2)
    counts = []
    if folded.passed:
        counts.append(f"{len({f.check_id for f in folded.passed})} passed")
    unasked = sorted({c for w in folded.waiting if not w.asked for c in w.checks})
    if unasked:
        needs = "needs" if len(unasked) == 1 else "need"
        counts.append(f"{len(unasked)} {needs} an input this command does not take ({', '.join(unasked)})")
    void = {f.check_id: f.message for f in folded.not_applicable if f.message.startswith(DOES_NOT_APPLY)}
    if void:  # (one reason: an n-gram launch has no drafter model)
        counts.append(f"{len(void)} not applicable ({next(iter(void.values()))[len(DOES_NOT_APPLY) :]})")
    others = {f.check_id for f in folded.not_applicable} - set(void)
    if others:
        counts.append(f"{len(others)} not applicable (another check decides)")
    if counts:
        page.line((f"{MARK[Status.OK][0]} ", MARK[Status.OK][1]), ", ".join(counts), hang=2)


def _ids(findings) -> str:
    """check ids in order, a repeated one counted: 'known-issues ×2'."""
    n: dict[str, int] = {}
    for f in findings:
        n[f.check_id] = n.get(f.check_id, 0) + 1
    return ", ".join(k + (f" ×{v}" if v > 1 else "") for k, v in n.items())


def _ticked(text: str) -> str | None:
    i = text.find("`")
    j = text.find("`", i + 1)
    return text[i + 1 : j] if 0 <= i < j else None


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
        for d in first.details[:1]:  # part of the step (run the V2 runner): said as plainly as the step
            page.line("  ", d, hang=2)
        for s in rest[:2]:
            page.line(("then: ", "green"), step_words(report, s), hang=2)
    _next(page, report)


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
                (f"explained by {explained}: ", "dim"),
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
