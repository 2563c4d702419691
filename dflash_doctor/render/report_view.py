"""What a person reads first, as data both the terminal and the Markdown report lay out.

The answer first (flutter doctor, brew doctor): τ and what it should be, the verdict, the top causes with
what fixing each buys, one fix plan and the one next command. Then checks folded the doctor way: problems
one per line, every "could not check" folded into one line per missing input, passes counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..evidence import Cause, Finding, Report, Status, Verdict

if TYPE_CHECKING:  # the renderers read the plan, they do not import the ranking
    from ..rank.plan import PlanCause

# How many causes the summary names.
SUMMARY_CAUSES = 3


@dataclass(frozen=True)
class Waiting:
    kind: str
    reason: str
    checks: tuple[str, ...]
    asked: bool = True  # the diagnosis asked for this input (it is in the report's missing evidence)


@dataclass(frozen=True)
class FoldedChecks:
    problems: tuple[Finding, ...]
    warnings: tuple[Finding, ...]
    waiting: tuple[Waiting, ...]
    not_checked: tuple[Finding, ...]  # could not check for another reason (a crash, a damaged input)
    passed: tuple[Finding, ...]
    not_applicable: tuple[Finding, ...]
    inputs: tuple[Finding, ...] = field(default=())  # inputs the user named that could not be used

    def counts(self) -> str:
        parts = [
            (len(self.problems), "failed"),
            (len(self.warnings), "warned"),
            (len({f.check_id for f in self.passed}), "passed"),
            (
                len({c for w in self.waiting for c in w.checks} | {f.check_id for f in self.not_checked}),
                "could not run",
            ),
            (len({f.check_id for f in self.not_applicable}), "not applicable"),
        ]
        return ", ".join(f"{n} {w}" for n, w in parts if n)


def fold_checks(report: Report) -> FoldedChecks:
    reasons = {m.kind.value: m.reason for m in report.missing}
    waiting: dict[str, list[str]] = {}
    not_checked, inputs = [], []
    for f in report.findings:
        if f.status != Status.COULD_NOT_CHECK:
            continue
        if f.check_id == "inputs":
            if not any(m.reason and m.reason in f.message for m in report.missing):  # said once, on its input's line
                inputs.append(f)
        elif f.waiting_for:
            for k in f.waiting_for:
                waiting.setdefault(k, []).append(f.check_id)
        else:
            not_checked.append(f)
    order = [m.kind.value for m in report.missing]
    # inputs this diagnosis asked for (report.missing); a check waiting on something nobody asked for (a host,
    # in `diagnose`) is counted, not listed, unless -v
    kinds = sorted(
        set(waiting) | set(reasons),
        key=lambda k: (k != "acceptance", -len(waiting.get(k, ())), order.index(k) if k in order else 99, k),
    )
    return FoldedChecks(
        problems=tuple(f for f in report.findings if f.status == Status.FAIL),
        warnings=tuple(f for f in report.findings if f.status == Status.WARN),
        waiting=tuple(
            Waiting(k, reasons.get(k, f"no {k} evidence"), tuple(dict.fromkeys(waiting.get(k, ()))), asked=k in reasons)
            for k in kinds
        ),
        not_checked=tuple(not_checked),
        passed=tuple(f for f in report.findings if f.status == Status.OK),
        not_applicable=tuple(f for f in report.findings if f.status == Status.NOT_APPLICABLE),
        inputs=tuple(inputs),
    )


def tau_line(report: Report) -> str | None:
    acc = report.acceptance
    if acc is None:
        return None
    weight = (
        "a printed figure, its draft count unknown"
        if acc.standing == "printed"
        else "a per-request average"
        if acc.per_request
        else f"over {acc.drafts:,.0f} drafts"
    )
    parts = [f"mean acceptance length τ = {acc.mean_acceptance_length:.2f} {weight}"]
    if acc.standing == "upper-bound":
        parts = [f"mean acceptance length τ ≤ {acc.mean_acceptance_length:.2f} (an upper bound: drafts unknown)"]
    if acc.k:
        parts[0] += f" at k = {acc.k}"
    plan = report.plan
    if plan is not None and plan.reference_range:
        lo, lo_ds, hi, hi_ds = plan.reference_range
        parts.append(
            f"expected {lo:.2f} ({lo_ds}) – {hi:.2f} ({hi_ds}) by workload ({plan.reference.split(' on ')[0]}; "
            "the workload is not named: give --dataset)"
        )
    elif plan is not None and plan.reference_tau is not None:
        parts.append(f"expected ≈ {plan.reference_tau:.2f} ({plan.reference})")
    return " · ".join(parts)


def _basis_words(basis: str | None) -> str:
    return {
        "drafts": "the draft counts",
        "estimated-drafts": "estimated draft counts",
        "printed": "a printed τ without its draft count",
        "per-request": "a per-request average",
    }.get(basis or "", "the figures")


# A cause at least this likely is called "likely"; below, "possible".
LIKELY = 0.5


def likelihood(cause: Cause) -> str:
    return "likely" if cause.confidence >= LIKELY else "possible"


def verdict_words(report: Report) -> str:
    v = report.verdict
    if v == Verdict.PROBLEM:
        top = summary_causes(report)
        likely = [f"{pos}. {c.id}" for pos, c, _ in top if c.confidence >= LIKELY]
        possible = [f"{pos}. {c.id}" for pos, c, _ in top if c.confidence < LIKELY]
        parts = [
            f"{len(likely)} likely cause{'s' if len(likely) != 1 else ''} ({', '.join(likely)})" if likely else "",
            f"{len(possible)} possible ({', '.join(possible)})" if possible else "",
        ]
        words = ", ".join(p for p in parts if p)
        undecided = (report.verdict_detail or {}).get("undecided")
        if undecided:
            a, b = undecided["between"]
            given = f"; {undecided['input']} would separate them" if undecided.get("input") else ""
            words = f"could not decide between {a} and {b}{given}" + (f" ({words})" if words else "")
        return "problem" + (f": {words}" if words else "")
    if v == Verdict.HEALTHY:
        detail = report.verdict_detail or {}
        level = detail.get("level") or {}
        sure = detail.get("sure")
        how = f" (P {sure:.2f} from {_basis_words(level.get('basis'))})" if isinstance(sure, float) else ""
        caveat = " — but " + detail["caveat"] if detail.get("caveat") else ""
        return f"healthy: τ is where this deployment should be{how}{caveat}"
    acc = report.acceptance
    if acc is None:
        why = next((m.reason for m in report.missing if m.kind.value == "acceptance"), None)
        return f"insufficient-data: {why}" if why else "insufficient-data: no acceptance numbers were read"
    level = (report.verdict_detail or {}).get("level") or {}
    if level.get("decides") == "workload":
        return f"insufficient-data: the workload decides it ({level['workloads']}); name it with --dataset"
    if level.get("decides") == "method":
        return "insufficient-data: the method decides it; name it with --launch or --drafter"
    if acc.standing == "upper-bound":
        return (
            f"insufficient-data: τ {acc.mean_acceptance_length:.2f} is only an upper bound (the log prints drafted "
            "tokens, not drafts): it can show a deployment below its band, never that it reaches it"
        )
    if level.get("reading") == "undecided" and level.get("what"):
        return f"insufficient-data: the counts do not separate healthy from impaired ({level['what']})"
    if not acc.sufficient:
        return f"insufficient-data: {acc.drafts:.0f} drafts is too few to judge (at least {acc.min_drafts})"
    return "insufficient-data: τ cannot be judged without a baseline for this pair"


def summary_causes(report: Report) -> list[tuple[int, Cause, object]]:
    """(position, cause, plan entry) of the causes the summary names: the planned ones, by what fixing buys."""
    plan = report.plan
    by_id = {c.id: c for c in report.causes}
    out = []
    if plan is None:
        return [(i, c, None) for i, c in enumerate(report.causes[:SUMMARY_CAUSES], 1) if c.confidence >= 0.5]
    for pc in plan.causes:
        if pc.explained_by is None and pc.step is not None and pc.id in by_id:
            out.append((plan.position(pc.id), by_id[pc.id], pc))
    return out[:SUMMARY_CAUSES]


def ordered_causes(report: Report) -> list[tuple[int | None, Cause, PlanCause | None]]:
    """Every cause in the plan's order; an explained cause has position None and follows its explainer."""
    plan = report.plan
    if plan is None:
        return [(i, c, None) for i, c in enumerate(report.causes, 1)]
    by_id = {c.id: c for c in report.causes}
    out: list[tuple[int | None, Cause, PlanCause | None]] = []
    for pc in plan.causes:
        if pc.id in by_id:
            out.append((None if pc.explained_by else plan.position(pc.id), by_id[pc.id], pc))
    seen = {c.id for _, c, _ in out}
    out += [(None, c, None) for c in report.causes if c.id not in seen]
    return out


def next_words(report: Report) -> tuple[str | None, str | None]:
    """The plan's one next step: (what it is for, its command); nothing on a healthy verdict."""
    plan = report.plan
    if plan is None or report.verdict == Verdict.HEALTHY:
        return None, None
    return plan.next_why, plan.next_command


def fixing_words(pc, cause: Cause) -> str:
    if cause.expected_tau_if_fixed is None:
        return "τ if fixed unknown"
    s = f"τ ≈ {cause.expected_tau_if_fixed:.2f} if fixed"
    if pc is not None and pc.gap_share is not None:
        s += f" ({pc.gap_share * 100:.0f} % of the gap)"
    return s


def step_words(report: Report, step) -> str:
    """'upgrade vLLM 0.20.1 → 0.26.0 or later: fixes 1 and 2, expected τ ≈ 6.61 (5.6×)'."""
    plan = report.plan
    pos = [plan.position(c) for c in step.fixes]
    nums = [str(p) for p in pos if p is not None]
    fixes = (
        (
            "fixes "
            + (" and ".join(nums) if len(nums) <= 2 else ", ".join(nums[:-1]) + " and " + nums[-1])
            + f" ({', '.join(step.fixes)})"
        )
        if nums
        else ""
    )
    s = step.action + (f": {fixes}" if fixes else "")
    if step.expected_tau is not None:
        s += f", expected τ ≈ {step.expected_tau:.2f}"
        if plan.tau_now:
            s += f" ({step.expected_tau / plan.tau_now:.1f}× tokens/step)"
        if step.conditional:
            s += " if these are the causes"
    return s


_NOTE_DETAIL = ("Expected τ if fixed:",)


def notes_for(report: Report, verbose: bool) -> list[str]:
    """Report notes; the formula behind "τ if fixed" only in the verbose view, and the list of missing inputs
    said once (under Checks), not again in a note."""
    out = []
    for n in report.notes:
        if not verbose and n.startswith(_NOTE_DETAIL):
            continue
        if n.startswith("Ranked mostly from the acceptance figures") and ": missing" in n:
            n = n.split(": missing", 1)[0] + " (the missing inputs are listed under Checks)."
        out.append(n)
    return out


_REF = re.compile(r"^E\d+$")


def cited_refs(report: Report, findings, causes) -> list[str]:
    seen: dict[str, None] = {}
    for f in findings:
        for r in f.refs:
            seen.setdefault(r)
    for c in causes:
        for con in (*c.evidence_for, *c.evidence_against):
            for r in con.refs:
                seen.setdefault(r)
    known = {e.ref for e in report.evidence}
    return sorted((r for r in seen if r in known and _REF.match(r)), key=lambda r: int(r[1:]))
