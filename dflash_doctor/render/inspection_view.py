"""Render an `inspect-model` result: terminal (rich tables), markdown, or JSON. Text out, never printed.

Untrusted text (config strings, model-card lines) enters rich as `Text` through `plain()`.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..evidence import Status
from ..redact import redact_text
from ..textsafe import plain
from ..versions import is_version, parse_version
from .json_report import dumps_safe
from .layout import TABLE_WIDTH_PIPED, rstrip_lines, t
from .style import Format
from .terminal import MARK

FORMATS = (Format.TERMINAL, Format.JSON, Format.MARKDOWN)


def render(insp, fmt: Format, style) -> str:
    return render_inspection(insp, fmt, color=style.color, width=style.width or TABLE_WIDTH_PIPED)


def render_inspection(insp, fmt: Format, color: bool = False, width: int | None = 100) -> str:
    if fmt == Format.JSON:
        out = dumps_safe(insp.to_dict())
    elif fmt == Format.MARKDOWN:
        out = _markdown(insp)
    else:
        out = _terminal(insp, color, width)
    return redact_text(out)


def _val(v, unit: str = "") -> str:
    return "not stated" if v is None else f"{v}{unit}"


def _shape(d) -> str:
    parts = [f"{_val(d.num_hidden_layers)} layers" if d.num_hidden_layers is not None else "layers not stated"]
    for label, v in (
        ("hidden", d.hidden_size),
        ("heads", d.num_attention_heads),
        ("kv heads", d.num_key_value_heads),
        ("head_dim", d.head_dim),
        ("intermediate", d.intermediate_size),
    ):
        parts.append(f"{label} {_val(v)}")
    return ", ".join(parts)


def _rope_text(r) -> str:
    text = f"theta {r.theta:g} (from {r.source})" if r.theta else "theta not stated"
    if r.scaling:
        kind = r.scaling.get("rope_type") or r.scaling.get("type") or "?"
        factor = r.scaling.get("factor")
        text += f", scaling {kind}" + (f" ×{factor:g}" if isinstance(factor, (int, float)) else "")
    if r.partial_rotary_factor:
        text += f", partial rotary {r.partial_rotary_factor:g}"
    if r.per_layer_type and "sliding_attention" in r.per_layer_type and "sliding" not in r.source:
        text += f"; sliding layers {r.per_layer_type['sliding_attention']:g}"
    if r.nope_kinds:
        text += f"; no RoPE on {', '.join(k.replace('_attention', '') for k in r.nope_kinds)} layers"
    notes = [n for n in r.notes if not n.startswith("partial rotary")]
    if notes:
        text += " — " + "; ".join(notes)
    return text


def _outputs(ids) -> str:
    return ", ".join("embeddings" if i < 0 else str(i) for i in ids)


def _ids_rows(insp) -> list[tuple[str, str]]:
    """The ids as written, what the drafter was trained on and what the named engine taps (output terms)."""
    d = insp.drafter
    rows: list[tuple[str, str]] = []
    eagle = d.method in ("eagle3", "peagle")
    if not (d.is_dflash or eagle or d.target_layer_ids is not None):
        return rows
    label = "EAGLE-3 aux ids" if eagle else "target_layer_ids"
    if d.ids_written is not None:
        rows.append((label, f"{list(d.ids_written)} (from {d.layer_ids_source})"))
    elif d.layer_ids_source == "default":
        rows.append((label, f"not stated; the reference's default {list(d.target_layer_ids or ())}"))
    else:
        rows.append((label, "not stated"))
    trained, served = insp.taps()
    if trained.outputs is not None:
        rows.append(("trained on", f"outputs of layers {_outputs(trained.outputs)} — {trained.how}"))
    elif eagle:
        rows.append(("trained on", f"{trained.how} (give --target to see which layers)"))
    if d.hf_hidden_state_indices is not None and d.is_dflash:
        rows.append(("hidden_states index (+1)", f"{list(d.hf_hidden_state_indices)}"))
    for s in served:
        who = f"served as ({s.runner}{', the runner in use' if s.chosen else ', if that runner runs'})"
        if s.taps.error:
            rows.append((who, f"fails to load — {s.taps.error}"))
        elif s.taps.outputs is None:
            rows.append((who, s.taps.how))
        else:
            same = trained.outputs is not None and tuple(s.taps.outputs) == tuple(trained.outputs)
            verdict = "as trained" if same else ("NOT as trained" if trained.outputs is not None else "")
            text = f"outputs of layers {_outputs(s.taps.outputs)} {verdict} — {s.taps.how}"
            rows.append((who, text.replace("  ", " ")))
    return rows


def _facts_rows(insp) -> list[tuple[str, str]]:
    d = insp.drafter
    rows = [
        (
            "method",
            f"{d.method} ({', '.join(d.architectures) or 'no architectures'})"
            + (", speculators format" if d.speculators_format else ""),
        ),
        ("config format", d.family),
    ]
    if d.intended_target:
        rows.append(("intended target", f"{d.intended_target} (from {d.intended_target_source})"))
    if d.is_dflash or d.block_size is not None:
        rows.append(("block size", f"{d.block_size} (from {d.block_size_source})" if d.block_size else "not stated"))
    if d.is_dflash or d.mask_token_id is not None:
        rows.append(("mask_token_id", _val(d.mask_token_id)))
    rows += _ids_rows(insp)
    if d.mtp_layers is not None:
        rows.append(
            ("MTP layers", f"{d.mtp_layers}" + (" (inside the target checkpoint)" if d.embedded_in_target else ""))
        )
    if d.medusa_heads is not None or d.method == "medusa":
        rows.append(("Medusa heads", f"{_val(d.medusa_heads)} heads, {_val(d.medusa_layers)} layer(s) each"))
    if d.num_target_layers is not None or d.is_dflash:
        rows.append(("num_target_layers", _val(d.num_target_layers)))
    if d.target_hidden_size is not None:
        rows.append(("target hidden size", str(d.target_hidden_size)))
    vocab = f"{_val(d.vocab_size)}"
    if d.draft_vocab_size is not None:
        vocab += f", draft vocabulary {d.draft_vocab_size}"
    rows += [("shape", _shape(d)), ("vocabulary", vocab), ("RoPE", _rope_text(d.rope))]
    if d.backbone_rotary_base is not None:
        rows.append(("backbone rotary base", f"{d.backbone_rotary_base:g}"))
    if d.attention_sinks:
        rows.append(("attention sinks", f"on ({', '.join(d.attention_sinks)}): engines must keep them"))
    rows.append(("dtype", _val(d.dtype)))
    rows.append(
        (
            "sliding window",
            f"{d.sliding_window} on layers {list(d.swa_layers)} (from {d.swa_config})" if d.swa_layers else "none",
        )
    )
    w = d.weights
    if w is not None:
        desc = {
            "safetensors": f"{len(w.tensors)} tensors in {len(w.files)} safetensors file(s)",
            "pickle": "pickle only (never unpickled)",
            "none": "none found",
        }[w.format]
        rows.append(("weights", desc))
    for c in d.card:
        rows.append(("model card", f"{c.kind}: {c.line}"))
    if d.not_understood:
        rows.append(("not understood", ", ".join(d.not_understood)))
    for n in d.notes:
        rows.append(("note", n))
    return rows


_SHORT = {"linear": "lin", "full": "full", "sliding": "swa", "mamba": "mamb", "conv": "conv", "mlp": "mlp"}


def _target_summary(tg) -> str:
    return (
        f"{_val(tg.num_hidden_layers)} layers, hidden {_val(tg.hidden_size)}, vocab {_val(tg.vocab_size)}"
        + (", text config nested in text_config" if tg.text_config_nested else "")
        + f", RoPE {_rope_text(tg.rope)}"
        + (f", {tg.mtp_layers} MTP layer(s) ({tg.mtp_field})" if tg.mtp_layers else "")
    )


def _target_kinds(tg) -> str:
    counts = ", ".join(f"{n} {k}" for k, n in tg.kind_counts.items()) or "unknown"
    return f"layer kinds: {counts} — rule: {tg.layer_kinds_rule}" + (
        f"; window {tg.sliding_window}" if tg.sliding_window else ""
    )


def _target_grid(insp) -> list[str]:
    tg = insp.target
    n = tg.num_hidden_layers or 0
    d = insp.drafter
    # the layers whose OUTPUT the drafter was trained on (◆)
    tapped: set[int] = set() if d.embedded_in_target else set(insp.taps()[0].outputs or ())
    cells = []
    kinds = tg.layer_kinds or ()
    for i in range(min(n, 4096)):
        kind = _SHORT.get(kinds[i], kinds[i][:4]) if i < len(kinds) else "?"
        mark = "◆" if i in tapped else " "
        cells.append(f"{i:>3}{mark}{kind:<4}")
    return [" ".join(cells[j : j + 8]) for j in range(0, len(cells), 8)]


def _engine_line(insp) -> str:
    e = insp.engine
    if e is None:
        return "not in the engine-support table: what it does with this drafter is unknown"
    return _engine_row(e) + _engine_basis(e)


def _engine_row(e) -> str:
    return (
        f"DFlash {'yes' if e.dflash else 'no'}; target_layer_ids {e.layer_map or 'n/a'}; drafter sliding windows "
        f"{e.drafter_swa or 'n/a'}"
    )


def _engine_basis(e) -> str:
    """Whether the row's facts were read in this release's wheel (`verified` lists every release read for the
    row: "0.29.0, 0.30.0, …"), extrapolated past the newest one read, or assumed from the releases around it."""
    read = [parse_version(x) for x in (e.verified or "").split(",") if is_version(x)]
    if not read or not is_version(e.version):
        return " (from the reference)" if not e.verified else f" (this row was verified in the {e.verified} wheel)"
    v, newest = parse_version(e.version), max(read)
    same = next((r for r in read if r == v), None)
    if same is not None:
        return f" (verified in the {same} wheel)"
    if v > newest:
        return f" (extrapolated: {e.version} was not read; the newest release read for this row is {newest})"
    return f" (this row was verified in the {e.verified} wheels; {e.version} assumed the same)"


def _terminal(insp, color: bool, width: int | None) -> str:
    buf = io.StringIO()
    con = Console(
        file=buf,
        force_terminal=color,
        color_system="standard" if color else None,
        width=width,
        no_color=not color,
        highlight=False,
        emoji=False,
        markup=False,
    )
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
    _print_layers(con, d)
    _print_target(con, insp)
    _print_engine(con, insp)
    _print_findings(con, insp)
    return rstrip_lines(buf.getvalue())


def _print_layers(con, d) -> None:
    if not d.layers:
        return
    lt = Table(title="Drafter layers", title_justify="left", title_style="bold underline")
    for col in ("layer", "attention", "window", "causal"):
        lt.add_column(col)
    for la in d.layers:
        style = "yellow" if la.attention == "sliding" else ""
        lt.add_row(
            str(la.index),
            Text(la.attention, style=style),
            str(la.window or "—"),
            "causal" if la.causal else "non-causal",
        )
    con.print(lt)
    con.print()


def _print_target(con, insp) -> None:
    tg = insp.target
    if tg is None:
        return
    con.print(Text("Target ", style="bold underline") + t(f"{tg.source}: {', '.join(tg.architectures)}", "bold"))
    con.print(t(_target_summary(tg)))
    con.print(t(_target_kinds(tg)))
    if tg.hybrid_linear:
        con.print(
            t(
                "hybrid: 'lin'/'mamb'/'conv' layers are linear attention, Mamba or convolution, not sliding windows",
                "dim",
            )
        )
    con.print(t("◆ = layer whose output the drafter reads", "dim"))
    for line in _target_grid(insp):
        con.print(t(line))
    con.print()


def _print_engine(con, insp) -> None:
    if not insp.engine_spec:
        return
    e = insp.engine
    con.print(Text("Engine ", style="bold underline") + t(insp.engine_spec, "bold"))
    if insp.arch is not None:
        con.print(t(insp.arch.sentence, "bold red" if insp.arch.loadable is False else ""))
    if insp.engine_cannot_load:
        pass  # nothing the release "does" with a drafter it cannot load is worth listing
    elif e is None:
        con.print(t(_engine_line(insp), "yellow"))
    else:
        con.print(t(_engine_line(insp)))
        ignored = insp.silently_ignored()
        if ignored:
            con.print(Text("silently ignored by this engine:", style="bold red"))
            for x in ignored:
                con.print(Text("  - ", style="red") + t(x))
    con.print()


def _print_findings(con, insp) -> None:
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


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()#+!|<>~"})


def _md(s: object) -> str:
    """Untrusted text as inert markdown: no raw HTML (<script>, <img onerror>), no links or images
    (](javascript:…), tracking pixels), no code spans or emphasis — every markdown metacharacter is escaped
    and HTML's < > & are entities, so a renderer shows the characters and runs nothing."""
    text = plain(s).replace("&", "&amp;")
    return (
        text.translate(_MD_SPECIAL)
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\\&lt;", "&lt;")
        .replace("\\&gt;", "&gt;")
        .replace("\n", " ")
    )


def _markdown(insp) -> str:
    d = insp.drafter
    lines = [f"# inspect-model {_md(d.source)}", "", "| fact | value |", "|---|---|"]
    lines += [f"| {_md(k)} | {_md(v)} |" for k, v in _facts_rows(insp)]
    if d.layers:
        lines += ["", "## Drafter layers", "", "| layer | attention | window | causal |", "|---|---|---|---|"]
        lines += [
            f"| {la.index} | {la.attention} | {la.window or '—'} | {'causal' if la.causal else 'non-causal'} |"
            for la in d.layers
        ]
    if insp.target is not None:
        tg = insp.target
        lines += [
            "",
            f"## Target {_md(tg.source)}",
            "",
            _md(_target_summary(tg)),
            "",
            _md(_target_kinds(tg)),
            "",
            "```",
            *[x.replace("`", "'") for x in _target_grid(insp)],
            "```",
        ]
    if insp.engine_spec:
        lines += ["", f"## Engine {_md(insp.engine_spec)}", ""]
        if insp.arch is not None:
            lines.append(f"- {_md(insp.arch.sentence)}")
        if not insp.engine_cannot_load:
            lines.append(f"- {_md(_engine_line(insp))}")
            ignored = insp.silently_ignored()
            lines += [f"- silently ignored: {_md(x)}" for x in ignored] or (
                ["- nothing this drafter uses is ignored"] if insp.engine else []
            )
    lines += ["", "## Findings", ""]
    for f in insp.report.findings:
        lines.append(
            f"- **{f.status.value}** {_md(f.check_id)}: {_md(f.message)}"
            + (f" — fix: {_md(f.remedy)}" if f.remedy and f.status in (Status.FAIL, Status.WARN) else "")
        )
    warns = insp.warnings()
    if warns:
        lines += ["", "## Warnings", ""] + [f"- {_md(w)}" for w in warns]
    return "\n".join(lines) + "\n"
