"""Workload facts the user states (--temperature, --thinking/--no-thinking, --dataset).

Nothing is assumed: an unstated fact stays absent, and the report says it is missing.
"""

from __future__ import annotations

from ..errors import UsageError
from ..evidence import EvidenceSet, Source
from ..evidence.payloads import Workload


def gather_workload(
    ev: EvidenceSet, temperature: float | None = None, thinking: bool | None = None, dataset: str | None = None
) -> None:
    if temperature is not None and not 0.0 <= temperature <= 10.0:
        raise UsageError(f"--temperature {temperature} is outside 0..10")
    ds = dataset.strip() if dataset else None
    facts = {"temperature": temperature, "thinking": thinking, "dataset": ds}
    stated = {k: v for k, v in facts.items() if v is not None}
    if not stated:
        if ev.get(Workload) is not None:
            return  # the server's own default (the launch's --override-generation-config) is already in
        ev.missing(Workload, "workload not stated (--temperature, --thinking/--no-thinking, --dataset)")
        return
    flags = " ".join(
        f"--{k} {v}" if not isinstance(v, bool) else ("--thinking" if v else "--no-thinking") for k, v in stated.items()
    )
    summary = ", ".join(f"{k} {v}" for k, v in stated.items())
    workload = Workload(temperature=temperature, thinking=thinking, dataset=ds)
    ev.add(f"workload: {summary}", Source("flag", flags), workload)
