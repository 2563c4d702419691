"""How the drafts are verified and how many are drafted: lossless or not, forced or not, fixed k or not.

A τ compared with a published band assumes the standard, lossless verifier at a fixed k. The 2026 engines ship
settings that break that assumption (shared/reference/anchors-2026-12.md §0.6-0.7, read in the vLLM 0.34.0 and
SGLang 0.5.23 wheels, TensorRT-LLM 1.2 llm_args.py and ROCm/ATOM's arg_utils.py):

  forced ("synthetic") acceptance   vLLM `rejection_sample_method: "synthetic"` with
                                    `synthetic_acceptance_length` / `synthetic_acceptance_rates`
                                    (config/speculative.py),
                                    SGLang `SGLANG_SIMULATE_ACC_LEN` (srt/environ.py), TensorRT-LLM
                                    `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS` (forces accepted drafts: AL − 1), ATOM
                                    `--spec-decode-acceptance-length` / `-rate` (#1948).
                                    Benchmark knobs that replay a published AL: the τ is the setting, not the drafter,
                                    and the text "is not the model's output". A deployment copied from such a recipe
                                    reports a fake τ.
  its fingerprint                   vLLM's `_acceptance_length_to_rates` (and ATOM's copy) spends the AL on the first
                                    positions: per-position rates of exactly 1.000, then one fraction, then exactly
                                    0.000 — no trained drafter's curve looks like that over many drafts.
  lossy verifiers                   vLLM `rejection_sample_method: "fly"` (0.33+: "a lossy speculative decoding
                                    method and may degrade model outputs"), SGLang
                                    `--speculative-accept-threshold-single/-acc` below 1 (relaxed acceptance): τ is
                                    higher than a lossless verifier gives.
  block verification                vLLM `rejection_sample_method: "block"`, SGLang
                                    `--speculative-use-block-verification`: accepts more than token-by-token
                                    verification; bands are token-wise figures.
  dynamic k                         vLLM `num_speculative_tokens_per_batch_size` (k per batch-size range, 0 allowed),
                                    `enable_adaptive_verification`, TensorRT-LLM `draft_len_schedule` /
                                    `max_concurrency`:
                                    positions past the k chosen for a step are not drafted, and vLLM's per-position
                                    rate (accepted at i / drafts) counts them as misses (the per-position draft counts
                                    are never exported) — a tail near zero under load is scheduling, not the drafter.
  greedy draft sampling             vLLM `draft_sample_method: "greedy"` (the default): at temperature > 0 one-hot
                                    drafts accept less than probabilistic ones.
  acceptance gate                   TensorRT-LLM `acceptance_window` + `acceptance_length_threshold` (PyTorch backend):
                                    speculation switches off for good once the rolling mean of accepted drafts per
                                    step (AL − 1, `SpeculationGate.record_avg_decoded`) over the last N requests drops
                                    below the threshold — a threshold written as an AL disables a healthy deployment.
"""

from __future__ import annotations

from typing import Any

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary, StartupFacts
from dflash_doctor.evidence.payloads import Environment, LaunchConfig, Workload

FORCED_ENV = {
    "SGLANG_SIMULATE_ACC_LEN": "SGLang's simulated acceptance (SGLANG_SIMULATE_ACC_LEN)",
    "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": "TensorRT-LLM's forced accepted-token count",
}
FORCED_ARGS = ("spec_decode_acceptance_length", "spec_decode_acceptance_rate")  # ROCm ATOM (#1948)
DYNAMIC_KEYS = ("num_speculative_tokens_per_batch_size", "draft_len_schedule", "max_concurrency")


def _specs(evidence: EvidenceSet) -> list[tuple[dict, str | None]]:
    """The speculative configs the evidence holds: the launch's and the one the log's startup lines show running."""
    out: list[tuple[dict, str | None]] = []
    launch = evidence.get(LaunchConfig)
    # (only vLLM's --speculative-config has these keys: an SGLang or llama.cpp launch's flags are no such config)
    if launch is not None and isinstance(launch.speculative, dict) and launch.engine in ("vllm", None):
        out.append((launch.speculative, evidence.ref(LaunchConfig)))
    st = evidence.get(StartupFacts)
    if st is not None and isinstance((st.args or {}).get("speculative_config"), dict):
        out.append((st.args["speculative_config"], evidence.ref(StartupFacts)))
    return out


def _env(evidence: EvidenceSet) -> list[tuple[dict, str | None]]:
    out: list[tuple[dict, str | None]] = []
    launch = evidence.get(LaunchConfig)
    if launch is not None and launch.env:
        out.append((dict(launch.env), evidence.ref(LaunchConfig)))
    host = evidence.get(Environment)
    if host is not None and getattr(host, "variables", None):
        out.append((dict(host.variables), evidence.ref(Environment)))
    return out


def _args(evidence: EvidenceSet) -> list[tuple[dict, str | None]]:
    out: list[tuple[dict, str | None]] = []
    launch = evidence.get(LaunchConfig)
    if launch is not None and launch.args:
        out.append((dict(launch.args), evidence.ref(LaunchConfig)))
    st = evidence.get(StartupFacts)
    if st is not None and st.args:
        out.append((dict(st.args), evidence.ref(StartupFacts)))
    return out


def _set(v: Any) -> bool:
    return v not in (None, "", False, 0, -1, "-1", "0", [], {})


def _from_spec(spec: dict, ref: str | None, put) -> None:
    rsm = str(spec.get("rejection_sample_method") or "").lower()
    if (
        rsm == "synthetic"
        or _set(spec.get("synthetic_acceptance_length"))
        or _set(spec.get("synthetic_acceptance_rates"))
    ):
        al = spec.get("synthetic_acceptance_length") or spec.get("synthetic_acceptance_rates")
        put("forced", f'vLLM rejection_sample_method "synthetic" (forced acceptance {al})', ref)
    if rsm in ("fly", "block"):
        words = "FLy, lossy" if rsm == "fly" else "block verification"
        put("lossy" if rsm == "fly" else "block", f'vLLM rejection_sample_method "{rsm}" ({words})', ref)
    for key in DYNAMIC_KEYS:
        if _set(spec.get(key)):
            put("dynamic", f"{key} = {spec[key]} (k chosen per batch)", ref)
    if spec.get("enable_adaptive_verification") is True:
        put("dynamic", "enable_adaptive_verification (the verify budget per request)", ref)
    if str(spec.get("draft_sample_method") or "greedy").lower() == "greedy":
        put("greedy-drafts", 'draft_sample_method "greedy" (one-hot drafts)', ref)
    if _set(spec.get("acceptance_window")) and spec.get("acceptance_length_threshold") is not None:
        put(
            "gate",
            f"acceptance_window {spec['acceptance_window']}, acceptance_length_threshold "
            f"{spec['acceptance_length_threshold']}",
            ref,
        )


def _from_args(args: dict, ref: str | None, put) -> None:
    for key in FORCED_ARGS:
        if _set(args.get(key)):
            put("forced", f"ATOM --{key.replace('_', '-')} {args[key]}", ref)
    for key in ("speculative_accept_threshold_single", "speculative_accept_threshold_acc"):
        v = args.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v < 1.0:
            put("lossy", f"SGLang {key} = {v} (relaxed acceptance)", ref)
    if args.get("speculative_use_block_verification") is True:
        put("block", "SGLang --speculative-use-block-verification", ref)


def settings(evidence: EvidenceSet) -> dict[str, tuple[str, str | None]]:
    """kind -> (what was set, evidence ref) for the verification settings the evidence shows."""
    found: dict[str, tuple[str, str | None]] = {}

    def put(kind: str, what: str, ref: str | None) -> None:
        found.setdefault(kind, (what, ref))

    for spec, ref in _specs(evidence):
        _from_spec(spec, ref, put)
    for env, ref in _env(evidence):
        for var, what in FORCED_ENV.items():
            if _set(env.get(var)):
                put("forced", f"{what} = {env[var]}", ref)
    for args, ref in _args(evidence):
        _from_args(args, ref, put)
    return found


def forced_schedule(pp: tuple[float, ...], drafts: float) -> bool:
    """vLLM's minimum-variance forced schedule: exactly 1.000 at the first positions, one fraction, exactly 0.000
    after (at least one 1.000 and one 0.000, over enough drafts that a real curve could not round to it)."""
    if len(pp) < 2 or drafts < 200:
        return False
    i = 0
    while i < len(pp) and pp[i] >= 0.9995:
        i += 1
    if i == 0 or i == len(pp):
        return False
    rest = pp[i + 1 :] if 0.0005 < pp[i] < 0.9995 else pp[i:]
    return bool(rest) and all(r <= 0.0005 for r in rest)


class Verification(Check):
    id = "verification"
    area = "launch"
    title = "How drafts are verified (lossless, lossy, block, forced) and whether k is fixed"
    wants = (LaunchConfig, StartupFacts, Environment, AcceptanceSummary, Workload)
    observations = (
        "acceptance:forced",
        "acceptance:forced-schedule",
        "acceptance:full",
        "verifier:lossy",
        "verifier:block",
        "k:dynamic",
        "draft-sampling:greedy-at-temperature",
        "launch:acceptance-gate",
    )

    def run(self, evidence: EvidenceSet):
        found = settings(evidence)
        acc = evidence.get(AcceptanceSummary)
        findings = []
        if "forced" in found:
            what, ref = found["forced"]
            findings.append(
                self.finding(
                    Status.FAIL,
                    f"acceptance is forced by a benchmark setting ({what}): the τ is the setting's, not the drafter's",
                    refs=(ref,) if ref else (),
                    remedy="Remove the forced-acceptance setting (a benchmark recipe's knob), then measure again.",
                    observations=(Observation("acceptance:forced", what, (ref,) if ref else ()),),
                )
            )
        elif acc is not None and forced_schedule(tuple(acc.per_position), acc.drafts):
            pp = ", ".join(f"{r:.3f}" for r in acc.per_position[:8])
            ref = evidence.ref(AcceptanceSummary)
            findings.append(
                self.finding(
                    Status.FAIL,
                    f"the per-position curve is a forced schedule ({pp}): exact 1.000s, one fraction, exact 0.000s — "
                    "how vLLM's synthetic acceptance spends a target AL, not how a drafter decays",
                    refs=(ref,) if ref else (),
                    remedy='Check the launch for rejection_sample_method "synthetic" / synthetic_acceptance_length, '
                    "SGLANG_SIMULATE_ACC_LEN, TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS or ATOM's "
                    "--spec-decode-acceptance-length, and remove it.",
                    observations=(Observation("acceptance:forced-schedule", pp, (ref,) if ref else ()),),
                )
            )
        elif acc is not None and acc.per_position and acc.drafts >= 200 and min(acc.per_position) >= 0.9995:
            ref = evidence.ref(AcceptanceSummary)
            findings.append(
                self.finding(
                    Status.WARN,
                    "every draft accepted at every position: a forced AL of k + 1, or a target repeating itself "
                    "(vLLM's CI rejects this as a verifier rubber-stamping degenerate output)",
                    refs=(ref,) if ref else (),
                    observations=(Observation("acceptance:full", "every position 1.000", (ref,) if ref else ()),),
                )
            )
        findings += self._others(evidence, found)
        if not findings:
            if not found and evidence.get(LaunchConfig) is None and evidence.get(StartupFacts) is None:
                return [self.finding(Status.NOT_APPLICABLE, "no launch or startup lines to read the verifier from")]
            return [self.finding(Status.OK, "standard lossless verification at a fixed k, as far as the launch shows")]
        return findings

    def _others(self, evidence: EvidenceSet, found: dict) -> list:
        out = []
        words = {
            "lossy": (
                "verifier:lossy",
                "a lossy verifier: τ is higher than the standard lossless verifier gives, so it overstates the "
                "drafter against the (lossless) published bands",
            ),
            "block": (
                "verifier:block",
                "block verification: accepts more than token-by-token verification; the bands are token-wise",
            ),
            "dynamic": (
                "k:dynamic",
                "k is chosen per batch: positions past the step's k are not drafted, and the per-position rates "
                "count them as misses — a low tail under load is scheduling, not the drafter",
            ),
            "gate": (
                "launch:acceptance-gate",
                "TensorRT-LLM switches speculation off for good once the rolling mean of accepted drafts per step "
                "(AL − 1, not AL) over the window falls below the threshold",
            ),
        }
        for kind, (name, text) in words.items():
            if kind not in found:
                continue
            what, ref = found[kind]
            out.append(
                self.finding(
                    Status.WARN,
                    f"{what}: {text}",
                    refs=(ref,) if ref else (),
                    observations=(Observation(name, what, (ref,) if ref else ()),),
                )
            )
        w = evidence.get(Workload)
        if "greedy-drafts" in found and w is not None and (w.temperature or 0) > 0:
            what, ref = found["greedy-drafts"]
            out.append(
                self.finding(
                    Status.WARN,
                    f"{what} at temperature {w.temperature:g}: one-hot drafts accept less than probabilistic ones",
                    refs=(ref,) if ref else (),
                    remedy='Set "draft_sample_method": "probabilistic" in --speculative-config (vLLM 0.28+).',
                    observations=(Observation("draft-sampling:greedy-at-temperature", what, (ref,) if ref else ()),),
                )
            )
        return out
