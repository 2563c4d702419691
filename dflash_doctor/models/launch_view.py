"""What the launch evidence says about the drafter: method, drafter and k, from whichever collector filled it.

The launch command (LaunchConfig, a LaunchConfig) and the log's startup lines (StartupFacts, a StartupFacts)
both state `method`, `drafter` and `num_speculative_tokens` (SGLang's draft-token count already turned into
k by their parsers). The startup lines win, the newest evidence first: they are what the engine ran, while a launch
command given to the doctor is a claim about the launch (often retyped or re-quoted since).
"""

from __future__ import annotations

import json
from typing import Any

from ..evidence import Evidence, EvidenceSet
from ..evidence.acceptance import AcceptanceSummary, StartupFacts
from ..evidence.payloads import EngineId, LaunchConfig

# Launch method spellings (vLLM --speculative-config method, SGLang --speculative-algorithm) -> drafter method
METHOD_ALIASES = {
    "dflash": "dflash",
    "dflash2": "dflash2",
    "eagle3": "eagle3",
    "eagle-3": "eagle3",
    "eagle": "eagle",
    "medusa": "medusa",
    "mtp": "mtp",
    "deepseek_mtp": "mtp",
    "nextn": "mtp",
    "qwen3_next_mtp": "mtp",
    "mimo_mtp": "mtp",
    "glm4_moe_mtp": "mtp",
    "ernie_mtp": "mtp",
    "draft_model": "draft",
    "standalone": "draft",  # SGLang's separate small draft model
    "ngram": "ngram",
}


def launch_field(evidence: EvidenceSet, name: str) -> tuple[Any, Evidence | None]:
    """The first non-empty `name` (method | drafter | num_speculative_tokens) from STARTUP (what ran), then LAUNCH."""
    for kind in (StartupFacts, LaunchConfig):
        for ev in reversed(evidence.all(kind)):
            v = getattr(ev.value, name)
            if v not in (None, ""):
                return v, ev
    return None, None


def launch_method(evidence: EvidenceSet) -> tuple[str | None, str | None, Evidence | None]:
    """(normalised method, as written, evidence) — None when no launch evidence names one."""
    raw, ev = launch_field(evidence, "method")
    if not isinstance(raw, str):
        return None, None, None
    return METHOD_ALIASES.get(raw.strip().lower(), raw.strip().lower()), raw, ev


def launch_parallel_drafting(evidence: EvidenceSet) -> bool:
    """Whether the launch's speculative config sets `"parallel_drafting": true`: how vLLM serves a P-EAGLE
    drafter (method eagle3 with this flag; it has no method of its own, 0.19.0+)."""
    launch = evidence.get(LaunchConfig)
    spec = launch.speculative if launch is not None else None
    return isinstance(spec, dict) and spec.get("parallel_drafting") is True


def launch_k(evidence: EvidenceSet) -> tuple[int | None, Evidence | None]:
    v, ev = launch_field(evidence, "num_speculative_tokens")
    if isinstance(v, int) and not isinstance(v, bool):
        return v, ev
    return None, None


def facts_conflicts(evidence: EvidenceSet) -> list[str]:
    """Facts two sources state differently: the log's engine release against the one a flag or the host
    names, the log's method and k against the launch command's. Each is reported (log-parse) and fails a gate
    closed: one of the two is not the engine's. (One process's startup lines disagreeing among themselves are
    rejected lines of the log scan: parse/result.py.)"""
    out: list[str] = []
    st = evidence.get(StartupFacts)
    if st is None:
        return out
    for ev in evidence.all(EngineId):
        eng = ev.value
        if eng.version_from == "the log's startup lines" or not st.engine:
            continue
        where = eng.version_from or ev.source.location
        if eng.name and eng.name != st.engine:
            out.append(f"engine {st.engine} (the log's startup lines) and {eng.name} ({where})")
        elif st.version and eng.version and _release(st.version) != _release(eng.version):
            out.append(f"{st.engine} {st.version} (the log's startup lines) and {eng.version} ({where})")
    launch = evidence.get(LaunchConfig)
    if launch is not None:
        tag = launch.image_version if launch.engine == st.engine else None
        if tag and st.version and _release(st.version) != _release(tag):
            out.append(
                f"{st.engine} {st.version} (the log's startup lines) and {tag} (the image tag in the launch command, "
                f"{launch.image})"
            )
        if st.method and launch.method and _normal(st.method) != _normal(launch.method):
            out.append(f"method {st.method} (the log's startup lines) and {launch.method} (the launch command)")
        k_log, k_launch = st.num_speculative_tokens, launch.num_speculative_tokens
        if k_log and k_launch and k_log != k_launch:
            out.append(f"k {k_log} (the log's startup lines) and {k_launch} (the launch command)")
    # vLLM V1 prints one rate per speculative token: a list of another length is another run's line
    acc = evidence.get(AcceptanceSummary)
    k_lines = acc.k if acc is not None and acc.formats and all(f.startswith("vllm-v1") for f in acc.formats) else None
    if k_lines and st.num_speculative_tokens and k_lines != st.num_speculative_tokens:
        out.append(
            f"k {st.num_speculative_tokens} (the log's startup lines) and {k_lines} (the per-position rates of its "
            "metrics lines): the lines come from another run than the startup lines"
        )
    return out


def _release(version: str) -> str:
    return version.strip().lstrip("v").split("+")[0]


def _normal(method: str) -> str:
    return METHOD_ALIASES.get(method.strip().lower(), method.strip().lower())


def server_default_temperature(launch: LaunchConfig | None) -> float | None:
    """The temperature a server applies to requests that set none: vLLM's `--override-generation-config` JSON (it
    overrides the model's generation_config.json defaults), SGLang's `--preferred-sampling-params` JSON,
    llama-server's `--temp`; None when the launch sets none."""
    if launch is None:
        return None
    args = launch.args or {}
    t: Any = None
    for name in ("override_generation_config", "preferred_sampling_params"):
        raw = args.get(name)
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raw = None
        if isinstance(raw, dict) and "temperature" in raw:
            t = raw["temperature"]
            break
    if t is None and launch.engine == "llama.cpp" and isinstance(args.get("temperature"), str):
        try:
            t = float(args["temperature"])
        except ValueError:
            return None
    if isinstance(t, (int, float)) and not isinstance(t, bool) and 0 <= t <= 10:
        return float(t)
    return None
