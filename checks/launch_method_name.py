"""The launch method against the method the drafter's own name states, when its config is not at hand.

Published drafters name their method (`…_eagle3`, `EAGLE3-LLaMA3.1-…`, `…-DFlash-b16`, `sglang-EAGLE-…`): an
EAGLE-3 head launched as EAGLE (SGLang's `--speculative-algorithm EAGLE`, vLLM's `"method": "eagle"`) is never
given the three-layer features it was trained on and drafts garbage without an error. A name is a weaker witness
than the config's architectures (launch-method, which decides whenever the drafter is given), so its observations
weigh less.
"""

from __future__ import annotations

import re

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status, kind_of
from dflash_doctor.evidence.acceptance import StartupFacts
from dflash_doctor.evidence.model_facts import DrafterFacts
from dflash_doctor.evidence.payloads import LaunchConfig
from dflash_doctor.interpret.method import SGLANG_EAGLE, family
from dflash_doctor.models.launch_view import launch_field, launch_method

# A method word in the drafter's repository or folder name, most specific first. P-EAGLE and DSpark drafters are
# served under other methods' names (eagle3 + parallel_drafting; dspark), so their names decide nothing here.
_NAME_WORDS = (
    (re.compile(r"p-?eagle|dspark", re.I), None),
    (re.compile(r"eagle[-_]?3", re.I), "eagle3"),
    (re.compile(r"dflash", re.I), "dflash"),
    (re.compile(r"eagle(?![-_]?\d)", re.I), "eagle"),
    (re.compile(r"(?<![a-z])(?:mtp|nextn)(?![a-z])", re.I), "mtp"),
    (re.compile(r"medusa", re.I), "medusa"),
)


def method_in_name(name: str) -> str | None:
    """The method family the drafter's last two path parts name, or None (no word, or a word that decides nothing)."""
    tail = "/".join(name.rstrip("/").split("/")[-2:])
    for rx, method in _NAME_WORDS:
        if rx.search(tail):
            return method
    return None


class LaunchMethodName(Check):
    id = "launch-method-name"
    area = "launch"
    title = "Launch method matches the method the drafter's name states"
    wants = (LaunchConfig, StartupFacts, DrafterFacts)
    observations = ("method:name-ok", "method:name-mismatch")

    def run(self, evidence: EvidenceSet):
        if evidence.has(DrafterFacts):
            return [self.finding(Status.NOT_APPLICABLE, "the drafter's config is read: launch-method decides")]
        method, written, mev = launch_method(evidence)
        drafter, dev = launch_field(evidence, "drafter")
        if method is None or not isinstance(drafter, str) or not drafter:
            if not evidence.has(LaunchConfig):  # (folded with the other checks that wait for the launch)
                launch = kind_of(LaunchConfig).value
                return [
                    self.finding(
                        Status.COULD_NOT_CHECK,
                        f"could not check: {launch}: {evidence.why_missing(LaunchConfig)}",
                        waiting_for=(launch,),
                    )
                ]
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: the launch names no method or no drafter model",
                )
            ]
        named = method_in_name(drafter)
        launched = family(method) or method
        refs = tuple(dict.fromkeys(e.ref for e in (mev, dev) if e is not None))
        if named is None or launched in ("draft", "ngram", "suffix"):
            return [
                self.finding(
                    Status.NOT_APPLICABLE, f"the drafter's name ({drafter}) states no method this check compares"
                )
            ]
        engine = (evidence.get(StartupFacts) or evidence.get(LaunchConfig) or LaunchConfig(None, None)).engine
        accepted = (
            SGLANG_EAGLE if launched == "eagle" and (engine or "") == "sglang" and named == "mtp" else (launched,)
        )
        if named in accepted:
            msg = f"launched as {written!r}, as the drafter's name ({drafter}) says it is {named}"
            return [self.finding(Status.OK, msg, refs=refs, observations=(Observation("method:name-ok", msg, refs),))]
        msg = (
            f"launched as {written!r}, but the drafter's name ({drafter}) says it is {named}: a drafter served under "
            "another method's name is fed other features than it was trained on"
        )
        return [
            self.finding(
                Status.WARN,
                msg,
                refs=refs,
                remedy=f"Launch with method {named!r} if the drafter is one (its config's architectures decide: "
                f"`dflash-doctor inspect-model {drafter}`).",
                observations=(Observation("method:name-mismatch", msg, refs),),
            )
        ]
