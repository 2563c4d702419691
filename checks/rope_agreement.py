"""RoPE of the drafter as served vs what it was trained with, and vs its target.

A drafter rotates its own queries and keys with the RoPE its own config declares: that config is what it was
trained with, so a drafter that carries its own YaRN (long-context training) while the target's config has
none is served as trained. What breaks it:

  * a serving override that reaches the drafter. SGLang builds the draft model's config with the same
    `--json-model-override-args` as the target's (ModelConfig.from_server_args, is_draft_model=True, in every
    release read, 0.4.6–0.5.23), so YaRN switched on for the target's long context is applied to a drafter
    trained without it. vLLM builds the draft ModelConfig with its own `hf_overrides` (the speculative config's
    hf_config_override; a dict --hf-overrides stays target-only, 0.8.5–0.33.0 read), so it does not.
  * a drafter trained for another target: a rope_theta different from the target's is the sign of it (drafter
    configs are written from their target's); weaker evidence, since the drafter itself runs as trained.
  * scaling added to a drafter's config after training. A drafter config declaring scaling its target lacks is
    either that or long-context training (a real speculators DFlash drafter declares YaRN ×64 from 4096): weak
    evidence, for the acceptance curve to settle.
"""

from __future__ import annotations

import json

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.model_facts import DrafterFacts, RopeFacts, TargetFacts
from dflash_doctor.evidence.payloads import LaunchConfig
from dflash_doctor.models.facts import Fields, read_rope

ROPE_KEYS = ("rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor")
# How far a theta that differs from the target's implicates the pair: the drafter still runs as trained, so
# this is a sign of a drafter trained for another target, not a serving fault.
THETA_STRENGTH = 0.5
# A drafter whose config declares scaling its target's lacks: trained so (long-context drafters carry their own
# YaRN), or edited after training (YaRN on a drafter trained without it: ~3 % acceptance). The config alone
# cannot tell; the acceptance curve can.
SCALING_STRENGTH = 0.35


class RopeAgreement(Check):
    id = "rope-agreement"
    area = "pairing"
    title = "Drafter served with the RoPE it was trained with"
    needs = (DrafterFacts, TargetFacts)
    wants = (LaunchConfig,)
    observations = ("rope:mismatch", "rope:ok")

    def run(self, evidence: EvidenceSet):
        dev, tev = evidence.require_item(DrafterFacts), evidence.require_item(TargetFacts)
        dr, tr = dev.value.rope, tev.value.rope
        refs: tuple[str, ...] = (dev.ref, tev.ref)
        launch = evidence.get(LaunchConfig) if evidence.has(LaunchConfig) else None
        notes: list[str] = []
        bad: list[tuple[str, float]] = []

        flag, override = _rope_override(launch)
        if override:
            lref = evidence.ref(LaunchConfig)
            refs = refs + ((lref,) if lref else ())
            if launch is not None and launch.engine == "sglang":
                served = _apply(dr, override)
                changed = _differences(dr, served)
                if changed:
                    bad.append(
                        (
                            f"SGLang applies {flag} to the draft model too: the drafter is served with "
                            f"{'; '.join(changed)} — not what its config (its training) says",
                            1.0,
                        )
                    )
            else:
                notes.append(
                    f"{flag} changes the target's RoPE only: vLLM builds the draft model's config with its "
                    "own overrides, so the drafter keeps its config's RoPE"
                )

        if dr.theta is None or tr.theta is None:
            if bad:
                return [self._fail(bad, notes, refs)]
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: rope_theta missing from "
                    + ("the drafter" if dr.theta is None else "the target")
                    + " config",
                    refs=refs,
                )
            ]
        if abs(dr.theta - tr.theta) > 1e-6 * max(dr.theta, tr.theta):
            bad.append(
                (
                    f"rope_theta {dr.theta:g} (drafter) vs {tr.theta:g} (target): drafter configs are written "
                    "from their target's, so this drafter was probably trained for another target (or its "
                    "config was edited)",
                    THETA_STRENGTH,
                )
            )
        ds, ts = _kind(dr.scaling), _kind(tr.scaling)
        if ds != ts and ds is not None:
            bad.append(
                (
                    f"the drafter's config declares rope scaling {_describe(dr.scaling)}, its target's "
                    f"{_describe(tr.scaling)}: right if the drafter was trained with it (long-context training), "
                    "the cause of near-zero acceptance if it was added to a drafter trained without it — "
                    "its training recipe or model card decides",
                    SCALING_STRENGTH,
                )
            )
        elif ds != ts:
            notes.append(
                f"rope scaling {_describe(dr.scaling)} (drafter) vs {_describe(tr.scaling)} (target): the "
                "drafter runs its own attention with the RoPE its config declares; scaling on the target "
                "alone is not a fault by itself"
            )
        if (dr.partial_rotary_factor or 1.0) != (tr.partial_rotary_factor or 1.0):
            notes.append(
                f"partial_rotary_factor {dr.partial_rotary_factor or 1.0:g} (drafter) vs "
                f"{tr.partial_rotary_factor or 1.0:g} (target): expected — the drafter has its own "
                "attention stack and rotates with its own setting"
            )
        if bad:
            return [self._fail(bad, notes, refs)]
        msg = (
            f"rope_theta {dr.theta:g} on both; the drafter is served with its own RoPE "
            f"(scaling {_describe(dr.scaling)})"
        )
        return [
            self.finding(
                Status.OK, msg, refs=refs, details=tuple(notes), observations=(Observation("rope:ok", msg, refs),)
            )
        ]

    def _fail(self, bad: list[tuple[str, float]], notes: list[str], refs: tuple[str, ...]):
        msg = "RoPE: " + "; ".join(text for text, _ in bad)
        strength = max(s for _, s in bad)
        return self.finding(
            Status.FAIL if strength >= 1.0 else Status.WARN,
            msg,
            refs=refs,
            details=tuple(notes),
            remedy="Serve the drafter with the RoPE it was trained with: on SGLang, put long-context "
            "RoPE for the target in the target's own config (or a target-only override) "
            "rather than --json-model-override-args, which reaches the drafter; for a theta "
            "that differs from the target's, check the drafter was trained for this target.",
            observations=(Observation("rope:mismatch", msg, refs, strength=strength),),
        )


def _rope_override(launch) -> tuple[str | None, dict]:
    """(flag, the RoPE keys it sets) of the launch's model-config override, if any."""
    if launch is None:
        return None, {}
    for key, flag in (("json_model_override_args", "--json-model-override-args"), ("hf_overrides", "--hf-overrides")):
        raw = launch.args.get(key)
        if not isinstance(raw, str) or not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            text: dict = obj["text_config"] if isinstance(obj.get("text_config"), dict) else {}
            found = {k: v for src in (obj, text) for k, v in src.items() if k in ROPE_KEYS}
            if found:
                return flag, found
    return None, {}


def _apply(own: RopeFacts, override: dict) -> RopeFacts:
    """The drafter's RoPE with `override` laid over its own (as transformers would read the merged config)."""
    cfg: dict = {}
    if own.theta is not None:
        cfg["rope_theta"] = own.theta
    if own.scaling:
        cfg["rope_scaling"] = dict(own.scaling)
    if own.partial_rotary_factor is not None:
        cfg["partial_rotary_factor"] = own.partial_rotary_factor
    if "rope_parameters" in override:
        cfg.pop("rope_scaling", None)
    cfg.update(override)
    return read_rope(Fields(cfg, []))


def _differences(own: RopeFacts, served: RopeFacts) -> list[str]:
    out = []
    if served.theta is not None and own.theta is not None and abs(served.theta - own.theta) > 1e-6 * own.theta:
        out.append(f"rope_theta {served.theta:g} instead of {own.theta:g}")
    if _kind(served.scaling) != _kind(own.scaling) or _factor(served.scaling) != _factor(own.scaling):
        out.append(f"rope scaling {_describe(served.scaling)} instead of {_describe(own.scaling)}")
    return out


def _kind(scaling) -> str | None:
    if not scaling:
        return None
    t = scaling.get("rope_type") or scaling.get("type")
    return str(t) if t not in (None, "default") else None


def _factor(scaling):
    return scaling.get("factor") if isinstance(scaling, dict) and _kind(scaling) else None


def _describe(scaling) -> str:
    kind = _kind(scaling)
    if kind is None:
        return "none"
    factor = _factor(scaling)
    orig = scaling.get("original_max_position_embeddings")
    return (
        kind
        + (f" ×{factor:g}" if isinstance(factor, (int, float)) else "")
        + (f" from {orig}" if isinstance(orig, int) else "")
    )
