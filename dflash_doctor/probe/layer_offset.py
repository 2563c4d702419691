"""Which target layer did an engine really feed the drafter? Match a captured hidden-state dump to HF indices.

Dump format (safetensors): `input_ids` (integer, [tokens]) and `hidden_states.0`, `hidden_states.1`, ...
(one per tap in capture order, [tokens, hidden], any float dtype). The per-request file vLLM's
`extract_hidden_states` method writes (`token_ids` [tokens], `hidden_states` [tokens, layers, hidden])
is read as well, its layers becoming taps 0, 1, ... in the order of the configured ids. Each captured tensor is compared
with every entry of the target's `output_hidden_states` (index 0 = embeddings, i = output of decoder
layer i-1) by cosine similarity, relative error and max error; the best index and its margin over
the runner-up are reported, and, given the drafter, the shift from the +1 convention's expectation.
"""

from __future__ import annotations

import re
from pathlib import Path

from safetensors import safe_open

from ..errors import UsageError

MATCH_COSINE = 0.98  # below this the best index is reported but not called a match

_TAP = re.compile(r"^hidden_states\.(\d+)$")


def _tap_index(name: str) -> int:
    m = _TAP.match(name)
    assert m is not None  # (only hidden_states.N tensors are kept besides input_ids, which is taken out first)
    return int(m.group(1))


# What every dump error points at: the format a dump must have.
DUMP_HINT = (
    "a dump is a .safetensors file with input_ids (1-D integers) and hidden_states.0, .1, … "
    "(float [tokens, hidden]) captured from the engine, or vLLM's extract_hidden_states output; "
    "see README 'layer-offset'"
)


def read_dump(path: str | Path):
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no dump file at {p}", hint=DUMP_HINT)
    try:
        with safe_open(str(p), framework="pt") as fh:
            names = list(fh.keys())
            tensors = {n: fh.get_tensor(n) for n in names if n == "input_ids" or _TAP.match(n)}
    except Exception as exc:  # corrupt/hostile headers surface as several exception types
        raise UsageError(f"cannot read the dump {p}: {exc}", hint=DUMP_HINT) from None
    if "input_ids" not in tensors and {"token_ids", "hidden_states"} <= set(names):
        return _read_vllm_extract(p, fh_path=str(p))
    ids = tensors.pop("input_ids", None)
    if ids is None:
        raise UsageError(f"{p.name} has no input_ids tensor", hint=DUMP_HINT)
    if ids.dim() == 2 and ids.shape[0] == 1:
        ids = ids[0]
    if ids.dim() != 1 or ids.dtype.is_floating_point or ids.numel() == 0:
        raise UsageError(
            f"{p.name}: input_ids must be a non-empty 1-D integer tensor, got {tuple(ids.shape)} {ids.dtype}",
            hint=DUMP_HINT,
        )
    taps = sorted(tensors.items(), key=lambda kv: _tap_index(kv[0]))
    if not taps:
        raise UsageError(f"{p.name} has no hidden_states.N tensors", hint=DUMP_HINT)
    out = []
    for name, t in taps:
        if t.dim() == 3 and t.shape[0] == 1:
            t = t[0]
        if t.dim() != 2 or t.shape[0] != ids.shape[0] or not t.dtype.is_floating_point:
            raise UsageError(
                f"{p.name}: {name} must be a float [tokens={ids.shape[0]}, hidden] tensor, "
                f"got {tuple(t.shape)} {t.dtype}",
                hint=DUMP_HINT,
            )
        _finite(p.name, name, t)
        out.append((name, t))
    return ids.long(), out


def _finite(file: str, name: str, t) -> None:
    """NaN or infinite values compare as nothing (cosine NaN, error NaN > 0 false: 'exact match'): refuse them."""
    import torch

    bad = int((~torch.isfinite(t)).sum())
    if bad:
        raise UsageError(
            f"{file}: {name} holds {bad} NaN or infinite value(s) of {t.numel()}: it cannot be matched to a layer",
            hint="was the capture taken from a run whose activations overflowed "
            "(float16)? capture again, or in bfloat16/float32",
        )


def _read_vllm_extract(p: Path, fh_path: str):
    """vLLM's `extract_hidden_states` file: token_ids [T] and hidden_states [T, layers, hidden] in id order."""

    with safe_open(fh_path, framework="pt") as fh:
        ids, hs = fh.get_tensor("token_ids"), fh.get_tensor("hidden_states")
    if ids.dim() != 1 or ids.dtype.is_floating_point or ids.numel() == 0:
        raise UsageError(f"{p.name}: token_ids must be a non-empty 1-D integer tensor")
    if hs.dim() != 3 or hs.shape[0] != ids.shape[0] or not hs.dtype.is_floating_point:
        raise UsageError(f"{p.name}: hidden_states must be float [tokens, layers, hidden], got {tuple(hs.shape)}")
    taps = [(f"hidden_states.{j}", hs[:, j, :]) for j in range(hs.shape[1])]
    for name, t in taps:
        _finite(p.name, name, t)
    return ids.long(), taps


def compare(captured, candidates) -> list[dict]:
    """Scores of one captured [T, H] tensor against each candidate [T, H] (all float32)."""
    import torch

    c = captured.float().flatten()
    rows = []
    for idx, h in enumerate(candidates):
        h = h.float().flatten()
        cos = float(torch.nn.functional.cosine_similarity(c, h, dim=0))
        diff = c - h
        rel = float(diff.norm() / h.norm().clamp_min(1e-12))
        rows.append({"hf_index": idx, "cosine": cos, "relative_error": rel, "max_error": float(diff.abs().max())})
    return rows


def match_dump(target, ids, taps, target_layer_ids=None) -> dict:
    import torch

    with torch.no_grad():
        _, hs = target.forward(ids[None].to(target.device), None, hidden=True)
    candidates = [h[0].float().cpu() for h in hs]
    for i, h in enumerate(candidates):
        if not bool(torch.isfinite(h).all()):
            raise UsageError(
                f"the target's hidden state {i} holds NaN or infinite values for these input ids",
                hint="broken weights, or a dtype that overflows: try --dtype float32",
            )
    hidden = candidates[0].shape[-1]
    out_taps = []
    for name, t in taps:
        if t.shape[-1] != hidden:
            raise UsageError(
                f"{name} has hidden size {t.shape[-1]}, the target has {hidden}",
                hint="was this dump captured from this target?",
            )
        rows = compare(t.float().cpu(), candidates)
        ranked = sorted(rows, key=lambda r: r["relative_error"])
        best, second = ranked[0], (ranked[1] if len(ranked) > 1 else None)
        cos_runner_up = max((r["cosine"] for r in rows if r is not best), default=None)
        out_taps.append(
            {
                "tensor": name,
                "hf_index": best["hf_index"],
                "layer_output_of": best["hf_index"] - 1 if best["hf_index"] > 0 else None,
                "cosine": best["cosine"],
                "margin": (best["cosine"] - cos_runner_up) if cos_runner_up is not None else None,
                "relative_error": best["relative_error"],
                "max_error": best["max_error"],
                "runner_up": second["hf_index"] if second else None,
                # None when the match is exact (the ratio would be infinite)
                "error_ratio": (second["relative_error"] / best["relative_error"])
                if second and best["relative_error"] > 0
                else None,
                "matched": best["cosine"] >= MATCH_COSINE,
                "scores": rows,
            }
        )
    result = {
        "num_input_ids": int(ids.shape[0]),
        "num_hidden_states": len(candidates),
        "taps": out_taps,
        "convention": "HF hidden_states index i = output of decoder layer i-1; index 0 = embeddings",
    }
    if target_layer_ids is not None:
        expected = [i + 1 for i in target_layer_ids]
        result["expected_hf_indices"] = expected
        result["target_layer_ids"] = list(target_layer_ids)
        if len(expected) != len(out_taps):
            result["offset"] = None
            result["offset_note"] = f"the dump has {len(out_taps)} taps, the drafter expects {len(expected)}"
        elif not all(t["matched"] for t in out_taps):
            result["offset"] = None
            result["offset_note"] = f"at least one tap matches no hidden state closely (cosine < {MATCH_COSINE:.2f})"
        else:
            shifts = {t["hf_index"] - e for t, e in zip(out_taps, expected, strict=False)}
            result["offset"] = shifts.pop() if len(shifts) == 1 else None
            if result["offset"] is None:
                result["offset_note"] = "the taps disagree on the shift"
        lines = []
        for j, (t, e) in enumerate(zip(out_taps, expected, strict=False)):
            last = len(candidates) - 1
            fed = (
                "the embeddings"
                if t["hf_index"] == 0
                else f"the final-normed output (after layer {last - 1})"
                if t["hf_index"] == last
                else f"the output of layer {t['hf_index'] - 1}"
            )
            lines.append(
                f"tap {j}: your engine feeds {fed} (HF index {t['hf_index']}); "
                f"the drafter was trained on layer {e - 1} (HF index {e})"
            )
        result["explanation"] = lines
    return result
