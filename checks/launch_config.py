"""Did the launch command carry a usable speculative config? (The method against the drafter is
launch-method's question.)"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.payloads import LaunchConfig


class SpeculativeConfigParses(Check):
    id = "launch-config"
    area = "launch"
    title = "Speculative config parses and names the drafter's method"
    needs = (LaunchConfig,)
    observations = ("launch:invalid-spec-config",)

    def run(self, evidence: EvidenceSet):
        ev = evidence.item(LaunchConfig)
        launch = evidence.get(LaunchConfig)
        error = launch.spec_error
        if error:
            fix = launch.spec_fix
            return [
                self.finding(
                    Status.FAIL,
                    error.split(" — ")[0],
                    refs=(ev.ref,),
                    remedy=(
                        f"Use {fix}" if fix else "Quote the JSON in single quotes so the shell keeps its double quotes."
                    ),
                    details=(f"as the server received it: {launch.spec_text}",),
                    observations=(Observation("launch:invalid-spec-config", error.split(" — ")[0], (ev.ref,)),),
                )
            ]
        if not launch.speculative:
            return [
                self.finding(
                    Status.WARN,
                    "the launch command carries no speculative config: spec decode is off",
                    refs=(ev.ref,),
                    remedy='add --speculative-config \'{"method": …, "model": …}\'',
                )
            ]
        return [
            self.finding(
                Status.OK,
                f"speculative config: method {launch.method}, drafter {launch.drafter}, "
                f"k {launch.num_speculative_tokens}",
                refs=(ev.ref,),
            )
        ]
