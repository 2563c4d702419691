"""Compare τ and the per-position curve with what the drafter × target pair should reach
(rank/baselines.toml: published τ per dataset, reference curves)."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status
from dflash_doctor.rank.baselines import geometric_ratio, pair_context
from dflash_doctor.rank.signature import HEALTHY_RHO, against_reference, excess_ratio

# Below this share of the reference's accepted tokens/draft, τ is "far below" the pair.
FAR_BELOW_RHO = 0.4
# Published DFlash τ drops by ~0.5–1.5 at temperature 1 (dflash.md); allow the upper end, scaled by T.
SAMPLING_DROP_AT_T1 = 1.5


class TauVsBaseline(Check):
    id = "tau-vs-baseline"
    area = "acceptance"
    title = "τ and curve against the pair's published / reference baseline"
    needs = (Kind.ACCEPTANCE,)
    wants = (Kind.STARTUP, Kind.DRAFTER, Kind.LAUNCH, Kind.WORKLOAD)
    observations = ("tau:at-baseline", "tau:below-baseline", "tau:far-below-baseline", "temperature:collapse",
                    "signature:healthy", "signature:small-uniform-drop", "signature:uniform-low")

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.ACCEPTANCE)
        acc = evidence.acceptance()
        if not acc.sufficient:
            return [self.finding(Status.COULD_NOT_CHECK, f"could not check: only {acc.drafts:.0f} drafts "
                                 f"(minimum {acc.min_drafts})", refs=(ev.ref,))]
        baselines = evidence.baselines
        ctx = pair_context(evidence, baselines)
        b = ctx.baseline
        if b is None:
            known = ", ".join(d.id for d in baselines.drafters)
            who = f"drafter {ctx.drafter_name!r}" if ctx.drafter_name else "a drafter not named in the evidence"
            return [self.finding(Status.COULD_NOT_CHECK,
                                 f"could not check: no published or reference τ for {who} (baselines exist for {known})",
                                 refs=(ev.ref,), remedy="Name the drafter (--drafter, or a log with its startup lines), "
                                 "or add the pair to a baselines file (DFLASH_DOCTOR_BASELINES).")]
        k = min(acc.k or b.k, b.k)
        label, pub_tau, exact = b.tau_for(ctx.dataset)
        ref_curve = b.reference_curve(ctx.dataset, k)
        ref_tau = 1.0 + sum(ref_curve)
        temp = ctx.temperature or 0.0
        allowance = SAMPLING_DROP_AT_T1 * min(temp, 1.0)
        if allowance:
            adj_tau = max(1.0 + 1e-6, ref_tau - allowance)
            a = geometric_ratio(adj_tau, k)
            ref_curve = [a ** i for i in range(1, k + 1)]
            ref_tau = adj_tau
        pp = list(acc.per_position[:k])
        tau_k = 1.0 + sum(pp) if pp else acc.mean_acceptance_length
        rho = excess_ratio(tau_k, ref_tau)
        refs = (ev.ref, *[r for r in ctx.refs if r != ev.ref])
        where = (f"{b.id} ({b.trust}: {b.source}); {'dataset ' + label if exact or ctx.dataset else 'dataset unknown, lowest published τ (' + label + ')'}"
                 f", published τ {pub_tau:.2f} at k={b.k} → reference τ {ref_tau:.2f} at k={k}"
                 + (f", lowered by {allowance:.2f} for temperature {temp:g}" if allowance else ""))
        detail = f"τ {tau_k:.2f} vs reference {ref_tau:.2f} ({rho:.0%} of its accepted tokens/draft); {where}"
        obs: list[Observation] = []
        if rho >= HEALTHY_RHO:
            status, msg = Status.OK, f"τ {tau_k:.2f} is where {b.id} should be (reference {ref_tau:.2f})"
            obs.append(Observation("tau:at-baseline", detail, refs))
        elif rho < FAR_BELOW_RHO:
            status, msg = Status.FAIL, f"τ {tau_k:.2f} is far below what {b.id} reaches (reference {ref_tau:.2f})"
            obs.append(Observation("tau:far-below-baseline", detail, refs))
            if temp > 0:
                obs.append(Observation("temperature:collapse", f"temperature {temp:g}; " + detail, refs))
        else:
            status, msg = Status.WARN, f"τ {tau_k:.2f} is below what {b.id} reaches (reference {ref_tau:.2f})"
            obs.append(Observation("tau:below-baseline", detail, refs))
        sig = against_reference(pp, tau_k, ref_curve) if len(pp) >= 2 else None
        if sig is not None:
            obs.append(Observation(f"signature:{sig.id}", f"{sig.description}; {where}", refs))
        if not exact and not ctx.dataset and len(b.tau) > 1:
            msg += " — dataset unknown, compared with its lowest published τ; give --dataset for a tighter comparison"
        if b.trust != "published":
            msg += f" — {b.trust} reference, not a published figure"
        return [self.finding(status, msg, refs=refs, details=(detail,), observations=tuple(obs))]
