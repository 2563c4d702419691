"""Pictures for a report: the per-position acceptance curve against the pair's reference curve, and
τ over time (one point per metrics interval). PNG/SVG through matplotlib (the `plot` extra, imported
only here); HTML is the SVG inside a self-contained page with the numbers as a table.
"""

from __future__ import annotations

import html
import io
import os
from dataclasses import dataclass

from ..errors import MissingExtra, UsageError
from ..textsafe import plain

FORMATS = (".png", ".svg", ".html")


@dataclass(frozen=True)
class PlotData:
    title: str
    per_position: list[float]
    reference: list[float] | None
    reference_label: str | None
    timeline: list[tuple[str, float]]  # (interval label, τ)


def plot_data(report, evidence=None) -> PlotData:
    """The curve, the pair's reference curve and τ over time — all from the report's acceptance summary
    and the evidence, never from re-reading the files."""
    acc = report.acceptance
    pp = list(acc.per_position) if acc is not None else []
    reference = label = None
    if evidence is not None:
        from ..rank.baselines import in_force, pair_context

        ctx = pair_context(evidence, in_force(evidence))
        if ctx.baseline is not None and pp:
            k = min(len(pp), ctx.baseline.k)
            reference = ctx.baseline.reference_curve(ctx.dataset, k)
            ds, tau, _ = ctx.baseline.tau_for(ctx.dataset)
            how = "" if ctx.baseline.curve else ", geometric fit"
            label = plain(f"{ctx.baseline.id}") + f" reference ({ctx.baseline.trust}, {ds} τ {tau:.2f}{how})"
    timeline: list[tuple[str, float]] = [
        (plain(p.get("timestamp") or f"#{i + 1}", 40), float(p["tau"]))
        for i, p in enumerate(acc.series if acc is not None else ())
        if isinstance(p.get("tau"), (int, float)) and p.get("drafts", 0) > 0]
    tau = f"τ {acc.mean_acceptance_length:.2f}" if acc is not None else "no acceptance data"
    return PlotData(title=f"dflash-doctor: {plain(report.target)} — {tau}, verdict {report.verdict.value}",
                    per_position=pp, reference=reference, reference_label=label, timeline=timeline)


def _figure(data: PlotData):
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra("plot", "matplotlib") from None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    xs = list(range(1, len(data.per_position) + 1))
    ax1.bar(xs, data.per_position, color="#3b7dd8", label="measured (unconditional rate)")
    if data.reference:
        ax1.plot(list(range(1, len(data.reference) + 1)), data.reference, "o-", color="#e07b00",
                 label=data.reference_label or "reference")
    ax1.set_xlabel("draft position")
    ax1.set_ylabel("acceptance rate")
    ax1.set_ylim(0, 1)
    ax1.set_title("per-position acceptance" + ("" if data.reference else " (no reference for this pair)"))
    ax1.legend(loc="upper right", fontsize=8)
    if data.timeline:
        ax2.plot(range(len(data.timeline)), [t for _, t in data.timeline], ".-", color="#3b7dd8")
        step = max(1, len(data.timeline) // 6)
        ticks = list(range(0, len(data.timeline), step))
        ax2.set_xticks(ticks, [data.timeline[i][0] for i in ticks], rotation=30, fontsize=7)
        ax2.set_ylim(1.0, max(t for _, t in data.timeline) * 1.1 + 0.1)
        ax2.set_title("τ per metrics interval")
    else:
        ax2.text(0.5, 0.5, "no per-interval data\n(τ over time needs a log)", ha="center", va="center")
        ax2.set_title("τ over time")
    ax2.set_ylabel("mean acceptance length τ")
    fig.suptitle(data.title, fontsize=10)
    fig.tight_layout()
    return fig, plt


def render_plot(data: PlotData, fmt: str) -> bytes:
    fig, plt = _figure(data)
    try:
        buf = io.BytesIO()
        fig.savefig(buf, format="png" if fmt == ".png" else "svg", dpi=110)
    finally:
        plt.close(fig)
    if fmt != ".html":
        return buf.getvalue()
    svg = buf.getvalue().decode("utf-8")
    svg = svg[svg.find("<svg"):]  # drop the XML prolog/doctype: inline SVG in HTML5
    rows = "".join(f"<tr><td>{i}</td><td>{r:.3f}</td><td>{'' if not data.reference or i > len(data.reference) else f'{data.reference[i - 1]:.3f}'}</td></tr>"
                   for i, r in enumerate(data.per_position, 1))
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(data.title)}</title></head>"
            f"<body><h1 style='font:16px sans-serif'>{html.escape(data.title)}</h1>{svg}"
            f"<table style='font:12px monospace'><tr><th>position</th><th>measured</th><th>reference</th></tr>{rows}</table>"
            f"</body></html>\n")
    return page.encode("utf-8")


def plot_report(report, evidence, path: str) -> None:
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise UsageError(f"--plot {path}: unknown picture format", hint="use FILE.png, FILE.svg or FILE.html")
    blob = render_plot(plot_data(report, evidence), ext)
    from ..atomic import write_atomic

    try:
        write_atomic(path, blob)
    except OSError as exc:
        raise UsageError(f"cannot write --plot {path}: {exc.strerror or exc}") from None
