"""A `llama-server` command line: the speculative method, k and drafter it asks for.

Flags as llama.cpp's common/arg.cpp names them (read in the 0.5.0-dev vendored by llama-cpp-python 0.3.36),
with the spellings older releases used:
  --spec-type T[,T…]            none | draft-simple | draft-eagle3 | draft-mtp | draft-dflash | draft-dspark |
                                ngram-simple | ngram-map-k | ngram-map-k4v | ngram-mod | ngram-cache
  -md / --model-draft / --spec-draft-model FNAME    the drafter GGUF (-hfd / --hf-repo-draft: from a hub repo)
  --spec-draft-n-max N          tokens drafted per step by a draft model (default 3 in that release)
  --draft / --draft-n / --draft-max N               the same before the rename (removed in 0.5.0-dev)
  --spec-ngram-simple-size-m N, --spec-ngram-map-k[4v]-size-m N, --spec-ngram-mod-n-max N: an n-gram drafter's
                                longest draft (speculative.cpp sizes the per-position counter by these)
A drafter without --spec-type: older releases drafted with it; 0.5.0-dev drafts nothing unless a draft type is
named (the server then serves without speculation) — the method is still the draft model the user meant.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

# --spec-type -> the method names the rest of the doctor uses (interpret/method.py ALIASES)
SPEC_TYPES = {
    "draft-simple": "draft_model",
    "draft": "draft_model",
    "draft-eagle3": "eagle3",
    "eagle3": "eagle3",
    "draft-mtp": "mtp",
    "draft-dflash": "dflash",
    "draft-dspark": "dspark",
    "ngram-simple": "ngram",
    "ngram-map-k": "ngram",
    "ngram-map-k4v": "ngram",
    "ngram-mod": "ngram",
    "ngram-cache": "ngram",
}
# every spelling -> one name
_ALIASES = {
    "-m": "model",
    "--model": "model",
    "-md": "model_draft",
    "--model-draft": "model_draft",
    "--spec-draft-model": "model_draft",
    "-hf": "hf_repo",
    "-hfr": "hf_repo",
    "--hf-repo": "hf_repo",
    "--temp": "temperature",
    "-hfd": "hf_repo_draft",
    "-hfrd": "hf_repo_draft",
    "--hf-repo-draft": "hf_repo_draft",
    "--spec-draft-hf": "hf_repo_draft",
    "--draft": "draft_max",
    "--draft-n": "draft_max",
    "--draft-max": "draft_max",
}
# the flag that sets the longest draft, per spec type
_K_FLAG = {
    "ngram-simple": "spec_ngram_simple_size_m",
    "ngram-map-k": "spec_ngram_map_k_size_m",
    "ngram-map-k4v": "spec_ngram_map_k4v_size_m",
    "ngram-mod": "spec_ngram_mod_n_max",
}


def is_llama_server(word: str) -> bool:
    return os.path.basename(word) == "llama-server"


def _int(v: Any) -> int | None:
    try:
        n = int(str(v), 10)
    except ValueError:
        return None
    return n if n >= 0 else None


def flags(words: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """{name: value} for every flag (a flag followed by another flag, or last, is a switch: True), and the
    words no flag took. llama-server takes no positional arguments."""
    args: dict[str, Any] = {}
    stray: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("-") and len(w) > 1 and not w[1:].replace(".", "").isdigit():
            flag, eq, val = w.partition("=")
            value: Any = val if eq else True
            if not eq and i + 1 < len(words) and not (words[i + 1].startswith("-") and _int(words[i + 1][1:]) is None):
                value = words[i + 1]
                i += 1
            args[_ALIASES.get(flag, flag.lstrip("-").replace("-", "_"))] = value
        else:
            stray.append(w)
        i += 1
    return args, stray


def speculative(args: dict[str, Any]) -> dict[str, Any] | None:
    """The speculative config the flags ask for ({method, spec_type, model, num_speculative_tokens, …}), or None."""
    types = [t.strip() for t in str(args.get("spec_type", "")).split(",") if t.strip() and t.strip() != "none"]
    drafter = args.get("model_draft") if isinstance(args.get("model_draft"), str) else args.get("hf_repo_draft")
    drafter = drafter if isinstance(drafter, str) else None
    named = bool(types)
    if not types and drafter:
        types = ["draft-simple"]  # what the user meant; 0.5.0-dev needs --spec-type to draft at all
    if not types:
        return None
    first = types[0]
    spec: dict[str, Any] = {"method": SPEC_TYPES.get(first, first)}
    if named:
        spec["spec_type"] = ",".join(types)  # named on the command line: what the server runs
    if drafter and first.startswith("draft"):
        spec["model"] = drafter
    k_flag = _K_FLAG.get(first)
    k = _int(args[k_flag]) if k_flag and k_flag in args else None
    if k is None and first.startswith("draft"):
        k = next((_int(args[f]) for f in ("spec_draft_n_max", "draft_max") if f in args), None)
    if k is not None:
        spec["num_speculative_tokens"] = k
    for name in ("spec_ngram_simple_size_n", "spec_ngram_mod_n_match", "spec_draft_n_min"):
        if name in args and _int(args[name]) is not None:
            spec[name] = _int(args[name])
    return spec
