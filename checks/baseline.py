"""τ and the per-position curve against what the deployment should reach: the pair's published baseline
when the drafter is known (interpret/baselines.toml), else what trained drafters of its method reach at the
served k (interpret/reference.toml) — read from the counts (interpret/readings.py), never from a draft cutoff."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary, StartupFacts
from dflash_doctor.evidence.model_facts import DrafterFacts
from dflash_doctor.evidence.payloads import LaunchConfig, MetricsScrape, Workload
from dflash_doctor.interpret.baselines import geometric_ratio, in_force, pair_context
from dflash_doctor.interpret.method import LOOKUP_METHODS
from dflash_doctor.interpret.readings import DECISIVE, p_above, read_level
from dflash_doctor.interpret.signature import against_reference, excess_ratio

# Below this share of the reference's accepted tokens/draft, τ is "far below" the pair or band.
FAR_BELOW_RHO = 0.4
# Published DFlash τ drops by ~0.5–1.5 at temperature 1 (dflash.md); allow the upper end, scaled by T.
SAMPLING_DROP_AT_T1 = 1.5


def _level_observations(reading, rho: float, band, ctx, detail: str, refs: tuple, temp: float) -> list[Observation]:
    """τ at, below or far below the band (and dead, and far below this very checkpoint's published figure)."""
    p_h = reading.p_healthy if reading.p_healthy is not None else 0.0
    p_bad = max(1.0 - p_h, reading.p_dead)
    if p_h >= 0.5:
        return [Observation("tau:at-baseline", detail, refs, strength=p_h)]
    if not (rho < FAR_BELOW_RHO or reading.p_dead >= 0.5):
        return [Observation("tau:below-baseline", detail, refs, strength=p_bad)]
    obs = [Observation("tau:far-below-baseline", detail, refs, strength=p_bad)]
    if reading.p_dead >= 0.5:
        # τ − 1 at or under the dead band (reference.toml rules.dead_excess) over enough drafts: below anything a
        # working drafter of any method reaches, a weakly trained one included
        obs.append(Observation("tau:dead", detail, refs, strength=reading.p_dead))
    if band.basis == "pair" and ctx.baseline is not None and ctx.baseline.trust == "published":
        # this very checkpoint is published to reach far more: the weights can do better than this
        obs.append(Observation("tau:far-below-pair", f"{ctx.baseline.id}: " + detail, refs, strength=p_bad))
    if temp > 0:
        obs.append(Observation("temperature:collapse", f"temperature {temp:g}; " + detail, refs, strength=p_bad))
    return obs


# Lookup proposers (n-gram / prompt lookup, suffix decoding) have no weights: they draft the tokens that followed the
# latest n-gram the last time it occurred in the context (vLLM v1/spec_decode/ngram_proposer.py; SGLang's NGRAM
# worker; llama.cpp's ngram-simple), so what they accept is the share of the output that repeats its context. Below
# this many accepted tokens per draft the traffic has little to copy (a judgment: the one published n-gram figure,
# SGLang's CI on GSM8K, expects τ ≥ 1.8 at 16 draft tokens on a workload that repeats its prompt's numbers).
LOOKUP_LOW_EXCESS = 0.5
# How sure the method belief must be that a lookup proposer ran before its acceptance is read as the workload's.
LOOKUP_SURE = 0.7


# A lookup proposer drafts only where the context repeats, and vLLM counts a draft only for a step that had one
# (v1/core/sched/scheduler.py `make_spec_decoding_stats` returns at zero draft tokens, 0.32.0): τ is then the
# acceptance of the few drafting steps, and the speed-up is the share of the output they produced. Below this share
# most steps found nothing to copy (a drafter of weights drafts on every decode step: share ≈ 1).
LOOKUP_LOW_SHARE = 0.5
# Fewer generated tokens than this say nothing about the traffic's share.
LOOKUP_MIN_GENERATED = 200


def drafted_share(evidence: EvidenceSet) -> tuple[float, float, float, float] | None:
    """(share, generated, drafts, accepted) from the /metrics counters: the share of the generated tokens that came
    out of drafting steps, (drafts + accepted) / generated — each drafting step yields its accepted tokens and one
    more. None without vLLM's generation counter beside the spec-decode ones."""
    scrape = evidence.get(MetricsScrape)
    if scrape is None or not scrape.engines:
        return None
    rows = scrape.engines
    if not all(isinstance(r.get(k), (int, float)) for r in rows for k in ("generated_tokens", "drafts", "accepted")):
        return None
    generated = sum(float(r["generated_tokens"]) for r in rows)
    drafts = sum(float(r["drafts"]) for r in rows)
    accepted = sum(float(r["accepted"]) for r in rows)
    if generated < LOOKUP_MIN_GENERATED or drafts + accepted > generated * 1.05:
        return None  # too little to say, or counters that do not fit together (another span, a restart)
    return min(1.0, (drafts + accepted) / generated), generated, drafts, accepted


def _p_sparse(evidence: EvidenceSet) -> tuple[float, str]:
    """P(the drafting steps produced under LOOKUP_LOW_SHARE of the output), from the counters' share over the decode
    steps taken (generated − accepted), and the sentence that says it; (0, "") without the counters."""
    got = drafted_share(evidence)
    if got is None:
        return 0.0, ""
    share, generated, drafts, accepted = got
    steps = max(1.0, generated - accepted)
    se = max((share * (1.0 - share) / steps) ** 0.5, 1e-3)
    p = 1.0 - p_above(share, se, LOOKUP_LOW_SHARE)
    per_step = generated / steps
    said = (
        f"{drafts:.0f} of {steps:.0f} decode steps drafted: {share:.0%} of the {generated:.0f} generated tokens came "
        f"from drafting steps, {per_step:.2f} tokens per target step (/metrics counters)"
    )
    return p, said


def _lookup_finding(check, reading, refs, evidence: EvidenceSet):
    """A lookup proposer (n-gram, suffix) with low acceptance, or drafting on few steps: the workload has little
    that repeats — a reading of the traffic, not of a drafter (there is none) or of a band (there is none)."""
    p_lookup = reading.method.p(LOOKUP_METHODS)
    if p_lookup < LOOKUP_SURE:
        return None
    p_low = 1.0 - p_above(reading.tau, reading.se, 1.0 + LOOKUP_LOW_EXCESS)
    p_sparse, sparse = _p_sparse(evidence)
    per_draft = max(0.0, reading.tau - 1.0)
    counts = reading.describe().split(";")[0]  # τ and its interval, without a learned method's band
    what = (
        f"{counts}: {per_draft:.2f} accepted tokens per draft; a lookup proposer "
        f"({reading.method.describe()}) drafts only what repeats in the context"
    )
    details = (what, sparse) if sparse else (what,)
    p_little = max(p_low, p_sparse)
    if p_little < 0.5:
        return check.finding(
            Status.COULD_NOT_CHECK,
            f"could not check: no band for a lookup proposer (its τ is the workload's repetition); "
            f"τ {reading.tau:.2f} ({per_draft:.2f} accepted tokens per draft) shows it finds text to copy",
            refs=refs,
            details=details,
        )
    if p_low >= p_sparse:
        msg = (
            f"τ {reading.tau:.2f}: {per_draft:.2f} accepted tokens per draft — n-gram/suffix drafts only text that "
            f"repeats in the context, and this traffic {'repeats' if p_low >= DECISIVE else 'may repeat'} little "
            f"(P {p_low:.0%} that it is under {LOOKUP_LOW_EXCESS} per draft, from the counts)"
        )
    else:
        msg = (
            f"{sparse.split(' (')[0]} — n-gram/suffix drafts only where the context repeats, and this traffic "
            f"{'repeats' if p_sparse >= DECISIVE else 'may repeat'} little (P {p_sparse:.0%} that under "
            f"{LOOKUP_LOW_SHARE:.0%} of the output came from drafting steps; τ {reading.tau:.2f} is only theirs)"
        )
    why = what if p_low >= p_sparse else sparse
    obs = Observation("lookup:little-repeats", why, refs, strength=p_little * min(1.0, p_lookup / 0.9))
    return check.finding(
        Status.WARN,
        msg,
        refs=refs,
        details=details,
        remedy=LOOKUP_FIX,
        observations=(obs,),
    )


LOOKUP_FIX = (
    "Use a learned drafter (EAGLE-3, MTP, DFlash) for this traffic, or turn speculation off for it; keep n-gram "
    "lookup for workloads that copy from their context (code edits, RAG answers, summaries, long repeated outputs)."
)


class TauVsBaseline(Check):
    id = "tau-vs-baseline"
    area = "acceptance"
    title = "τ against the pair's baseline or the method's band"
    needs = (AcceptanceSummary,)
    wants = (StartupFacts, DrafterFacts, LaunchConfig, Workload, MetricsScrape)
    observations = (
        "tau:at-baseline",
        "tau:below-baseline",
        "tau:far-below-baseline",
        "tau:far-below-pair",
        "tau:dead",
        "temperature:collapse",
        "signature:healthy",
        "signature:small-uniform-drop",
        "signature:uniform-low",
        "lookup:little-repeats",
    )

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(AcceptanceSummary)
        acc = evidence.require(AcceptanceSummary)
        reading = read_level(evidence, acc)
        ctx = pair_context(evidence, in_force(evidence))
        refs = (ev.ref, *[r for r in ctx.refs if r != ev.ref])
        band = reading.band
        lookup = _lookup_finding(self, reading, refs, evidence)
        if lookup is not None:
            return [lookup]
        if reading.verdict == "no-band" or band is None or band.low is None:
            why = (
                band.note
                if band is not None and band.note
                else (f"no reference figures for method {reading.method.describe()}")
            )
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: {why}",
                    refs=(ev.ref,),
                    remedy="Name the drafter (--drafter, or a log with its startup lines) or the method "
                    "(--launch), or add the pair to a baselines file (DFLASH_DOCTOR_BASELINES).",
                )
            ]
        k = reading.k or acc.k or band.k
        # k not in the evidence: the reading mixed the k each likely method is served with; name none as "the" k
        at_k = f"at k={k}" if acc.k or band.basis == "pair" else "at the k they are served with (k is not in the log)"
        temp = ctx.temperature or 0.0
        allowance = SAMPLING_DROP_AT_T1 * min(temp, 1.0)
        ref_tau = band.typical if band.typical is not None else band.low / 0.9
        ref_tau = max(1.0 + 1e-6, ref_tau - allowance)
        rho = excess_ratio(reading.tau, ref_tau)
        if band.basis == "pair" and ctx.baseline:
            who = f"{ctx.baseline.id} ({ctx.baseline.trust}: {ctx.baseline.source})"
        elif reading.method.known:
            who = f"trained {band.method} drafters"
        else:
            who = f"trained drafters of the likely methods ({reading.method.describe()})"
        where = f"{who}: {band.describe()}" + (
            f", lowered by {allowance:.2f} for temperature {temp:g}" if allowance else ""
        )
        detail = f"{reading.describe()}; reference τ {ref_tau:.2f} ({rho:.0%} of its accepted tokens/draft)"
        obs: list[Observation] = []
        p_h = reading.p_healthy if reading.p_healthy is not None else 0.0
        p_bad = max(1.0 - p_h, reading.p_dead)
        if reading.verdict == "healthy":
            status, msg = Status.OK, f"τ {reading.tau:.2f} is where {who} should be (band from {band.low:.2f})"
        elif reading.verdict == "problem":
            far = rho < FAR_BELOW_RHO or reading.p_dead >= DECISIVE
            status = Status.FAIL
            msg = f"τ {reading.tau:.2f} is {'far ' if far else ''}below what {who} reach {at_k} (≥ {band.low:.2f})"
        else:
            status = Status.WARN
            settle = (
                f"; the workload decides it ({reading.workloads()}: name it with --dataset)"
                if reading.dataset_decides
                else "; the method decides it (name it with --launch or --drafter)"
                if reading.method_decides
                else f"; about {reading.drafts_to_settle:,} drafts at this τ would settle it"
                if reading.drafts_to_settle
                else ""
            )
            msg = (
                f"τ {reading.tau:.2f} could be within or below what {who} reach {at_k} (from {band.low:.2f}): "
                f"P(in the band) {p_h:.0%} from these counts{settle}"
            )
        obs.extend(_level_observations(reading, rho, band, ctx, detail, refs, temp))
        # the shape against the pair's reference curve (a known pair only: a method band has no single curve)
        if band.basis == "pair" and ctx.baseline is not None and len(acc.per_position) >= 2:
            kk = min(acc.k or ctx.baseline.k, ctx.baseline.k)
            ref_curve = ctx.baseline.reference_curve(ctx.dataset, kk)
            if allowance:
                a = geometric_ratio(max(1.0 + 1e-6, 1.0 + sum(ref_curve) - allowance), kk)
                ref_curve = [a**i for i in range(1, kk + 1)]
            pp = list(acc.per_position[:kk])
            sig = against_reference(pp, 1.0 + sum(pp), ref_curve)
            if sig is not None:
                obs.append(
                    Observation(f"signature:{sig.id}", f"{sig.description}; {where}", refs, strength=max(p_h, p_bad))
                )
        if ctx.baseline is not None and band.basis == "pair" and ctx.baseline.trust == "yours":
            msg += " — your own reference"
        elif ctx.baseline is not None and band.basis == "pair" and ctx.baseline.trust != "published":
            msg += f" — {ctx.baseline.trust} reference, not a published figure"
        if band.basis != "pair" and (band.extrapolated or band.sparse):
            msg += " — " + ("extrapolated band" if band.extrapolated else "few published figures")
        return [self.finding(status, msg, refs=refs, details=(detail, where), observations=tuple(obs))]
