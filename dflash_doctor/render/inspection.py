"""Render an `inspect-model` result: terminal (rich tables), markdown, or JSON. Text out, never printed.

Untrusted text (config strings, model-card lines) enters rich as `Text` through `plain()`.
"""

from __future__ import annotations

import io
import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..evidence import Status
from ..textsafe import plain
from . import Format
from .terminal import MARK, t


def render_inspection(insp, fmt: Format, color: bool = False, width: int = 100) -> str:
    from ..redact import redact_text
    if fmt == Format.JSON:
        out = json.dumps(insp.to_dict(), indent=2, ensure_ascii=False) + "\n"
    elif fmt == Format.MARKDOWN:
        out = _markdown(insp)
    else:
        out = _terminal(insp, color, width)
    return redact_text(out)


def _facts_rows(insp) -> list[tuple[str, str]]:
    d = insp.drafter
    ids = list(d.target_layer_ids) if d.target_layer_ids is not None else None
    rows = [("method", f"{d.method} ({', '.join(d.architectures) or 'no architectures'})"
                       + (", speculators format" if d.speculators_format else ""))]
    if d.is_dflash or d.block_size is not None:
        rows.append(("block size", f"{d.block_size} (from {d.block_size_source})" if d.block_size else "not stated"))
    if d.is_dflash or d.mask_token_id is not None:
        rows.append(("mask_token_id", str(d.mask_token_id) if d.mask_token_id is not None else "not stated"))
    if d.is_dflash or ids is not None:
        rows.append(("target_layer_ids", f"{ids} (from {d.layer_ids_source})" if ids is not None else "not stated"))
    if d.hf_hidden_state_indices is not None and d.is_dflash:
        rows.append(("hidden_states index (+1)", f"{list(d.hf_hidden_state_indices)}  — what the drafter was trained on"))
        rows.append(("raw mapping reads", f"{list(d.raw_capture_indices or ())}  — one layer early, if an engine "
                                          "passes the ids unshifted"))
    aux = insp.eagle3_default_aux_ids()
    if aux is not None:
        rows.append(("EAGLE-3 aux ids", f"{aux}  — the engine default (2, n//2, n−3), used as-is (capture-before)"))
    rows += [
        ("num_target_layers", str(d.num_target_layers) if d.num_target_layers is not None else "not stated"),
        ("shape", f"{d.num_hidden_layers} layers, hidden {d.hidden_size}, heads {d.num_attention_heads}/"
                  f"{d.num_key_value_heads}, head_dim {d.head_dim}, intermediate {d.intermediate_size}"),
        ("vocabulary", f"{d.vocab_size}" + (f", draft vocabulary {d.draft_vocab_size}" if d.draft_vocab_size else "")),
        ("RoPE", f"theta {d.rope.theta:g}" if d.rope.theta else "theta not stated"),
        ("dtype", str(d.dtype)),
        ("sliding window", f"{d.sliding_window} on layers {list(d.swa_layers)} (from {d.swa_config})"
                           if d.swa_layers else "none"),
    ]
    r = d.rope
    if r.scaling:
        rows[-3] = ("RoPE", rows[-3][1] + f", scaling {r.scaling}")
    if r.partial_rotary_factor:
        rows[-3] = ("RoPE", rows[-3][1] + f", partial rotary {r.partial_rotary_factor:g}")
    w = d.weights
    if w is not None:
        desc = {"safetensors": f"{len(w.tensors)} tensors in {len(w.files)} safetensors file(s)",
                "pickle": "pickle only (never unpickled)", "none": "none found"}[w.format]
        rows.append(("weights", desc))
    for c in d.card:
        rows.append(("model card", f"{c.kind}: {c.line}"))
    return rows


def _target_grid(insp) -> list[str]:
    tg = insp.target
    n = tg.num_hidden_layers or 0
    d = insp.drafter
    if d.layer_ids_source == "eagle_aux_hidden_state_layer_ids":
        tapped = {i - 1 for i in d.hf_hidden_state_indices or ()}
    elif d.target_layer_ids is not None:
        tapped = set(d.target_layer_ids) if d.is_dflash else {i - 1 for i in d.target_layer_ids}
    else:
        tapped = {i - 1 for i in insp.eagle3_default_aux_ids() or ()}
    short = {"linear_attention": "lin", "full_attention": "full", "sliding_attention": "swa"}
    cells = []
    for i in range(min(n, 4096)):
        if tg.layer_types and i < len(tg.layer_types):
            kind = short.get(tg.layer_types[i], tg.layer_types[i][:4])
        else:
            kind = "swa?" if tg.sliding_window else "full"  # no layer_types: dense attention
        mark = "◆" if i in tapped else " "
        cells.append(f"{i:>3}{mark}{kind:<4}")
    return [" ".join(cells[j:j + 8]) for j in range(0, len(cells), 8)]


def _terminal(insp, color: bool, width: int) -> str:
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=color, color_system="standard" if color else None, width=width,
                  no_color=not color, highlight=False, emoji=False, markup=False)
    d = insp.drafter
    con.print(Text("dflash-doctor inspect-model ", style="bold") + t(d.source))
    con.print()
    facts = Table(show_header=False, box=None, padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    for k, v in _facts_rows(insp):
        facts.add_row(t(k), t(v))
    con.print(facts)
    con.print()
    if d.layers:
        lt = Table(title="Drafter layers", title_justify="left", title_style="bold underline")
        for col in ("layer", "attention", "window", "causal"):
            lt.add_column(col)
        for la in d.layers:
            style = "yellow" if la.attention == "sliding" else ""
            lt.add_row(str(la.index), Text(la.attention, style=style), str(la.window or "—"),
                       "causal" if la.causal else "non-causal")
        con.print(lt)
        con.print()
    tg = insp.target
    if tg is not None:
        con.print(Text("Target ", style="bold underline") + t(f"{tg.source}: {', '.join(tg.architectures)}", "bold"))
        con.print(t(f"{tg.num_hidden_layers} layers, hidden {tg.hidden_size}, vocab {tg.vocab_size}"
                    + (", text config nested in text_config" if tg.text_config_nested else "")
                    + (f", rope theta {tg.rope.theta:g}" if tg.rope.theta else "")
                    + (f", partial rotary {tg.rope.partial_rotary_factor:g}" if tg.rope.partial_rotary_factor else "")))
        if tg.hybrid_linear:
            con.print(t("GatedDeltaNet hybrid: 'lin' layers are linear attention, not sliding windows", "dim"))
        con.print(t("◆ = layer whose output the drafter reads", "dim"))
        for line in _target_grid(insp):
            con.print(t(line))
        con.print()
    if insp.engine_spec:
        e = insp.engine
        con.print(Text("Engine ", style="bold underline") + t(insp.engine_spec, "bold"))
        if e is None:
            con.print(t("not in the engine-support table: what it does with this drafter is unknown", "yellow"))
        else:
            con.print(t(f"DFlash {'yes' if e.dflash else 'no'}; target_layer_ids {e.layer_map or 'n/a'}; drafter "
                        f"sliding windows {e.drafter_swa or 'n/a'}; EAGLE-3 aux ids {e.eagle3_aux}"
                        + (f" (verified in the {e.verified} wheel)" if e.verified else " (from the reference)")))
            ignored = insp.silently_ignored()
            if ignored:
                con.print(Text("silently ignored by this engine:", style="bold red"))
                for x in ignored:
                    con.print(Text("  - ", style="red") + t(x))
        con.print()
    con.print(Text("Findings", style="bold underline"))
    for f in insp.report.findings:
        mark, style = MARK[f.status]
        con.print(Text(f"[{mark}] ", style=style) + Text(f.check_id, style="bold") + Text(": ") + t(f.message))
        for det in f.details[:6]:
            con.print(Text("      ") + t(det, "dim"))
        if f.remedy and f.status in (Status.FAIL, Status.WARN):
            con.print(Text("      fix: ", style="yellow") + t(f.remedy))
    warns = insp.warnings()
    if warns:
        con.print()
        con.print(Text("Warnings", style="bold underline"))
        for w in warns:
            con.print(Text("  ! ", style="yellow") + t(w))
    return buf.getvalue()


def _md(s: object) -> str:
    return plain(s).replace("|", "\\|")


def _markdown(insp) -> str:
    d = insp.drafter
    lines = [f"# inspect-model `{_md(d.source)}`", "", "| fact | value |", "|---|---|"]
    lines += [f"| {_md(k)} | {_md(v)} |" for k, v in _facts_rows(insp)]
    if d.layers:
        lines += ["", "## Drafter layers", "", "| layer | attention | window | causal |", "|---|---|---|---|"]
        lines += [f"| {la.index} | {la.attention} | {la.window or '—'} | {'causal' if la.causal else 'non-causal'} |"
                  for la in d.layers]
    if insp.target is not None:
        lines += ["", f"## Target `{_md(insp.target.source)}`", "", "```", *_target_grid(insp), "```"]
    if insp.engine_spec:
        lines += ["", f"## Engine {_md(insp.engine_spec)}", ""]
        ignored = insp.silently_ignored()
        lines += [f"- silently ignored: {_md(x)}" for x in ignored] or ["- nothing this drafter uses is ignored"
                                                                          if insp.engine else "- not in the table"]
    lines += ["", "## Findings", ""]
    for f in insp.report.findings:
        lines.append(f"- **{f.status.value}** `{f.check_id}`: {_md(f.message)}"
                     + (f" — fix: {_md(f.remedy)}" if f.remedy and f.status in (Status.FAIL, Status.WARN) else ""))
    warns = insp.warnings()
    if warns:
        lines += ["", "## Warnings", ""] + [f"- {_md(w)}" for w in warns]
    return "\n".join(lines) + "\n"
