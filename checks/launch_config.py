"""Did the launch command carry a usable speculative config? (The method against the drafter is
launch-method's question.)"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary, StartupFacts
from dflash_doctor.evidence.payloads import LaunchConfig


def _running(evidence: EvidenceSet) -> str | None:
    """What the log shows running, when it shows speculative decoding at work: the launch string given is then a
    claim about the launch (often re-quoted in copying), and the running configuration overrides it."""
    acc = evidence.get(AcceptanceSummary)
    if acc is None or not acc.drafts or acc.drafts <= 1.0:
        return None
    st = evidence.get(StartupFacts)
    bits = [f"τ {acc.mean_acceptance_length:.2f} over {acc.drafts:,.0f} drafts"]
    if st is not None and st.method:
        bits.append(f"method {st.method}")
    k = (st.num_speculative_tokens if st is not None else None) or acc.k
    if k:
        bits.append(f"k = {k}")
    return ", ".join(bits)


class SpeculativeConfigParses(Check):
    id = "launch-config"
    area = "launch"
    title = "Speculative config parses and names the drafter's method"
    needs = (LaunchConfig,)
    wants = (AcceptanceSummary, StartupFacts)
    observations = ("launch:invalid-spec-config",)

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(LaunchConfig)
        launch = evidence.require(LaunchConfig)
        error = launch.spec_error
        running = _running(evidence) if error else None
        if error and running:
            return [
                self.finding(
                    Status.WARN,
                    f"the launch text given does not parse ({error.split(' — ')[0]}), but the log shows speculative "
                    f"decoding running ({running}): the text was changed in copying; the log's configuration is what "
                    "ran",
                    refs=(ev.ref, evidence.ref(AcceptanceSummary) or ev.ref),
                    details=(f"as given: {launch.spec_text}",),
                )
            ]
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
            running = _running(evidence)
            if launch.spec_elsewhere:
                return [
                    self.finding(
                        Status.COULD_NOT_CHECK,
                        f"the speculative config is not on the command line: it may be in {launch.spec_elsewhere} "
                        "(not read: its path is the server's)"
                        + (f"; the log shows speculative decoding running ({running})" if running else ""),
                        refs=(ev.ref,),
                        remedy="paste that file's speculative settings into the launch text, or give the log "
                        "(its startup lines name what ran)",
                    )
                ]
            if running:
                return [
                    self.finding(
                        Status.WARN,
                        "the launch text given carries no speculative config, but the log shows speculative decoding "
                        f"running ({running}): the text is not the command that ran, or the config came from "
                        "elsewhere; the log's configuration is what ran",
                        refs=(ev.ref, evidence.ref(AcceptanceSummary) or ev.ref),
                    )
                ]
            flag = {
                "sglang": "--speculative-algorithm ALGO --speculative-draft-model-path DRAFTER",
                "llama.cpp": "-md DRAFTER.gguf --spec-type draft-simple",
            }.get(launch.engine or "", '--speculative-config \'{"method": …, "model": …}\'')
            return [
                self.finding(
                    Status.WARN,
                    "the launch command carries no speculative config: spec decode is off",
                    refs=(ev.ref,),
                    remedy=f"add {flag}",
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
