"""The evidence set collectors fill from several threads at once."""

from __future__ import annotations

import sys
import threading

from dflash_doctor.evidence import EvidenceSet, Source
from dflash_doctor.evidence.payloads import Workload


def test_evidence_added_from_many_threads_gets_one_ref_each():
    """Before: the ref was counted and the item appended in two steps, so two threads could number two items
    alike (seen as a report whose E-numbers differed between runs of the same bundle on a loaded machine)."""
    ev = EvidenceSet()
    src = Source("flag", "x")

    def add() -> None:
        for _ in range(3000):
            ev.add("w", src, Workload())

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows: the race shows at once
    try:
        threads = [threading.Thread(target=add) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    refs = [e.ref for e in ev]
    assert len(refs) == 24000 and len(set(refs)) == len(refs)
