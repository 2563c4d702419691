"""The usual suspects, answered: what users commonly blame for low acceptance (prefix caching, eager mode, the
tensor-parallel size, a large k) stated by the launch, so the ranking can cite the evidence against them
(root-causes.md, "Not causes, though often blamed"). The undertrained-drafter suspect is answered by the curve,
the model card and the probe."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.evidence.model_facts import DrafterFacts
from dflash_doctor.evidence.payloads import TRUE_WORDS, LaunchConfig
from dflash_doctor.models.launch_view import launch_k

# k beyond which users start to suspect "too many speculative tokens" for a chained drafter (DFlash blocks
# are drafted in one pass and served at block_size − 1, typically 15).
LARGE_K = {"dflash": 16}
LARGE_K_DEFAULT = 6


def _on(v) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() in TRUE_WORDS)


class UsualSuspects(Check):
    id = "usual-suspects"
    area = "launch"
    title = "What users commonly blame, from the launch (prefix caching, eager mode, TP size, k)"
    needs = (LaunchConfig,)
    wants = (DrafterFacts, AcceptanceSummary)
    observations = ("launch:prefix-caching", "launch:enforce-eager", "launch:tensor-parallel", "launch:k-large")

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(LaunchConfig)
        launch = evidence.require(LaunchConfig)
        args = launch.args or {}
        refs = (ev.ref,)
        said: list[tuple[str, str]] = []
        if _on(args.get("enable_prefix_caching")):
            said.append(("launch:prefix-caching", "the launch enables prefix caching"))
        if _on(args.get("enforce_eager")) or _on(args.get("disable_cuda_graph")):
            said.append(("launch:enforce-eager", "the launch runs without CUDA graphs (eager mode)"))
        tp = args.get("tensor_parallel_size", args.get("tp", args.get("tp_size")))
        try:
            tp_n = int(tp) if tp is not None and not isinstance(tp, bool) else None
        except (TypeError, ValueError):
            tp_n = None
        if tp_n and tp_n > 1:
            said.append(("launch:tensor-parallel", f"the target is sharded over {tp_n} GPUs (tensor parallel)"))
        k, _ = launch_k(evidence)
        d = evidence.get(DrafterFacts)
        limit = LARGE_K.get(d.method if d else (launch.method or ""), LARGE_K_DEFAULT)
        if k is not None and k >= limit:
            said.append(("launch:k-large", f"k = {k} speculative tokens"))
        if not said:
            return [
                self.finding(
                    Status.OK,
                    "the launch sets none of prefix caching, eager mode, tensor parallelism or a large k",
                    refs=refs,
                )
            ]
        obs = tuple(Observation(name, text, refs) for name, text in said)
        return [
            self.finding(
                Status.OK,
                "commonly blamed, not causes of low acceptance: " + "; ".join(t for _, t in said),
                refs=refs,
                observations=obs,
            )
        ]
