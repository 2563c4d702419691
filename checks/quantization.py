"""Is the target quantised with a rotation (QuaRot-style) the drafter was not trained on?

Plain FP8/NVFP4 costs only a few percent of τ; a rotated basis collapses acceptance unless the
drafter's fc is counter-rotated (root-causes.md, cause 11)."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status
from dflash_doctor.rank.baselines import field_of

# quant_method names whose weights live in a rotated (Hadamard / learned-rotation) basis.
ROTATION_METHODS = {"quarot", "spinquant", "quip", "quip#", "quipsharp", "ostquant", "flatquant", "duquant"}
ROTATION_KEYS = ("rotation", "rotate", "hadamard", "had_rotation", "online_rotation")


def quantization_config(target) -> tuple[bool, dict | None]:
    """(known, config): known=False when the target facts do not expose the config at all."""
    for holder in (target, field_of(target, "config", "raw", "raw_config", "config_dict")):
        if holder is None:
            continue
        q = field_of(holder, "quantization_config", "quantization")
        if q is not None:
            return True, q if isinstance(q, dict) else {"quant_method": str(q)}
        text = field_of(holder, "text_config")
        q = field_of(text, "quantization_config")
        if q is not None:
            return True, q if isinstance(q, dict) else {"quant_method": str(q)}
        if isinstance(holder, dict) and ("architectures" in holder or "model_type" in holder):
            return True, None  # a whole config without quantization_config: not quantised
    return False, None


def is_rotated(q: dict) -> bool:
    method = str(q.get("quant_method", "")).lower()
    if method in ROTATION_METHODS:
        return True
    for key, val in q.items():
        if any(r in str(key).lower() for r in ROTATION_KEYS) and val not in (None, False, "", "none", [], {}):
            return True
    return False


class TargetQuantization(Check):
    id = "target-quantization"
    area = "pairing"
    title = "Target quantisation (rotation-based schemes break drafter features)"
    needs = (Kind.TARGET,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.TARGET)
        known, q = quantization_config(ev.value)
        if not known:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the target facts do not include its "
                                 "quantization_config", refs=(ev.ref,))]
        if q is None:
            return [self.finding(Status.OK, "the target is not quantised", refs=(ev.ref,),
                                 observations=(Observation("quant:plain", "no quantization_config", (ev.ref,)),))]
        method = str(q.get("quant_method", "unknown"))
        if is_rotated(q):
            return [self.finding(Status.FAIL, f"the target is quantised with a rotation ({method}): drafter features "
                                 "arrive in a rotated basis", refs=(ev.ref,),
                                 remedy="Counter-rotate the drafter's fc input, or serve an unrotated target.",
                                 observations=(Observation("quant:rotation", f"quant_method {method}", (ev.ref,)),))]
        return [self.finding(Status.OK, f"the target is quantised without rotation ({method}): a few percent of τ at most",
                             refs=(ev.ref,), observations=(Observation("quant:plain", f"quant_method {method}", (ev.ref,)),))]
