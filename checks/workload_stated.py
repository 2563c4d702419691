"""What the requests looked like (temperature, thinking mode, benchmark prompts), as the user stated
it with --temperature / --thinking / --dataset. Unstated facts are not assumed."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.payloads import Workload
from dflash_doctor.interpret.baselines import normalise_dataset

RANDOM_PROMPT_SETS = {"random", "randomtokens", "random-tokens", "sonnet-random"}


class WorkloadStated(Check):
    id = "workload"
    area = "acceptance"
    title = "Request workload (temperature, thinking mode, prompts)"
    needs = (Workload,)
    observations = ("temperature:positive", "temperature:zero", "thinking:on", "workload:random-prompts")

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(Workload)
        w = evidence.require(Workload)
        out = []
        temp = w.temperature
        if isinstance(temp, (int, float)):
            if temp > 0:
                out.append(
                    self.finding(
                        Status.WARN,
                        f"requests sample at temperature {temp:g}: acceptance is lower "
                        "than the greedy published τ, and collapses if proposals and acceptance rule disagree",
                        refs=(ev.ref,),
                        observations=(Observation("temperature:positive", f"temperature {temp:g}", (ev.ref,)),),
                    )
                )
            else:
                out.append(
                    self.finding(
                        Status.OK,
                        "greedy requests (temperature 0)",
                        refs=(ev.ref,),
                        observations=(Observation("temperature:zero", "temperature 0", (ev.ref,)),),
                    )
                )
        thinking = w.thinking
        if thinking is True:
            out.append(
                self.finding(
                    Status.WARN,
                    "thinking mode is on: drafters trained without thinking traces accept less",
                    refs=(ev.ref,),
                    remedy="Disable thinking (chat_template_kwargs enable_thinking=false) "
                    "or use a drafter trained with thinking traces.",
                    observations=(Observation("thinking:on", "requests run with thinking on", (ev.ref,)),),
                )
            )
        elif thinking is False:
            out.append(self.finding(Status.OK, "thinking mode is off", refs=(ev.ref,)))
        dataset = w.dataset
        if isinstance(dataset, str) and normalise_dataset(dataset) in {
            normalise_dataset(x) for x in RANDOM_PROMPT_SETS
        }:
            out.append(
                self.finding(
                    Status.WARN,
                    f"the benchmark prompts are random tokens ({dataset}): acceptance "
                    "measured on them says little about real traffic",
                    refs=(ev.ref,),
                    observations=(Observation("workload:random-prompts", f"dataset {dataset}", (ev.ref,)),),
                )
            )
        elif isinstance(dataset, str):
            out.append(self.finding(Status.OK, f"workload: {dataset}", refs=(ev.ref,)))
        if not out:
            out.append(
                self.finding(
                    Status.COULD_NOT_CHECK,
                    "could not check: the workload evidence states nothing about temperature, thinking mode or prompts",
                    refs=(ev.ref,),
                )
            )
        return out
