"""A probe run and a layer-offset match: terminal text or JSON (probe.result.ProbeRun, LayerOffsetRun)."""

from __future__ import annotations

import math

from .json_report import dumps_safe
from .layout import Page, Style
from .style import Format

FORMATS = (Format.TERMINAL, Format.JSON)
STATUS_WORDS = {"ok": "✓", "warn": "!", "fail": "✗", "could-not-check": "?", "not-applicable": "–"}


def render(run, fmt: Format, style: Style) -> str:
    if fmt == Format.JSON:
        return dumps_safe(_finite(run.to_dict()))
    if type(run).__name__ == "LayerOffsetRun":
        return render_offset_text(run.result, style)
    return render_probe_text(run.result, style)


def _finite(v):
    """JSON every reader accepts: a non-finite number (a timing of 0 s, a damaged score) becomes null."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def _fmt(x, nd=2):
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{nd}f}"


def render_probe_text(r: dict, style: Style | None = None) -> str:
    page = Page(style or Style())
    acc = r["acceptance"]
    page.line(("DFlash probe: ", "bold"), f"{r['drafter']} on {r['target']}")
    page.line(
        f"  device {r['device']} {r['dtype']}, block {r['block_size']}, {r['prompts']['count']} prompts "
        f"(lengths {r['prompts']['min_length']}–{r['prompts']['max_length']}), up to {r['max_new_tokens']} "
        "new per prompt",
        hang=4,
    )
    page.line(f"  decoding: {r['decoding']}", hang=4)
    page.line(f"  end of generation: {r['end_rule']['description']}", hang=4)
    page.line(
        f"  taps: target_layer_ids {r['taps']['target_layer_ids']} -> HF hidden_states "
        f"{r['taps']['hf_hidden_state_indices']}",
        hang=4,
    )
    page.blank()
    page.line(
        ("  τ (mean acceptance length): ", "bold"), f"{_fmt(acc['mean_acceptance_length'])} over {acc['steps']} steps"
    )
    page.line("  per position: " + " ".join(f"{p:.2f}" for p in acc["per_position"]), hang=16)
    page.line("  histogram: " + " ".join(f"{k}:{v}" for k, v in acc["histogram"].items()), hang=13)
    page.line(
        f"  tokens/s: {_fmt(r['tokens_per_second'], 1)} (target greedy: "
        f"{_fmt(r.get('target_greedy_tokens_per_second'), 1)})"
    )
    lossless = r["lossless"]
    page.line(
        "  lossless: ",
        ("n/a (sampling)", "")
        if lossless is None
        else ("✓ yes, equals the target's greedy output", "green")
        if lossless
        else (f"✗ NO — {len(r['mismatches'])} prompt(s) differ", "bold red"),
    )
    if r["ablations"]:
        page.blank()
        page.line("  ablations:")
        for a in r["ablations"]:
            extra = f"  ({a['note']})" if a.get("note") else ""
            ll = "" if a.get("lossless") in (None, True) else "  NOT lossless"
            page.line(
                f"    {a['name']:<16} τ {_fmt(a['mean_acceptance_length'])}  steps {a['steps']}{ll}{extra}", hang=6
            )
    comps = r.get("served_comparison") or []
    if comps:
        page.blank()
    for c in comps:
        page.line(f"  {STATUS_WORDS.get(c['status'], '?')} served vs probe: ", c["message"], hang=4)
    for n in r.get("notes") or []:
        page.line("  note: ", n, hang=8)
    return page.text() + "\n"


def render_offset_text(r: dict, style: Style | None = None) -> str:
    page = Page(style or Style())
    page.line(
        f"layer-offset: {r['num_input_ids']} input ids, {r['num_hidden_states']} HF hidden states (0 = embeddings)"
    )
    for tap in r["taps"]:
        page.line(
            f"  {tap['tensor']}: HF index {tap['hf_index']} cosine {tap['cosine']:.6f} margin "
            f"{_fmt(tap['margin'], 6)} "
            + (
                f"rel.err {tap['relative_error']:.2e} (runner-up {tap['runner_up']}, "
                f"{_fmt(tap['error_ratio'], 1)}x worse)"
                if tap["relative_error"] > 0
                else f"exact match (runner-up {tap['runner_up']})"
            )
            + ("" if tap["matched"] else "  NO CLOSE MATCH"),
            hang=4,
        )
    if "expected_hf_indices" in r:
        page.line(
            f"  drafter target_layer_ids {r['target_layer_ids']} -> expected HF indices {r['expected_hf_indices']}",
            hang=4,
        )
        page.line(
            f"  offset: {r['offset'] if r['offset'] is not None else 'undetermined'}"
            + (f" ({r['offset_note']})" if r.get("offset_note") else ""),
            hang=4,
        )
        for x in r.get("explanation", []):
            page.line(f"  {x}", hang=4)
    return page.text() + "\n"
