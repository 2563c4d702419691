"""Advice on num_speculative_tokens (k) from the measured per-position curve.

Cost model (baselines.toml [cost_model], all in units of one plain target decode step):
    E(k)    = 1 + Σ_{i=1..k} rate_i          expected tokens per step (rates are vLLM's unconditional ones)
    cost(k) = 1 + v·k + d(k)                 v = verify_per_draft_position; d(k) = one_pass_draft for one-pass
                                             drafters (DFlash, Medusa: the block is drafted in one forward,
                                             flat in k), chained_draft_per_position·k for chained ones
                                             (EAGLE, EAGLE-3, MTP)
    throughput(k) = E(k) / cost(k);  k = 0 means speculative decoding off (throughput 1).
The rates for positions ≤ k do not depend on k (a shorter block is a prefix of the longer one), so
every k up to the served one is scored from measured data; larger k cannot be, and is not advised.
Never advised below the minimum sample.
"""

from __future__ import annotations

from typing import Any

from ..evidence import EvidenceSet
from ..evidence.acceptance import AcceptanceSummary
from ..evidence.serialise import to_jsonable
from .baselines import Baselines, in_force, pair_context

FORMULA = (
    "throughput(k) = E(k) / cost(k); E(k) = 1 + Σ_{i≤k} rate_i; cost(k) = 1 + v·k + d(k), "
    "d = one-pass draft cost (flat in k) or chained per-position cost × k"
)
# Below this relative gain, changing k is not worth recommending.
MIN_GAIN = 0.02


def advise_k(evidence: EvidenceSet, baselines: Baselines | None = None) -> dict[str, Any] | None:
    acc = evidence.get(AcceptanceSummary)
    if acc is None:
        return None
    if not acc.per_position:
        return {"advised": False, "reason": "the evidence has no per-position rates"}
    if not acc.sufficient:
        return {
            "advised": False,
            "reason": f"only {acc.drafts:.0f} drafts (minimum {acc.min_drafts}): "
            "the curve is noise, so no k is advised",
        }
    pp = list(acc.per_position)
    if not pp or not acc.k:
        return {"advised": False, "reason": "the evidence has no per-position rates"}
    baselines = baselines or in_force(evidence)
    cost = baselines.cost
    ctx = pair_context(evidence, baselines)
    one_pass = cost.is_one_pass(ctx.method)
    assumed = ""
    if one_pass is None:
        one_pass = False
        assumed = f"method {ctx.method or 'unknown'}: assumed chained (the costlier case)"
    k_now = acc.k
    table = []
    for k in range(0, k_now + 1):
        e = 1.0 + sum(pp[:k])
        c = cost.step_cost(k, one_pass) if k else 1.0
        table.append(
            {"k": k, "expected_tokens_per_step": round(e, 4), "step_cost": round(c, 4), "throughput": round(e / c, 4)}
        )
    best = max(table, key=lambda r: (r["throughput"], -r["k"]))
    now = table[k_now]
    gain = best["throughput"] / now["throughput"] - 1.0
    advice: dict[str, Any] = {
        "advised": True,
        "current_k": k_now,
        "recommended_k": best["k"] if gain >= MIN_GAIN else k_now,
        "expected_gain_pct": round(100 * gain, 1) if gain >= MIN_GAIN else 0.0,
        "throughput_vs_no_speculation": round(best["throughput"] if gain >= MIN_GAIN else now["throughput"], 3),
        "drafter_kind": "one-pass" if one_pass else "chained",
        "method": ctx.method,
        "cost_model": to_jsonable(cost),
        "formula": FORMULA,
        "table": table,
        "notes": [],
    }
    if assumed:
        advice["notes"].append(assumed)
    if advice["recommended_k"] == 0:
        advice["notes"].append(
            "at this acceptance, speculative decoding costs more than it saves: fix the cause first, or turn it off"
        )
    if one_pass and ctx.baseline and k_now < ctx.baseline.k:
        advice["notes"].append(
            f"larger k cannot be scored from this curve; the drafter was trained with "
            f"k = {ctx.baseline.k} (block size − 1)"
        )
    advice["summary"] = summary(advice)
    return advice


def summary(a: dict[str, Any]) -> str:
    if not a.get("advised"):
        return f"no advice on k: {a['reason']}"
    if a["recommended_k"] == a["current_k"]:
        return f"k = {a['current_k']} is within {int(MIN_GAIN * 100)} % of the best throughput under the cost model"
    return (
        f"k = {a['recommended_k']} instead of {a['current_k']}: about {a['expected_gain_pct']:+.1f} % tokens/s "
        f"under the cost model ({a['drafter_kind']} drafter)"
    )
