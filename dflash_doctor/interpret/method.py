"""Which speculative method ran: a belief over methods from every source, with where each came from.

The method decides which causes can exist (no sliding windows to ignore in an EAGLE-3 head, no draft vocab
map in a DFlash drafter) and which reference band τ is judged against. Sources, strongest first:
  * the drafter config's architecture (what the drafter is),
  * the launch command and the log's startup lines (what the engine was told to run),
  * the log format (llama.cpp's `statistics draft-eagle3`, the n-gram offline block's seq-normalised length),
  * k (DFlash drafts a block of block_size − 1, MTP heads usually 1–3),
  * the engine (TensorRT-LLM and SGLang ship MTP/EAGLE paths; vLLM all).
Each is a likelihood over methods; the posterior starts from the prior in reference.toml (how common each
method is among deployments, from public facts), so an unknown method is the mixture that prior implies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..evidence.acceptance import AcceptanceSummary, StartupFacts
from ..evidence.model_facts import DrafterFacts
from ..evidence.payloads import EngineId, LaunchConfig, ScanStats
from ..knowledge.causes import METHODS
from ..models.architectures import support
from .reference import method_prior, normalise_method

if TYPE_CHECKING:
    from ..evidence import EvidenceSet

# How much one source's word is worth: the likelihood of what it says under the method it names vs any
# other. A drafter config is read, not assumed (it names its architecture); the engine's own startup lines record the
# configuration it runs (a method named there ran: ≥ 0.9 even for a method as rare as n-gram's 9 % prior); a launch
# string is a claim (re-quoted, or not the one that ran) and can be a mismatch (the launch-method check finds those),
# so it is strong but not certain.
STRENGTH = {"drafter": 200.0, "launch": 30.0, "startup": 150.0, "format": 12.0, "k": 2.5, "spec-type": 2000.0}
# llama-server runs exactly the --spec-type it is given (common/speculative.cpp makes one implementation per type
# named; nothing re-detects it from a drafter's name or config), so that flag on a live process is all but certain.
# The method names a launch or log may use, to the method family whose reference band applies.
ALIASES = {
    "dflash2": "dflash",
    "eagle-3": "eagle3",
    "eagle3": "eagle3",
    "eagle": "eagle",
    "nextn": "mtp",
    "deepseek_mtp": "mtp",
    "qwen3_next_mtp": "mtp",
    "mimo_mtp": "mtp",
    "glm4_moe_mtp": "mtp",
    "ernie_mtp": "mtp",
    "mtp": "mtp",
    "draft_model": "draft",
    "draft": "draft",
    "ngram": "ngram",
    "[ngram]": "ngram",
    "ngram-eagle": "ngram",
    "suffix": "suffix",
    "medusa": "medusa",
    "peagle": "p-eagle",
    "p-eagle": "p-eagle",
    "dflash": "dflash",
    "dspark": "dflash",  # DeepSeek's DSpark: a block (parallel) drafter, judged with the DFlash family
    "standalone": "draft",
}


# SGLang's `EAGLE` algorithm runs EAGLE-1/2 heads and the MTP layers of DeepSeek-style targets alike (ServerArgs
# rewrites NEXTN to EAGLE, so the logged server_args say EAGLE for an MTP deployment): it names either family.
SGLANG_EAGLE = ("eagle", "mtp")


_FORMAT_WORDS = (
    ("eagle3", "eagle3"),
    ("ngram", "ngram"),
    ("mtp", "mtp"),
    ("dflash", "dflash"),
    ("draft-model", "draft"),
    ("draft_model", "draft"),
)


def _format_methods(formats) -> list[str]:
    """The method a log format's id names (llama.cpp's `statistics draft-eagle3`, the n-gram offline block), one
    per format at most."""
    out = []
    for fmt in formats:
        f = fmt.lower()
        m = next((m for word, m in _FORMAT_WORDS if word in f), None)
        if m is not None:
            out.append(m)
    return out


def _families(fam: str, engine: str | None) -> tuple[str, ...]:
    """The method families a named method stands for on this engine (SGLang's EAGLE: two)."""
    return SGLANG_EAGLE if (engine or "").lower() == "sglang" and fam == "eagle" else (fam,)


def family(method: str | None) -> str | None:
    if not method:
        return None
    m = method.strip().lower()
    return ALIASES.get(m) or (normalise_method(m) if normalise_method(m) in METHODS else None)


# Lookup proposers (n-gram / prompt lookup, suffix decoding) draft the tokens that followed the latest n-gram the last
# time it occurred in the context: there is no drafter model to read or to blame.
LOOKUP_METHODS = ("ngram", "suffix")


def lookup_method(method: str | None) -> bool:
    """Whether a launch's method string names a lookup proposer (no drafter model)."""
    return family(method) in LOOKUP_METHODS


@dataclass(frozen=True)
class MethodBelief:
    probs: dict[str, float]  # method -> posterior probability (sums to 1)
    said: tuple[tuple[str, str, str | None], ...] = ()  # (method, which source, evidence ref)
    conflict: str | None = None  # the launch and the drafter name different methods

    @property
    def top(self) -> tuple[str, float]:
        m = max(self.probs, key=lambda x: self.probs[x])
        return m, self.probs[m]

    @property
    def known(self) -> str | None:
        """The method when the belief is all but certain (≥ 0.9), else None."""
        m, p = self.top
        return m if p >= 0.9 else None

    def p(self, methods: tuple[str, ...] | list[str] | set[str]) -> float:
        return sum(self.probs.get(m, 0.0) for m in methods)

    def describe(self) -> str:
        m, p = self.top
        if p >= 0.9:
            src = ", ".join(sorted({s for mm, s, _ in self.said if mm == m}))
            return f"{m} (from {src})" if src else m
        top3 = sorted(self.probs.items(), key=lambda x: -x[1])[:3]
        return "unknown: " + ", ".join(f"{mm} {pp:.0%}" for mm, pp in top3)

    def to_dict(self) -> dict:
        return {
            "probs": {m: round(p, 4) for m, p in sorted(self.probs.items(), key=lambda x: -x[1])},
            "said": [list(s) for s in self.said],
            "conflict": self.conflict,
        }


def _k_likelihood(method: str, k: int) -> float:
    """How typical a served k is for a method (relative; 1 = uninformative)."""
    if method == "dflash":
        return 2.5 if k >= 7 else 0.4
    if method == "mtp":
        return 2.0 if k <= 3 else (1.0 if k <= 5 else 0.4)
    if method in ("eagle3", "eagle", "p-eagle"):
        return 1.5 if 2 <= k <= 8 else 0.6
    if method in ("ngram", "suffix"):
        return 1.2 if k >= 3 else 0.8
    return 1.0


# A method the engine release could not run (its drafter architecture is not registered there) keeps only this
# much of its likelihood: the release evidence can be wrong (a patched install), so never exactly zero.
UNAVAILABLE = 0.02
# Methods whose very existence in a release models/architectures.toml settles: DFlash's model and proposer arrived
# whole (vLLM 0.20.0, SGLang 0.5.11). EAGLE/EAGLE-3 were served under other registry names before the ones
# tracked, MTP heads are the target's own class and a draft model is any ordinary model: not ruled out this way.
_TRACKED = ("dflash",)


def _release_bounds(evidence: EvidenceSet) -> list[tuple[str, str]]:
    """(engine, version) pairs the evidence pins: the engine and version named (flag, startup line, installed
    package), or the newest release a log line's shape allows (ScanStats.release_bounds, "<=X")."""
    out: list[tuple[str, str]] = []
    eng = evidence.get(EngineId)
    if eng is not None and eng.version:
        out.append((eng.name, eng.version))
    scan = evidence.get(ScanStats)
    for engine, rel in scan.release_bounds.items() if scan is not None else ():
        for part in rel.split(","):
            part = part.strip()
            if part.startswith("<="):
                out.append((engine, part[2:].strip()))
    return out


def unavailable(evidence: EvidenceSet) -> dict[str, str]:
    """Methods the pinned engine release cannot run, with why (models/architectures.toml, from the registries)."""

    out: dict[str, str] = {}
    for engine, version in _release_bounds(evidence):
        for m in _TRACKED:
            a = support(engine, version, m)
            if a is not None and a.loadable is False and a.name:
                out.setdefault(m, a.sentence)
    return out


def infer_method(evidence: EvidenceSet) -> MethodBelief:

    prior = {m: p for m, p in method_prior().items() if m in METHODS}
    total = sum(prior.values()) or 1.0
    logp = {m: math.log(max(prior.get(m, 0.0) / total, 1e-4)) for m in METHODS}
    said: list[tuple[str, str, str | None]] = []

    def hear(method: str | None, source: str, ref: str | None, engine: str | None = None) -> None:
        fam = family(method)
        if fam is None:
            return
        w = math.log(STRENGTH[source])
        for f in _families(fam, engine):
            said.append((f, source, ref))
            logp[f] += w

    d = evidence.get(DrafterFacts)
    if d is not None and d.method not in (None, "unknown"):
        hear(d.method, "drafter", evidence.ref(DrafterFacts))
    launch = evidence.get(LaunchConfig)
    if launch is not None and launch.method:
        explicit = launch.engine == "llama.cpp" and bool((launch.speculative or {}).get("spec_type"))
        hear(launch.method, "spec-type" if explicit else "launch", evidence.ref(LaunchConfig), launch.engine)
    st = evidence.get(StartupFacts)
    if st is not None and st.method:
        hear(st.method, "startup", evidence.ref(StartupFacts), st.engine)
    acc = evidence.get(AcceptanceSummary)
    if acc is not None:
        for m in _format_methods(acc.formats):
            hear(m, "format", evidence.ref(AcceptanceSummary))
        if acc.k:
            for m in METHODS:
                logp[m] += math.log(_k_likelihood(m, acc.k))
    stated = {m for m, src, _ in said if src in ("drafter", "launch", "startup", "spec-type")}
    for m, why in unavailable(evidence).items():
        if m in stated:
            continue  # what the launch or the drafter says ran, ran (engine-loads-drafter judges whether it could)
        logp[m] += math.log(UNAVAILABLE)
        said.append((m, f"unavailable: {why}", None))
    conflict = None
    named = {("launch" if s == "spec-type" else s): m for m, s, _ in said if s in ("drafter", "launch", "spec-type")}
    if len(set(named.values())) > 1:
        conflict = f"the launch says {named.get('launch')}, the drafter config is {named.get('drafter')}"
    mx = max(logp.values())
    un = {m: math.exp(v - mx) for m, v in logp.items()}
    z = sum(un.values())
    return MethodBelief({m: v / z for m, v in un.items()}, tuple(said), conflict)
