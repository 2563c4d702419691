"""Draft the rows of expected.toml from the extracted wheels, by plain text search (no ast, no probe code).

How expected.toml was written: this script finds, in each release's files, the lines a reader looks
at (the runner line that reads target_layer_ids, the NotImplementedError, the V2 method tuple, …) and
prints draft rows; each row was then checked by reading those lines in the release (the line numbers
and the values in expected.toml are the reviewed result, not this script's output taken on trust).
It shares no code with dflash_doctor/engines, so the conformance suite compares two independent reads.

    python tests/conformance/draft_expected.py > /tmp/draft.toml
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.conformance.wheels import SGLANG, VLLM, tree_for  # noqa: E402


def lines(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def find(text: list[str], pattern: str, start: int = 0) -> int | None:
    rx = re.compile(pattern)
    for i in range(start, len(text)):
        if rx.search(text[i]):
            return i + 1
    return None


def block(text: list[str], def_name: str) -> tuple[int, int] | None:
    """(first, last) 1-based lines of a def, by indentation."""
    start = find(text, rf"def {re.escape(def_name)}\(")
    if start is None:
        return None
    indent = len(text[start - 1]) - len(text[start - 1].lstrip())
    end = start
    for i in range(start, len(text)):
        s = text[i]
        if s.strip() and len(s) - len(s.lstrip()) <= indent and not s.lstrip().startswith(")"):
            break
        end = i + 1
    return start, end


def in_block(text, def_name, pattern):
    b = block(text, def_name)
    if b is None:
        return None
    n = find(text, pattern, b[0] - 1)
    return n if n is not None and n <= b[1] else None


def vllm_row(version: str, root: Path) -> str:
    v = root / "vllm"
    out = [f'[[release]]\nengine = "vllm"\nversion = "{version}"']
    reg = lines(v / "model_executor/models/registry.py")
    d1 = find(reg, r'"DFlashDraftModel":')
    d2 = find(reg, r'"DFlash2DraftModel":')
    archs = [a for a, n in (("DFlashDraftModel", d1), ("DFlash2DraftModel", d2)) if n]
    out.append(f"dflash = {archs!r}".replace("'", '"'))
    if d1:
        out.append(f'dflash_at = "vllm/model_executor/models/registry.py:{d1}"')
    if not archs:
        return "\n".join(out) + "\n"
    run = lines(v / "v1/worker/gpu_model_runner.py")
    n = find(run, r"target_layer_ids")
    plus = n is not None and re.search(r"\+ 1", run[n - 1] + run[n - 2])
    out.append(f'v1_map = "{"plus-one" if plus else "raw"}"\nv1_at = "vllm/v1/worker/gpu_model_runner.py:{n}"')
    utils = lines(v / "v1/worker/gpu/spec_decode/eagle/eagle3_utils.py")
    n2 = find(utils, r'dflash_config\.get\("target_layer_ids"\)')
    cfg = lines(v / "config/vllm.py")
    # the method clause whose body reports "speculative method '…'" (an allow list `not in (…)` or, from
    # 0.30, a deny list `in (…)`)
    allow, deny = None, False
    for name in ("_get_v2_model_runner_unsupported_features", "_validate_v2_model_runner"):
        b = block(cfg, name)
        if b is None or allow:
            continue
        said = next((i for i in range(b[0], b[1] + 1) if "speculative method" in cfg[i - 1]), None)
        for i in range(said or 0, b[0] - 1, -1):  # the nearest method test above that message
            m = re.search(r"\.method (not in|in) \(", cfg[i - 1]) if said else None
            if m:
                allow, deny = i, m.group(1) == "in"
                break
    tup = " ".join(cfg[allow - 1 : allow + 8]) if allow else ""
    tup = tup[: tup.find(")") + 1] if ")" in tup else tup
    v2_ok = allow is None or (("dflash" not in tup) if deny else ("dflash" in tup))
    out.append(f"v2_dflash = {str(v2_ok).lower()}")
    if allow:
        out.append(f'v2_at = "vllm/config/vllm.py:{allow}"')
    out.append(f'v2_map = "{("plus-one" if n2 else "?") if v2_ok else "n/a"}"')
    if n2:
        out.append(f'v2_map_at = "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py:{n2}"')
    model = lines(v / "model_executor/models/qwen3_dflash.py")
    reads = any("layer_types" in s for s in model)
    out.append(f"reads_layer_types = {str(reads).lower()}")
    r = find(model, r"raise NotImplementedError\(")
    if r:
        guard = " ".join(model[max(0, r - 6) : r - 1])
        kind = "refused-unless-v2" if "use_v2_model_runner" in guard else "refused"
        out.append(f'mixed = "{kind}"\nmixed_at = "vllm/model_executor/models/qwen3_dflash.py:{r}"')
    else:
        out.append('mixed = "allowed"')
    envs = lines(v / "envs.py")
    e = find(envs, r'"VLLM_USE_V2_MODEL_RUNNER": lambda')
    unset = "engine" if e and "None" in " ".join(envs[e - 1 : e + 2]) else "v1"
    out.append(f'runner_unset = "{unset}"')
    forced = in_block(cfg, "use_v2_model_runner", r"_dflash_needs_multi_kv_group\(\)")
    if forced:
        out.append(f'mixed_forces_v2_at = "vllm/config/vllm.py:{forced}"')
    v1 = in_block(cfg, "_get_v1_model_runner_unsupported_features", r"_dflash_needs_multi_kv_group\(\)")
    if v1:
        out.append(f'v1_rejects_mixed_at = "vllm/config/vllm.py:{v1}"')
    return "\n".join(out) + "\n"


def sglang_row(version: str, root: Path) -> str:
    s = root / "sglang/srt"
    out = [f'[[release]]\nengine = "sglang"\nversion = "{version}"']
    spec = lines(s / "speculative/spec_info.py")
    n = find(spec, r"^\s+DFLASH = auto\(\)")
    dfl = lines(s / "models/dflash.py")
    entry = find(dfl, r"^EntryClass")
    if not n or not dfl:
        return "\n".join(out + ["dflash = []"]) + "\n"
    names = re.findall(r"\b(\w*DFlash\w*DraftModel)\b", " ".join(dfl[entry - 1 : entry + 10])) if entry else []
    out.append(f"dflash = {sorted(set(names), key=names.index)!r}".replace("'", '"'))
    out.append(f'dflash_at = "sglang/srt/speculative/spec_info.py:{n}"')
    q3 = lines(s / "models/qwen3.py")
    k = in_block(q3, "set_dflash_layers_to_capture", r"layers_to_capture = ")
    out.append(
        f'qwen3_map = "{"plus-one" if k and "+ 1" in q3[k - 1] else "raw"}"\n'
        f'qwen3_at = "sglang/srt/models/qwen3.py:{k}"'
    )
    vl = lines(s / "models/qwen3_vl.py")
    k2 = in_block(vl, "set_dflash_layers_to_capture", r"\.set_dflash_layers_to_capture\(")
    out.append(
        f'qwen36_map = "{"plus-one" if k2 and "+ 1" in vl[k2 - 1] else "?"}"\n'
        f'qwen36_at = "sglang/srt/models/qwen3_vl.py:{k2}"'
    )
    a = find(dfl, r"def _get_dflash_layer_attention_params")
    out.append(f"reads_layer_types = {str(bool(a)).lower()}")
    if a:
        out.append(f'swa_at = "sglang/srt/models/dflash.py:{a}"')
    return "\n".join(out) + "\n"


def main() -> None:
    for version in VLLM:
        print(vllm_row(version, tree_for("vllm", version)))
    for version in SGLANG:
        print(sglang_row(version, tree_for("sglang", version)))


if __name__ == "__main__":
    main()
