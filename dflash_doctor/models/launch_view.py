"""What the launch evidence says about the drafter: method and k, from whichever collector filled it.

The launch parser (Kind.LAUNCH) and the log's startup lines (Kind.STARTUP) carry these under the
same names; inspect-model's --num-speculative-tokens arrives as a LAUNCH dict. Checks call these
instead of assuming one payload type.
"""

from __future__ import annotations

from typing import Any

from ..evidence import Evidence, EvidenceSet, Kind

# Launch method spellings (vLLM --speculative-config method, SGLang --speculative-algorithm) -> drafter method
METHOD_ALIASES = {
    "dflash": "dflash", "dflash2": "dflash2", "eagle3": "eagle3", "eagle-3": "eagle3", "eagle": "eagle",
    "medusa": "medusa", "mtp": "mtp", "deepseek_mtp": "mtp", "nextn": "mtp", "qwen3_next_mtp": "mtp",
    "mimo_mtp": "mtp", "glm4_moe_mtp": "mtp", "ernie_mtp": "mtp", "draft_model": "draft", "ngram": "ngram",
}


def _field(value: Any, name: str) -> Any:
    if isinstance(value, dict):
        v = value.get(name)
        if v is None and isinstance(value.get("speculative_config"), dict):
            v = value["speculative_config"].get(name)
        return v
    v = getattr(value, name, None)
    if v is None:
        spec = getattr(value, "speculative_config", None)
        if isinstance(spec, dict):
            v = spec.get(name)
    return v


def launch_field(evidence: EvidenceSet, name: str) -> tuple[Any, Evidence | None]:
    """The first non-empty `name` from LAUNCH evidence, then STARTUP (newest first)."""
    for kind in (Kind.LAUNCH, Kind.STARTUP):
        for ev in reversed(evidence.all(kind)):
            v = _field(ev.value, name)
            if v not in (None, ""):
                return v, ev
    return None, None


def launch_method(evidence: EvidenceSet) -> tuple[str | None, str | None, Evidence | None]:
    """(normalised method, as written, evidence) — None when no launch evidence names one."""
    raw, ev = launch_field(evidence, "method")
    if raw is None:
        raw, ev = launch_field(evidence, "speculative_algorithm")
    if not isinstance(raw, str):
        return None, None, None
    return METHOD_ALIASES.get(raw.strip().lower(), raw.strip().lower()), raw, ev


def launch_k(evidence: EvidenceSet) -> tuple[int | None, Evidence | None]:
    for name in ("num_speculative_tokens", "speculative_num_draft_tokens", "num_spec_tokens"):
        v, ev = launch_field(evidence, name)
        if isinstance(v, int) and not isinstance(v, bool):
            # SGLang counts the draft tokens including the verified one
            return (v - 1 if name == "speculative_num_draft_tokens" else v), ev
    return None, None
