"""What `check host` could and could not reach on the host: GPUs, serving processes, bytes moved."""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Status
from dflash_doctor.evidence.payloads import GpuInventory, HostSummary, Processes


class HostCollection(Check):
    id = "host-collection"
    area = "host"
    title = "Host facts collected (processes, GPUs, transfer)"
    needs = (HostSummary,)
    wants = (GpuInventory, Processes)

    def run(self, evidence: EvidenceSet):
        ev = evidence.require_item(HostSummary)
        h = evidence.require(HostSummary)
        details = [
            f"{h.commands} read-only commands replayed from a bundle"
            if h.replayed
            else f"{h.commands} read-only commands, {h.bytes_received} bytes received, {h.seconds} s"
        ]
        if h.log_bytes:
            details.append(
                f"log {h.log}: {h.log_bytes} bytes on the host, {h.log_filtered_bytes or 0} "
                "bytes of spec-decode/startup lines transferred"
            )
        gpu = evidence.item(GpuInventory)
        if gpu is not None:
            details.append(f"GPU: {gpu.summary}")
        refs = (ev.ref,) + ((gpu.ref,) if gpu else ())
        proc = evidence.item(Processes)
        if proc is None:
            return [
                self.finding(
                    Status.WARN,
                    f"no vLLM or SGLang serving process found on {h.host}",
                    refs=refs,
                    details=tuple(details),
                    remedy="run where the server runs (as its user or root), or point --log at its log",
                )
            ]
        return [self.finding(Status.OK, proc.summary, refs=refs + (proc.ref,), details=tuple(details))]
