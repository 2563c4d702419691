"""Pictures for a report: the per-position acceptance curve against the pair's reference curve, and
τ over time (one point per metrics interval), with the gate's thresholds and the pair's reference τ drawn.
PNG/SVG through matplotlib (the `plot` extra, imported only here). HTML needs no extra: an SVG drawn here
whose every bar and point tells its value on hover (an SVG <title>, no script), and the numbers as a table.

The τ axis starts at 1 (no draft accepted) and reaches at least the reference τ or the threshold, so noise
in a flat-low run does not fill the picture.
"""

from __future__ import annotations

import html
import io
import os
from dataclasses import dataclass

from ..atomic import write_atomic
from ..errors import MissingExtra, UsageError
from ..interpret.baselines import in_force, pair_context
from ..textsafe import plain

FORMATS = (".png", ".svg", ".html")


@dataclass(frozen=True)
class PlotData:
    title: str
    per_position: list[float]
    reference: list[float] | None
    reference_label: str | None
    timeline: list[tuple[str, float]]  # (interval label, τ)
    reference_tau: float | None = None
    tau_threshold: float | None = None  # the gate's --min-acceptance-length
    position_thresholds: tuple[tuple[int, float], ...] = ()  # the gate's --min-position-rate POS:RATE

    def tau_top(self) -> float:
        """Upper end of the τ axis: the data, the reference and the threshold all fit, never below 2."""
        top = max([t for _, t in self.timeline] + [x for x in (self.reference_tau, self.tau_threshold) if x] + [2.0])
        return top * 1.1


def plot_data(report, evidence=None, thresholds=None) -> PlotData:
    """The curve, the pair's reference curve and τ over time — all from the report's acceptance summary
    and the evidence, never from re-reading the files."""
    acc = report.acceptance
    pp = list(acc.per_position) if acc is not None else []
    reference = label = ref_tau = None
    if evidence is not None:
        ctx = pair_context(evidence, in_force(evidence))
        if ctx.baseline is not None and pp:
            k = min(len(pp), ctx.baseline.k)
            reference = ctx.baseline.reference_curve(ctx.dataset, k)
            ds, tau, _ = ctx.baseline.tau_for(ctx.dataset)
            how = "" if ctx.baseline.curve else ", geometric fit"
            label = plain(f"{ctx.baseline.id}") + f" reference ({ctx.baseline.trust}, {ds} τ {tau:.2f}{how})"
            ref_tau = ctx.baseline.tau_at_k(ctx.dataset, k)
    timeline: list[tuple[str, float]] = [
        (plain(p.get("timestamp") or f"#{i + 1}", 40), float(p["tau"]))
        for i, p in enumerate(acc.series if acc is not None else ())
        if isinstance(p.get("tau"), (int, float)) and p.get("drafts", 0) > 0
    ]
    tau_text = f"τ {acc.mean_acceptance_length:.2f}" if acc is not None else "no acceptance data"
    th_tau = thresholds.min_acceptance_length if thresholds is not None else None
    th_pos = tuple((p.position, p.rate) for p in thresholds.min_position_rates) if thresholds is not None else ()
    return PlotData(
        title=f"dflash-doctor: {plain(report.target)} — {tau_text}, verdict {report.verdict.value}",
        per_position=pp,
        reference=reference,
        reference_label=label,
        timeline=timeline,
        reference_tau=ref_tau,
        tau_threshold=th_tau,
        position_thresholds=th_pos,
    )


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
        ax1.plot(
            list(range(1, len(data.reference) + 1)),
            data.reference,
            "o-",
            color="#e07b00",
            label=data.reference_label or "reference",
        )
    ax1.set_xlabel("draft position")
    ax1.set_ylabel("acceptance rate")
    ax1.set_ylim(0, 1)
    for pos, rate in data.position_thresholds:
        ax1.plot([pos - 0.4, pos + 0.4], [rate, rate], "-", color="#c0392b", linewidth=2)
    if data.position_thresholds:
        ax1.plot([], [], "-", color="#c0392b", label="gate: minimum rate")
    ax1.set_title("per-position acceptance" + ("" if data.reference else " (no reference for this pair)"))
    ax1.legend(loc="upper right", fontsize=8)
    if data.timeline:
        ax2.plot(range(len(data.timeline)), [t for _, t in data.timeline], ".-", color="#3b7dd8", label="τ")
        step = max(1, len(data.timeline) // 6)
        ticks = list(range(0, len(data.timeline), step))
        ax2.set_xticks(ticks, [data.timeline[i][0] for i in ticks], rotation=30, fontsize=7)
        if data.tau_threshold:
            ax2.axhline(data.tau_threshold, color="#c0392b", linestyle="-", label=f"gate: τ ≥ {data.tau_threshold:g}")
        if data.reference_tau:
            ax2.axhline(
                data.reference_tau, color="#e07b00", linestyle="--", label=f"reference τ {data.reference_tau:.2f}"
            )
        ax2.set_ylim(1.0, data.tau_top())
        ax2.legend(loc="upper right", fontsize=8)
        ax2.set_title("τ per metrics interval")
    else:
        ax2.text(0.5, 0.5, "no per-interval data\n(τ over time needs a log)", ha="center", va="center")
        ax2.set_title("τ over time")
    ax2.set_ylabel("mean acceptance length τ")
    fig.suptitle(data.title, fontsize=10)
    fig.tight_layout()
    return fig, plt


def render_plot(data: PlotData, fmt: str) -> bytes:
    if fmt == ".html":
        return _html(data).encode("utf-8")
    fig, plt = _figure(data)
    try:
        buf = io.BytesIO()
        fig.savefig(buf, format="png" if fmt == ".png" else "svg", dpi=110)
    finally:
        plt.close(fig)
    return buf.getvalue()


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _svg_curve(data: PlotData, w: int = 520, h: int = 300) -> str:
    n = max(len(data.per_position), len(data.reference or ()), 1)
    left, right, top, bottom = 44, 10, 16, 34
    pw, ph = w - left - right, h - top - bottom
    bw = pw / n

    def y(v: float) -> float:
        return top + ph * (1 - max(0.0, min(1.0, v)))

    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' role='img' "
        f"aria-label='per-position acceptance'>"
    ]
    for v in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(
            f"<line x1='{left}' x2='{w - right}' y1='{y(v):.1f}' y2='{y(v):.1f}' class='grid'/>"
            f"<text x='{left - 6}' y='{y(v) + 4:.1f}' class='ax' text-anchor='end'>{v:g}</text>"
        )
    for i, r in enumerate(data.per_position):
        x = left + i * bw + bw * 0.15
        out.append(
            f"<rect class='bar' x='{x:.1f}' y='{y(r):.1f}' width='{bw * 0.7:.1f}' height='{top + ph - y(r):.1f}'>"
            f"<title>position {i + 1}: measured {r:.3f}"
            + (f", reference {data.reference[i]:.3f}" if data.reference and i < len(data.reference) else "")
            + "</title></rect>"
        )
        out.append(
            f"<text x='{x + bw * 0.35:.1f}' y='{h - bottom + 14}' class='ax' text-anchor='middle'>{i + 1}</text>"
        )
    if data.reference:
        pts = " ".join(f"{left + (i + 0.5) * bw:.1f},{y(v):.1f}" for i, v in enumerate(data.reference))
        out.append(f"<polyline class='ref' points='{pts}'/>")
        for i, v in enumerate(data.reference):
            out.append(
                f"<circle class='refpt' cx='{left + (i + 0.5) * bw:.1f}' cy='{y(v):.1f}' r='3'>"
                f"<title>position {i + 1}: reference {v:.3f}</title></circle>"
            )
    for pos, rate in data.position_thresholds:
        x0 = left + (pos - 1) * bw
        out.append(
            f"<line class='gate' x1='{x0:.1f}' x2='{x0 + bw:.1f}' y1='{y(rate):.1f}' y2='{y(rate):.1f}'>"
            f"<title>gate: position {pos} rate ≥ {rate:g}</title></line>"
        )
    out.append(f"<text x='{left + pw / 2:.1f}' y='{h - 4}' class='ax' text-anchor='middle'>draft position</text></svg>")
    return "".join(out)


def _svg_timeline(data: PlotData, w: int = 520, h: int = 300) -> str:
    left, right, top, bottom = 44, 10, 16, 34
    pw, ph = w - left - right, h - top - bottom
    lo, hi = 1.0, data.tau_top()
    n = max(len(data.timeline), 1)

    def y(v: float) -> float:
        return top + ph * (1 - (min(hi, max(lo, v)) - lo) / (hi - lo))

    def x(i: int) -> float:
        return left + (pw * (i + 0.5) / n)

    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' role='img' aria-label='tau over time'>"]
    steps = 4
    for j in range(steps + 1):
        v = lo + (hi - lo) * j / steps
        out.append(
            f"<line x1='{left}' x2='{w - right}' y1='{y(v):.1f}' y2='{y(v):.1f}' class='grid'/>"
            f"<text x='{left - 6}' y='{y(v) + 4:.1f}' class='ax' text-anchor='end'>{v:.1f}</text>"
        )
    for value, cls, what in ((data.reference_tau, "ref", "reference τ"), (data.tau_threshold, "gate", "gate: τ ≥")):
        if value:
            out.append(
                f"<line class='{cls}' x1='{left}' x2='{w - right}' y1='{y(value):.1f}' y2='{y(value):.1f}'>"
                f"<title>{_e(what)} {value:.2f}</title></line>"
            )
    if data.timeline:
        pts = " ".join(f"{x(i):.1f},{y(t):.1f}" for i, (_, t) in enumerate(data.timeline))
        out.append(f"<polyline class='tau' points='{pts}'/>")
        for i, (label, t) in enumerate(data.timeline):
            out.append(
                f"<circle class='pt' cx='{x(i):.1f}' cy='{y(t):.1f}' r='3'><title>{_e(label)}: τ {t:.2f}"
                "</title></circle>"
            )
    else:
        out.append(
            f"<text x='{w / 2}' y='{h / 2}' class='ax' text-anchor='middle'>no per-interval data "
            "(τ over time needs a log)</text>"
        )
    out.append(
        f"<text x='{left + pw / 2:.1f}' y='{h - 4}' class='ax' text-anchor='middle'>metrics interval</text></svg>"
    )
    return "".join(out)


_CSS = (
    "body{font:13px sans-serif;margin:16px}h1{font-size:16px}.charts{display:flex;flex-wrap:wrap;gap:16px}"
    ".grid{stroke:#ddd}.ax{font:10px sans-serif;fill:#555}.bar{fill:#3b7dd8}.bar:hover,.pt:hover{fill:#e07b00}"
    ".ref{fill:none;stroke:#e07b00;stroke-dasharray:4 3;stroke-width:2}.refpt{fill:#e07b00}"
    ".gate{stroke:#c0392b;stroke-width:2}.tau{fill:none;stroke:#3b7dd8;stroke-width:1.5}.pt{fill:#3b7dd8}"
    "table{border-collapse:collapse;font:12px monospace;margin-top:12px}td,th{padding:2px 8px;text-align:right}"
)


def _html(data: PlotData) -> str:
    rows = "".join(
        f"<tr><td>{i}</td><td>{r:.3f}</td><td>"
        f"{'' if not data.reference or i > len(data.reference) else f'{data.reference[i - 1]:.3f}'}</td></tr>"
        for i, r in enumerate(data.per_position, 1)
    )
    legend = [
        x
        for x in (
            data.reference_label and f"dashed: {data.reference_label}",
            data.tau_threshold and f"red: gate τ ≥ {data.tau_threshold:g}",
            data.position_thresholds and "red ticks: gate minimum rate per position",
        )
        if x
    ]
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(data.title)}</title><style>{_CSS}</style>"
        f"</head><body><h1>{_e(data.title)}</h1><p>hover a bar or a point for its value"
        + "".join(f"; {_e(x)}" for x in legend)
        + "</p>"
        f"<div class='charts'><div><b>per-position acceptance</b><br>{_svg_curve(data)}</div>"
        f"<div><b>τ per metrics interval</b><br>{_svg_timeline(data)}</div></div>"
        f"<table><tr><th>position</th><th>measured</th><th>reference</th></tr>{rows}</table>"
        "</body></html>\n"
    )


def can_plot(path: str | None) -> None:
    """Refuse a --plot the command could not write, before any work or report: an unknown picture format,
    or PNG/SVG without matplotlib (the `plot` extra) — a usage error, exit 2, nothing printed."""
    import importlib.util

    if not path:
        return
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise UsageError(f"--plot {path}: unknown picture format", hint="use FILE.png, FILE.svg or FILE.html")
    if ext != ".html" and importlib.util.find_spec("matplotlib") is None:
        raise MissingExtra("plot", "matplotlib")


def plot_report(report, evidence, path: str, thresholds=None) -> None:
    can_plot(path)
    ext = os.path.splitext(path)[1].lower()
    blob = render_plot(plot_data(report, evidence, thresholds), ext)

    try:
        write_atomic(path, blob)
    except OSError as exc:
        raise UsageError(f"cannot write --plot {path}: {exc.strerror or exc}") from None
