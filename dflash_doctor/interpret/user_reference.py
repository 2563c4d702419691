"""A reference the user brings (`--reference FILE`): their own healthy figures for this drafter and target, which
judge the deployment instead of the packaged bands.

Two formats are read (anchors-2026-12.md §1.7, §0.8):

* NVIDIA Model-Optimizer's `speculation_profile.json` (examples/specdec_bench/specdec_bench/speculation_profile.py,
  schema 1.0): `marginal_accept_rates` are vLLM's unconditional per-position rates (P(first i+1 drafts all accepted)),
  `mean_accept_length` the per-step mean at `num_speculative_tokens` (the per-request mean beside it is not used),
  `accept_length_model` "chain_analytic" (eagle/eagle3/draft_model: the marginals give τ at every k ≤ K) or
  "measured_per_k" (dflash/dspark/tree: `accept_length_by_k` only), `measured: false` a stub without figures.
* InferenceX golden-AL YAML (golden_al_distribution/*.yaml): `<model>: {thinking_on: {k: AL}, thinking_off: {…}}`
  (AL with the bonus token, SPEED-Bench coding), `_metadata: {draft-model: …}`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .baselines import DrafterBaseline

_METHOD_WORDS = (("eagle3", "eagle3"), ("eagle", "eagle"), ("dspark", "dflash"), ("dflash", "dflash"), ("mtp", "mtp"))


class ReferenceError(ValueError):
    """The file is not a reference this reader knows: one line for the user."""


def load_reference(path: str, thinking: bool | None = None) -> tuple[DrafterBaseline, tuple[str, ...]]:
    """(the reference as a pair baseline that judges the deployment, notes on how it was read)."""
    from ..safeio import load_json, read_regular

    p = Path(path)
    try:
        raw = read_regular(p, 4 << 20)  # a regular file of at most 4 MiB (a FIFO would hang the run)
        text = raw.decode("utf-8")
    except OSError as exc:
        raise ReferenceError(f"cannot read the reference {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ReferenceError(f"the reference {path} is not UTF-8 text (byte {exc.start})") from None
    if p.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        try:
            doc = load_json(raw)
        except ValueError as exc:  # not JSON / NaN / beyond the caps
            raise ReferenceError(f"the reference {path} is not valid JSON: {str(exc)[:160]}") from None
        return _profile(doc, p.name)
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ReferenceError(f"the reference {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    return _golden_al(doc, p.name, thinking)


def _num(v: Any, lo: float, hi: float) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
        return None
    return float(v)


def _profile(raw: Any, name: str) -> tuple[DrafterBaseline, tuple[str, ...]]:
    from ..schema import SchemaError, SpeculationProfile, convert  # msgspec: not at start-up

    if not isinstance(raw, dict) or "marginal_accept_rates" not in raw:
        raise ReferenceError(f"{name}: not a speculation_profile.json (no marginal_accept_rates)")
    if raw.get("measured") is False:
        raise ReferenceError(f"{name}: a stub profile (measured: false) holds no figures")
    try:
        doc = convert(raw, SpeculationProfile, name)
    except SchemaError as exc:
        raise ReferenceError(str(exc)) from None
    k, curve = doc.num_speculative_tokens, [float(x) for x in doc.marginal_accept_rates]
    if len(curve) != k or any(b > a + 1e-9 for a, b in zip(curve, curve[1:], strict=False)):
        raise ReferenceError(f"{name}: marginal_accept_rates: must be k = {k} non-increasing rates")
    mean = _num(doc.mean_accept_length, 1.0, k + 1.0) or 1.0 + sum(curve)
    notes = []
    if abs(1.0 + sum(curve) - mean) > 0.02:
        notes.append(
            f"{name}: 1 + Σ marginals {1 + sum(curve):.3f} ≠ mean_accept_length {mean:.3f} (the profile's own check)"
        )
    by_k = {
        int(kk): v
        for kk, al in doc.accept_length_by_k.items()
        if str(kk).isdigit() and (v := _num(al, 1.0, 65.0)) is not None
    }
    chain = doc.accept_length_model == "chain_analytic"
    if doc.verification_method == "block":
        notes.append(f"{name}: measured with block verification (accepts more than token-by-token)")
    cond = doc.measurement_conditions or {}
    dataset = str(cond.get("dataset") or "profile")
    draft = doc.draft_checkpoint
    draft_name = draft.get("name") or draft.get("id") if isinstance(draft, dict) else draft
    return (
        DrafterBaseline(
            id=f"{name} ({draft_name})" if draft_name else name,
            aliases=(),
            method=_method(doc.method),
            target=None,
            k=k,
            trust="yours",
            source=f"your speculation_profile.json ({dataset}, k = {k}, per-step mean)",
            tau={dataset: mean},
            curve=tuple(curve) if chain or not by_k else None,
            by_k=None if chain or len(by_k) < 2 else by_k,
        ),
        tuple(notes),
    )


def _golden_al(doc: Any, name: str, thinking: bool | None) -> tuple[DrafterBaseline, tuple[str, ...]]:
    if not isinstance(doc, dict):
        raise ReferenceError(f"{name}: not a golden-AL file (a model: {{thinking_on: {{k: AL}}}} mapping)")
    raw_meta = doc.get("_metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    models = {k: v for k, v in doc.items() if k != "_metadata" and isinstance(v, dict)}
    if len(models) != 1:
        raise ReferenceError(f"{name}: a golden-AL file holds one model; found {len(models)}")
    model, modes = next(iter(models.items()))
    series: dict[str, dict[int, float]] = {}
    for mode, values in modes.items():
        if isinstance(values, dict):
            series[str(mode)] = {int(k): v for k, al in values.items() if (v := _num(al, 1.0, 65.0)) is not None}
    series = {m: s for m, s in series.items() if s}
    if not series:
        raise ReferenceError(f"{name}: no `thinking_on` / `thinking_off` table of k: AL")
    notes = []
    want = {True: "thinking_on", False: "thinking_off"}.get(thinking) if thinking is not None else None
    if want in series:
        by_k, which = series[want], want
    else:
        ks = sorted({k for s in series.values() for k in s})
        by_k = {k: min(s[k] for s in series.values() if k in s) for k in ks}
        which = " / ".join(sorted(series))
        if len(series) > 1:
            notes.append(f"{name}: thinking mode not stated: the lower of {which} at each k judges the run")
    draft = meta.get("draft-model") or meta.get("draft_model")
    kmax = max(by_k)
    return (
        DrafterBaseline(
            id=f"{model} ({draft})" if draft else str(model),
            aliases=(),
            method=_method(" ".join(str(x) for x in (draft, name) if x)),
            target=str(model),
            k=kmax,
            trust="yours",
            source=f"your golden-AL file {name} ({which}, per k)",
            tau={"speed-bench": by_k[kmax]},
            by_k=by_k,
        ),
        tuple(notes),
    )


def _method(text: Any) -> str:
    t = str(text or "").lower()
    return next((m for word, m in _METHOD_WORDS if word in t), "any")
