"""RoPE of drafter vs target: theta and scaling must match what the drafter was trained with."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Kind, Observation, Status


class RopeAgreement(Check):
    id = "rope-agreement"
    area = "pairing"
    title = "Drafter and target RoPE agree"
    needs = (Kind.DRAFTER, Kind.TARGET)
    observations = ("rope:mismatch", "rope:ok")

    def run(self, evidence: EvidenceSet):
        dev, tev = evidence.get(Kind.DRAFTER), evidence.get(Kind.TARGET)
        dr, tr = dev.value.rope, tev.value.rope
        refs = (dev.ref, tev.ref)
        if dr.theta is None or tr.theta is None:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: rope_theta missing from "
                                 + ("the drafter" if dr.theta is None else "the target") + " config", refs=refs)]
        bad, notes = [], []
        if abs(dr.theta - tr.theta) > 1e-6 * max(dr.theta, tr.theta):
            bad.append(f"rope_theta {dr.theta:g} (drafter) vs {tr.theta:g} (target)")
        ds, ts = _kind(dr.scaling), _kind(tr.scaling)
        if ds != ts:
            bad.append(f"rope scaling {ds or 'none'} (drafter) vs {ts or 'none'} (target)")
        if (dr.partial_rotary_factor or 1.0) != (tr.partial_rotary_factor or 1.0):
            notes.append(f"partial_rotary_factor {dr.partial_rotary_factor or 1.0:g} (drafter) vs "
                         f"{tr.partial_rotary_factor or 1.0:g} (target): expected — the drafter has its own "
                         "attention stack and rotates with its own setting")
        if bad:
            msg = "RoPE differs: " + "; ".join(bad)
            return [self.finding(Status.FAIL, msg, refs=refs, details=tuple(notes),
                                 remedy="Serve the drafter with the RoPE it was trained with (no YaRN/rope_scaling "
                                        "override on a drafter trained without it).",
                                 observations=(Observation("rope:mismatch", msg, refs),))]
        msg = f"rope_theta {dr.theta:g}, scaling {ds or 'none'} on both"
        return [self.finding(Status.OK, msg, refs=refs, details=tuple(notes),
                             observations=(Observation("rope:ok", msg, refs),))]


def _kind(scaling) -> str | None:
    if not scaling:
        return None
    t = scaling.get("rope_type") or scaling.get("type")
    return str(t) if t not in (None, "default") else None
