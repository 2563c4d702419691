"""Render a known-issues audit (rank/known_issues/audit.py): one line per issue — id, title, fixed in, link."""

from __future__ import annotations

from ..textsafe import markdown_text, plain
from . import Format

FORMATS = (Format.TERMINAL, Format.JSON, Format.MARKDOWN)


def render(audit, fmt: Format, style) -> str:
    return render_known_issues(audit, fmt, color=style.color)


def render_known_issues(audit, fmt: Format, color: bool = False) -> str:
    if fmt == Format.JSON:
        from .json_report import dumps_safe

        return dumps_safe(audit.to_dict())
    if fmt == Format.MARKDOWN:
        return _markdown(audit)
    return _terminal(audit, color)


def _style(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def summary(audit) -> str:
    dep = audit.deployment
    if dep is None:
        return f"{len(audit.issues)} known issues in the database ({', '.join(audit.engines)})"
    n_aff, n_all = len(audit.affected), len(audit.matches)
    who = dep.describe()
    considered = f"{len(audit.issues)} {dep.engine} entries checked"
    if n_all == 0:
        return f"No known issues affect {who} ({considered})."
    bits = []
    if n_aff:
        certain = sum(1 for m in audit.affected if m.quality.value == "certain")
        verb = "affects" if n_aff == 1 else "affect"
        bits.append(f"{n_aff} known issue{'s' if n_aff != 1 else ''} {verb} {who}")
        if certain != n_aff:
            bits[-1] += f" ({n_aff - certain} only if the facts under 'if:' hold)"
    possible = n_all - n_aff
    if possible:
        bits.append(f"{possible} may, depending on the release or on several facts not given")
    return "; ".join(bits) + f" ({considered})."


def _terminal(audit, color: bool) -> str:
    lines: list[str] = []
    if audit.deployment is None:
        width = max((len(i.id) for i in audit.issues), default=0)
        for i in audit.issues:
            lines.append(f"{plain(i.id):<{width}}  {plain(i.title)}  fixed in {i.engine} {i.fixed_in}  {plain(i.link)}")
        lines.append("")
        lines.append(summary(audit))
        return "\n".join(lines) + "\n"
    width = max((len(m.issue.id) for m in audit.matches), default=0)
    for m in audit.matches:
        word, code = {"certain": ("affected", "31"), "likely": ("affected if", "33"), "possible": ("possible", "36")}[
            m.quality.value
        ]
        tag = _style(word.ljust(11), code, color)
        lines.append(
            f"{plain(m.issue.id):<{width}}  {tag}  {plain(m.issue.title)}  "
            f"fixed in {m.issue.fixed_in}  {plain(m.issue.link)}"
        )
        if m.unknown:
            lines.append(f"{'':<{width}}  {'':<11}  if: {plain('; '.join(m.unknown))}")
    if lines:
        lines.append("")
    lines.append(summary(audit))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return markdown_text(text)


def _markdown(audit) -> str:
    out = ["## Known issues", "", summary(audit), ""]
    if audit.deployment is None:
        out += ["| id | engine | title | fixed in | link |", "|---|---|---|---|---|"]
        out += [
            f"| {_cell(i.id)} | {i.engine} | {_cell(i.title)} | {i.fixed_in} | {_cell(i.link)} |" for i in audit.issues
        ]
        return "\n".join(out) + "\n"
    if not audit.matches:
        return "\n".join(out) + "\n"
    out += ["| id | match | title | fixed in | link | unknown conditions |", "|---|---|---|---|---|---|"]
    out += [
        f"| {_cell(m.issue.id)} | {m.quality.value} | {_cell(m.issue.title)} | {m.issue.fixed_in} | "
        f"{_cell(m.issue.link)} | {_cell('; '.join(m.unknown)) or '—'} |"
        for m in audit.matches
    ]
    return "\n".join(out) + "\n"
