"""Render a known-issues audit (interpret/known_issues/audit.py): a header, one record per issue — id, match,
fixed in, title, link — wrapped at the terminal's width, and the summary, where entries that exclude each other
(a drafter's windows are uniform or mixed, not both) count once."""

from __future__ import annotations

from ..textsafe import markdown_text
from .json_report import dumps_safe
from .layout import Cmd, Page
from .style import Format, Style

FORMATS = (Format.TERMINAL, Format.JSON, Format.MARKDOWN)


def render(audit, fmt: Format, style) -> str:
    if fmt == Format.JSON:
        return dumps_safe(audit.to_dict())
    if fmt == Format.MARKDOWN:
        return _markdown(audit)
    return _terminal(audit, style)


def render_known_issues(audit, fmt: Format, color: bool = False) -> str:
    return render(audit, fmt, Style(color=color))


def _values(v) -> frozenset:
    return frozenset(v) if isinstance(v, (list, tuple, set, frozenset)) else frozenset([v])


def exclusive_groups(matches) -> list[list]:
    """Matches grouped so that two in a group exclude each other: entries that ask one fact nobody gave
    for disjoint values (a drafter's sliding windows "uniform" or "mixed") cannot both apply."""
    parent = list(range(len(matches)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    keys = sorted({k for m in matches for k in m.issue.conditions})
    for k in keys:
        idx = [i for i, m in enumerate(matches) if k in m.issue.conditions]
        sets = [_values(matches[i].issue.conditions[k]) for i in idx]
        if len(idx) > 1 and all(a.isdisjoint(b) for n, a in enumerate(sets) for b in sets[n + 1 :]):
            for i in idx[1:]:
                parent[root(i)] = root(idx[0])
    groups: dict[int, list] = {}
    for i, m in enumerate(matches):
        groups.setdefault(root(i), []).append(m)
    return list(groups.values())


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
    possible = [m for m in audit.matches if m not in audit.affected]
    if possible:
        groups = exclusive_groups(possible)
        words = f"{len(groups)} may, depending on the release or on several facts not given"
        both = [g for g in groups if len(g) > 1]
        if both:
            words += "; " + "; ".join(f"{' and '.join(m.issue.id for m in g)} exclude each other" for g in both)
        bits.append(words)
    return "; ".join(bits) + f" ({considered})."


_TAG = {"certain": ("affected", "red"), "likely": ("affected if", "yellow"), "possible": ("possible", "cyan")}


def _terminal(audit, style) -> str:
    """A header, then one record per entry (its id and match, its title, its link, the conditions not
    known), wrapped at the terminal's width; the summary last."""
    page = Page(style)
    dep = audit.deployment
    if dep is None:
        page.line(("Known issues", "bold"), f" in the database ({', '.join(audit.engines)}): id, fixed in, title, link")
        for i in audit.issues:
            page.line((i.id, "bold"), f"  fixed in {i.engine} {i.fixed_in}", hang=2)
            page.line("  ", i.title, "  ", Cmd(i.link), hang=4)
    else:
        page.line(("Known issues for ", "bold"), (dep.describe(), "bold"), ": id, match, fixed in, title, link")
        for m in audit.matches:
            word, colour = _TAG[m.quality.value]
            page.line((m.issue.id, "bold"), "  ", (word, colour), f"  fixed in {m.issue.fixed_in}", hang=2)
            page.line("  ", m.issue.title, "  ", Cmd(m.issue.link), hang=4)
            if m.unknown:
                page.line("  if: ", "; ".join(m.unknown), hang=6)
    page.blank()
    page.line(summary(audit), hang=2)
    return page.text() + "\n"


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
