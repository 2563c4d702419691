"""A Markdown report, pasteable into a GitHub issue. Untrusted text goes into code spans or is escaped."""

from __future__ import annotations

import re

from ..evidence import Report, Status
from ..textsafe import plain

# & too: an entity such as &#x202e; would render as the character it names.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")
ICON = {Status.OK: "✅", Status.WARN: "⚠️", Status.FAIL: "❌", Status.COULD_NOT_CHECK: "❔"}


def md(text: object) -> str:
    """Escape untrusted text for Markdown (no links, HTML or formatting can be injected)."""
    return _MD_SPECIAL.sub(r"\\\1", plain(text)).replace("\n", " ")


def render_markdown(report: Report) -> str:
    out: list[str] = []
    acc = report.acceptance
    out.append(f"## dflash-doctor report: {md(report.target)}")
    out.append("")
    out.append(f"**Verdict:** `{report.verdict.value}`")
    if acc is not None:
        out.append("")
        out.append(f"**Mean acceptance length (τ):** {acc.mean_acceptance_length:.2f} over {acc.drafts:.0f} drafts"
                   + (f", k = {acc.k}" if acc.k else "")
                   + (f", draft acceptance rate {acc.draft_acceptance_rate * 100:.1f} %" if acc.draft_acceptance_rate is not None else ""))
        if acc.per_position:
            out.append("")
            out.append("| position | " + " | ".join(str(i + 1) for i in range(len(acc.per_position))) + " |")
            out.append("|---|" + "---|" * len(acc.per_position))
            out.append("| rate | " + " | ".join(f"{r:.3f}" for r in acc.per_position) + " |")
    out.append("")
    out.append("### Ranked causes")
    out.append("")
    if not report.causes:
        out.append("_No cause stands out._")
    for i, c in enumerate(report.causes, 1):
        out.append(f"{i}. **{md(c.title)}** (`{c.id}`, confidence {c.confidence:.2f})")
        for con in c.evidence_for:
            out.append(f"   - for ({con.weight:+.1f}): {md(con.text)}")
        for con in c.evidence_against:
            out.append(f"   - against ({con.weight:+.1f}): {md(con.text)}")
        if c.expected_tau_if_fixed is not None:
            out.append(f"   - expected τ if fixed: {c.expected_tau_if_fixed:.2f}"
                       + (f" (≈ {c.speedup_if_fixed:.2f}× tokens/step at the same k)" if c.speedup_if_fixed else ""))
        for m in c.missing_evidence:
            out.append(f"   - missing: {md(m)}")
        for n in c.notes:
            out.append(f"   - note: {md(n)}")
        out.append(f"   - **fix:** {md(c.fix)}")
        out.append(f"   - **next step:** {md(c.next_step)}")
    out.append("")
    out.append("### Checks")
    out.append("")
    out.append("| | check | result |")
    out.append("|---|---|---|")
    for f in report.findings:
        out.append(f"| {ICON[f.status]} | `{f.check_id}` | {md(f.message)} |")
    passed = report.checks_passed
    out.append("")
    out.append(f"{passed}/{len(report.findings)} checks passed.")
    if report.notes:
        out.append("")
        out.append("### Notes")
        out.append("")
        for n in report.notes:
            out.append(f"- {md(n)}")
    if report.missing:
        out.append("")
        out.append("### Missing evidence")
        out.append("")
        for m in report.missing:
            out.append(f"- `{m.kind.value}`: {md(m.reason)}")
    out.append("")
    out.append(f"<sub>dflash-doctor {md(report.tool_version)}</sub>")
    return "\n".join(out) + "\n"
