"""Was speculative decoding launched the way the drafter needs? (valid JSON config, matching method)."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status


def _get(obj, name, default=None):
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def drafter_family(drafter) -> str | None:
    """'dflash' | 'eagle3' | 'eagle' | 'medusa' | 'mtp' from a drafter's config (raw dict or DrafterFacts)."""
    fam = _get(drafter, "family")
    if isinstance(fam, str):
        return fam.lower()
    config = _get(drafter, "config") or {}
    archs = " ".join(_get(config, "architectures") or []).lower()
    if "dflash" in archs or _get(config, "speculators_model_type") == "dflash" or "dflash_config" in config:
        return "dflash"
    if "eagle3" in archs or _get(config, "speculators_model_type") == "eagle3":
        return "eagle3"
    if "eagle" in archs:
        return "eagle"
    if "medusa" in archs:
        return "medusa"
    return None


# Which launch methods serve which drafter family correctly.
_METHODS = {"dflash": {"dflash", "dflash2"}, "eagle3": {"eagle3"}, "eagle": {"eagle"}, "medusa": {"medusa"}}


class LaunchConfig(Check):
    id = "launch-config"
    area = "launch"
    title = "Speculative config parses and names the drafter's method"
    needs = (Kind.LAUNCH,)
    wants = (Kind.DRAFTER,)

    def run(self, evidence: EvidenceSet):
        ev = evidence.get(Kind.LAUNCH)
        launch = ev.value
        error = _get(launch, "spec_error")
        if error:
            fix = _get(launch, "spec_fix")
            return [self.finding(
                Status.FAIL, error.split(" — ")[0], refs=(ev.ref,),
                remedy=(f"Use {fix}" if fix else "Quote the JSON in single quotes so the shell keeps its double quotes."),
                details=(f"as the server received it: {_get(launch, 'spec_text')}",),
                observations=(Observation("launch:invalid-spec-config", error.split(" — ")[0], (ev.ref,)),))]
        method = _get(launch, "method")
        if not _get(launch, "speculative"):
            return [self.finding(Status.WARN, "the launch command carries no speculative config: spec decode is off",
                                 refs=(ev.ref,), remedy="add --speculative-config '{\"method\": …, \"model\": …}'")]
        out = [self.finding(Status.OK, f"speculative config: method {method}, drafter {_get(launch, 'drafter')}, "
                                       f"k {_get(launch, 'num_speculative_tokens')}", refs=(ev.ref,))]
        dev = evidence.get(Kind.DRAFTER)
        family = drafter_family(dev.value) if dev is not None else None
        if family is None or method is None:
            return out
        refs = (ev.ref, dev.ref)
        if method in _METHODS.get(family, {family}):
            out.append(self.finding(Status.OK, f"method {method} matches the {family} drafter", refs=refs,
                                    observations=(Observation("method:ok", f"launched as {method}, drafter is {family}", refs),)))
        else:
            want = sorted(_METHODS.get(family, {family}))[0]
            out.append(self.finding(
                Status.FAIL, f"launched with method {method!r} but the drafter is {family}", refs=refs,
                remedy=f"relaunch with \"method\": \"{want}\" in --speculative-config",
                observations=(Observation("method:mismatch", f"method {method} with a {family} drafter", refs),)))
        return out
