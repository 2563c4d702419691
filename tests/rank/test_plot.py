"""--plot: the curve against the pair's reference and τ over time, as PNG, SVG or HTML."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from dflash_doctor.errors import MissingExtra
from dflash_doctor.render import plot as plotmod

from .scenarios import diagnose, load

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "fixtures" / "seed" / "vllm-0.20.1.log"


@pytest.mark.parametrize("ext,magic", [(".png", b"\x89PNG"), (".svg", b"<svg"), (".html", b"<!doctype html>")])
def test_diagnose_writes_the_picture_and_keeps_the_terminal_bar_chart(cli, tmp_path, ext, magic):
    out = tmp_path / f"seed{ext}"
    r = cli("diagnose", "--log", str(SEED), "--plot", str(out), "-v")  # -v: the full report holds the bar chart
    assert r.returncode == 1, r.stderr
    assert magic in out.read_bytes()[:400]
    assert "per-position acceptance" in r.stdout and "█" in r.stdout


def test_plot_data_has_reference_curve_and_timeline():
    s = load("seed-log-only")
    report, ev = diagnose(s)
    data = plotmod.plot_data(report, ev)
    assert data.reference and len(data.reference) == 15 and data.reference[0] > 0.8
    assert "z-lab/Qwen3.6-27B-DFlash" in data.reference_label
    assert len(data.timeline) == 60 and all(1.1 < t < 1.3 for _, t in data.timeline)


def test_html_plot_embeds_the_numbers_as_a_table(tmp_path):
    report, ev = diagnose(load("healthy"))
    data = plotmod.plot_data(report, ev)
    page = plotmod.render_plot(data, ".html").decode()
    assert "<svg" in page and "<th>reference</th>" in page
    # τ over time comes from the report's own summary, not from re-reading the log files
    assert data.timeline and len(data.timeline) == len(report.acceptance.series)


def test_a_summary_without_counts_plots_instead_of_crashing(cli, tmp_path):
    """The offline example's old summary prints no accepted count; the plot re-scanned the log and divided
    None by the drafts (TypeError). It now draws from the report's summary."""
    out = tmp_path / "x.svg"
    r = cli("diagnose", "--log", str(ROOT / "fixtures" / "logs" / "vllm-offline-example-old.txt"), "--plot", str(out))
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert out.exists() and b"<svg" in out.read_bytes()[:2000]


def test_unknown_picture_format_is_a_usage_error(cli, tmp_path):
    r = cli("diagnose", "--log", str(SEED), "--plot", str(tmp_path / "x.bmp"))
    assert r.returncode == 2 and "unknown picture format" in r.stderr


def test_missing_matplotlib_names_the_plot_extra(monkeypatch):
    real = builtins.__import__

    def no_mpl(name, *a, **kw):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_mpl)
    report, ev = diagnose(load("healthy"))
    with pytest.raises(MissingExtra) as exc:
        plotmod.render_plot(plotmod.plot_data(report, ev), ".png")
    assert "plot" in exc.value.message and "matplotlib" in exc.value.message
