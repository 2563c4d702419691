"""Does the clean-room probe reproduce the served acceptance, beat it, or match it only under an ablation?

The probe result (ProbeResult, schema dflash-doctor/probe@1) gives τ and the per-position curve with
the drafter run as trained; the served acceptance (AcceptanceSummary) comes from logs or /metrics.
Served k may be smaller than the probe's block − 1, so the probe's τ is re-read at the served k
from its per-position curve (τ_k = 1 + Σ_{i<k} rate_i, exact under vLLM's definition).
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.evidence.payloads import ProbeResult


def tau_at(per_position, k: int | None) -> float | None:
    if not per_position:
        return None
    rates = list(per_position) if k is None else list(per_position)[:k]
    return 1.0 + sum(rates)


def tolerance(tau: float) -> float:
    # Prompts differ between the probe and the served workload; a τ gap smaller than this is not evidence.
    return max(0.35, 0.12 * tau)


class ProbeVsServed(Check):
    id = "probe-vs-served"
    area = "probe"
    title = "Clean-room probe τ against the served τ"
    needs = (ProbeResult, AcceptanceSummary)
    observations = (
        "probe:exceeds-served",
        "probe:reproduces-served",
        "probe:ablation-swa-matches",
        "probe:ablation-offset-matches",
    )

    def run(self, evidence: EvidenceSet):  # noqa: C901 -- one branch per way a probe and the served run can disagree, each its own sentence
        pev, aev = evidence.require_item(ProbeResult), evidence.require_item(AcceptanceSummary)
        probe, served = evidence.require(ProbeResult), evidence.require(AcceptanceSummary)
        refs = (pev.ref, aev.ref)
        s_tau = served.mean_acceptance_length
        k = served.k
        per = list(probe.per_position)
        if k is not None and k > len(per):
            k = None  # served drafts more tokens than the probe's block: compare the whole probe curve
        p_tau = tau_at(per, k)  # None: the probe has no per-position rates
        if s_tau is None or p_tau is None:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK, "could not check: the probe or the served acceptance has no τ", refs=refs
                )
            ]
        tol = tolerance(p_tau)
        at = f" at k={k}" if k else ""
        findings = []
        if probe.temperature > 0:
            at += f" (probe at temperature {probe.temperature:g})"
        if s_tau < p_tau - tol:
            findings.append(
                self.finding(
                    Status.FAIL,
                    f"the clean-room probe reaches τ {p_tau:.2f}{at}, the server only {s_tau:.2f}: "
                    "the drafter's weights are fine, the serving path loses acceptance",
                    refs=refs,
                    remedy="Look at how the engine runs the drafter: layer taps, sliding windows, attention backend "
                    "(the ablations below say which one reproduces the served curve).",
                    observations=(
                        Observation("probe:exceeds-served", f"probe τ {p_tau:.2f} vs served {s_tau:.2f}", refs),
                    ),
                )
            )
        elif s_tau > p_tau + tol:
            findings.append(
                self.finding(
                    Status.WARN,
                    f"the server ({s_tau:.2f}) beats the probe (τ {p_tau:.2f}{at}): the served workload "
                    "is easier than the probe's prompts, so the comparison decides nothing",
                    refs=refs,
                )
            )
        else:
            findings.append(
                self.finding(
                    Status.WARN,
                    f"the clean-room probe reproduces the served τ ({p_tau:.2f}{at} vs {s_tau:.2f}): "
                    "the engine runs the drafter faithfully; the limit is the drafter or the workload",
                    refs=refs,
                    observations=(
                        Observation("probe:reproduces-served", f"probe τ {p_tau:.2f} vs served {s_tau:.2f}", refs),
                    ),
                )
            )
            return findings
        if s_tau >= p_tau - tol:
            return findings
        # Which ablation reproduces the served τ? Every one within tolerance is named: when several do,
        # the probe cannot tell them apart and other evidence (the engine's support table) decides.
        matches = []
        for ab in probe.ablations:
            name = ab.get("name", "")
            if name not in ("swa-ignored", "offset-1", "offset+1"):
                continue
            if name == "swa-ignored" and ab.get("note"):
                continue  # no sliding layers: the ablation is the unablated model
            per_ab = ab.get("per_position")
            a_tau = tau_at([x for x in per_ab if isinstance(x, (int, float))] if isinstance(per_ab, list) else [], k)
            if a_tau is not None and abs(a_tau - s_tau) <= tol:
                matches.append((abs(a_tau - s_tau), name, a_tau))
        if not matches:
            findings.append(
                self.finding(
                    Status.WARN,
                    "no probe ablation (sliding windows ignored, taps shifted by ±1) reproduces the served τ"
                    + ("" if probe.ablations else " — the probe ran without ablations (--ablate offset,swa)"),
                    refs=refs,
                )
            )
            return findings
        matches.sort()
        observations, parts = [], []
        for _, name, a_tau in matches:
            if name == "swa-ignored":
                parts.append(f"with the drafter's sliding windows ignored (τ {a_tau:.2f})")
                observations.append(
                    Observation(
                        "probe:ablation-swa-matches",
                        f"probe with windows ignored τ {a_tau:.2f} vs served {s_tau:.2f}",
                        refs,
                    )
                )
            else:
                parts.append(f"with the layer taps shifted ({name}, τ {a_tau:.2f})")
                observations.append(
                    Observation(
                        "probe:ablation-offset-matches",
                        f"probe with taps {name} τ {a_tau:.2f} vs served {s_tau:.2f}",
                        refs,
                    )
                )
        if len(parts) == 1:
            msg = f"the probe {parts[0]} reproduces the served τ ({s_tau:.2f})"
        else:
            msg = (
                f"several probe ablations reproduce the served τ ({s_tau:.2f}): "
                + "; ".join(parts)
                + " — the probe alone cannot tell them apart"
            )
        # one observation per kind: two offset ablations are one piece of evidence, not two
        seen, unique = set(), []
        for o in observations:
            if o.name not in seen:
                seen.add(o.name)
                unique.append(o)
        findings.append(self.finding(Status.FAIL, msg, refs=refs, observations=tuple(unique)))
        return findings
