"""Where the drafter comes from: a training run's own checkpoint, or a checkpoint a publisher released with measured
acceptance. The two fail differently: a self-trained drafter is where weak training and training bugs live (features
from the wrong layer or position, a template or RoPE setting unlike the target's), and such a bug cuts the curve
after position 1 as an engine bug does; a published drafter comes with the figures its authors measured.

Read from every name the evidence gives the drafter (the launch, the log's startup lines, the drafter config's
location). Self-trained: a path that a training run writes (`checkpoint-1200`, `epoch_9`, `outputs/…`, `runs/…`).
Published: a hub id whose organisation published a drafter this project holds a measured figure for
(rank/reference.toml pairs, rank/baselines.toml), or a baseline's own name. Anything else says nothing.
"""

from __future__ import annotations

import re
from functools import cache

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import StartupFacts
from dflash_doctor.evidence.model_facts import DrafterFacts
from dflash_doctor.evidence.payloads import LaunchConfig

# Path parts a training script writes its checkpoints under (HF Trainer `checkpoint-N`, SpecForge/EAGLE `epoch_N`,
# `state_N`, `step_N`, the usual output folders).
_TRAINING = re.compile(
    r"(?:^|[/\\_.-])(?:checkpoint|ckpt|epoch|state|step|global_step|iter)[-_]?\d+(?:$|[/\\_.-])"
    r"|(?:^|[/\\])(?:outputs?|runs?|train(?:ing)?_?\w*|exp(?:eriments?)?|work_dirs?|save[sd]?)(?:[/\\]|$)",
    re.IGNORECASE,
)
_HUB_ID = re.compile(r"^(?P<org>[A-Za-z0-9][\w.-]{0,95})/(?P<name>[\w.-]{1,95})$")
_ORG_IN_TEXT = re.compile(r"\b([A-Za-z0-9][\w.-]{1,40})/[A-Za-z0-9][\w.-]*")


@cache
def _publishers() -> tuple[frozenset[str], frozenset[str]]:
    """(organisations, drafter names) with a measured figure in the packaged reference data."""
    from dflash_doctor.interpret.baselines import default_baselines
    from dflash_doctor.interpret.reference import default_reference

    orgs: set[str] = set()
    names: set[str] = set()
    for f in default_reference().figures:
        orgs.update(m.group(1).lower() for m in _ORG_IN_TEXT.finditer(f.pair))
    for b in default_baselines().drafters:
        names.update(n.lower() for n in (b.id, *b.aliases))
        names.add(b.id.split("/")[-1].lower())
        if "/" in b.id:
            orgs.add(b.id.split("/")[0].lower())
    return frozenset(orgs), frozenset(names)


def _said(evidence: EvidenceSet) -> list[tuple[str, str | None]]:
    """(name, evidence ref) of every name the evidence gives the drafter."""
    out = []
    for kind, value in ((LaunchConfig, evidence.get(LaunchConfig)), (StartupFacts, evidence.get(StartupFacts))):
        name = getattr(value, "drafter", None) if value is not None else None
        if isinstance(name, str) and name.strip():
            out.append((name.strip(), evidence.ref(kind)))
    d = evidence.get(DrafterFacts)
    if d is not None and isinstance(d.source, str) and d.source.strip():
        out.append((d.source.strip(), evidence.ref(DrafterFacts)))
    named = evidence.named(DrafterFacts)
    if named and not any(n == named for n, _ in out):
        out.append((named, evidence.ref(DrafterFacts)))
    return out


def origin(name: str) -> str | None:
    """'self-trained', 'published' or None for one drafter name."""
    if _TRAINING.search(name.replace("\\", "/")):
        return "self-trained"
    orgs, names = _publishers()
    base = name.rstrip("/").split("/")[-1].lower()
    m = _HUB_ID.match(name.strip())
    if (m and m["org"].lower() in orgs) or base in names or name.lower() in names:
        return "published"
    return None


class DrafterOrigin(Check):
    id = "drafter-origin"
    area = "drafter"
    title = "Where the drafter comes from (a training run or a published checkpoint)"
    wants = (LaunchConfig, StartupFacts, DrafterFacts)
    observations = ("drafter:self-trained", "drafter:published")

    def run(self, evidence: EvidenceSet):
        said = _said(evidence)
        if not said:
            return [self.finding(Status.NOT_APPLICABLE, "nothing names the drafter")]
        found = [(name, ref, origin(name)) for name, ref in said]
        trained = [(n, r) for n, r, o in found if o == "self-trained"]
        published = [(n, r) for n, r, o in found if o == "published"]
        if trained:
            name, ref = trained[0]
            msg = f"{name!r} is a training run's checkpoint (self-trained drafter)"
            obs = Observation("drafter:self-trained", msg, (ref,) if ref else ())
            return [self.finding(Status.OK, msg, refs=obs.refs, observations=(obs,))]
        if published:
            name, ref = published[0]
            msg = f"{name!r} is a published drafter checkpoint"
            obs = Observation("drafter:published", msg, (ref,) if ref else ())
            return [self.finding(Status.OK, msg, refs=obs.refs, observations=(obs,))]
        names = ", ".join(repr(n) for n, _, _ in found)
        return [self.finding(Status.COULD_NOT_CHECK, f"could not tell where the drafter {names} comes from")]
