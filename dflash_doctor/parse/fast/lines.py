"""The vLLM >= 0.10.2 `SpecDecoding metrics` line (nearly all of a modern log) read in bulk on the streamed
route: one regex in bytes, the columns of `scan.fast` appended to, no decoding and no trip through the
format registry. A line the regex does not take whole, whose counts cannot be true, or whose prefix is
not only wrappers goes through the registry as any other line (the same rows, the same rejections).
"""

from __future__ import annotations

import re

from ..formats.vllm_v1 import FAST_BODY, FAST_FMT, counts_fit
from ..linereader import prefix_shape
from .columns import COLS, RUN_COLS

_FAST = re.compile(FAST_BODY + rb"[ \t\r]*$", re.M)
_BACK = len(b"SpecDecoding metrics: Mean a")  # from the first "ccept" back to the literal


class VllmLines:
    """Appends the lines it takes to `scan.fast` (`take` per candidate, `flush` per buffer, `close` at the
    end of the source)."""

    def __init__(self, scan):
        self.scan = scan
        self.fast = scan.fast
        self.start = len(scan.fast)
        self.n = 0  # lines taken since the last flush
        # the prefix shape seen last: lines of one process share it, only their time differs
        self.shape: tuple = (-1, b"", b"", 0, 0)
        self.tag, self.ok = None, False
        self._append = tuple(scan.fast[c].append for c in COLS)  # (the columns stay these objects while it reads)

    def take(self, sc, buf: bytes, p: int, base: int, end: int) -> tuple[int, int] | None:
        """The line whose candidate literal is at buf[p], when it is this reader's: (line start, line end),
        its row appended; None for a line the registry must read."""
        s = p - _BACK
        m = _FAST.match(buf, s) if s >= 0 else None
        if m is None:
            return None
        ls = buf.rfind(b"\n", 0, s) + 1
        prefix = buf[ls:s]
        shape_len, head, tail, ts_a, ts_b = self.shape
        if not (len(prefix) == shape_len and prefix.startswith(head) and prefix.endswith(tail)):
            shape_len, head, tail, ts_a, ts_b, key = prefix_shape(prefix)
            self.shape = (shape_len, head, tail, ts_a, ts_b)
            self.tag, self.ok, new = sc.shape_facts(key, prefix)
            if new:
                sc.new_tag(self.tag, buf, end)
        mean, athr, dthr, acc, dft, pp, _rate = m.groups()
        acc, dft = int(acc), int(dft)
        if not (self.ok and acc <= dft <= 10**15):
            return None
        k = pp.count(b",") + 1
        mean_f = float(mean)
        if dft % k == 0:
            if not counts_fit(mean_f, acc, dft / k):
                return None  # drafts shorter than k (n-gram, dynamic k): the registry reads it from the rates
            drafts, est = dft / k, False
        else:
            tot = sum(float(x) for x in pp.split(b","))
            drafts, est = (acc / tot if tot else dft / k), True
        a_src, a_no, a_ts, a_tag, a_d, a_dft, a_acc, a_k, a_pp, a_mean, a_athr, a_dthr, a_off, a_est = self._append
        a_src(sc.source)
        a_no(sc.line_no(buf, ls))
        a_ts(prefix[ts_a:ts_b].decode() if ts_b else None)
        a_tag(self.tag)
        a_d(drafts)
        a_dft(dft)
        a_acc(acc)
        a_k(k)
        a_pp(pp)
        a_mean(mean_f)
        a_athr(float(athr))
        a_dthr(float(dthr))
        a_off(base + ls)
        a_est(est)
        self.n += 1
        return ls, m.end()

    def flush(self) -> None:
        """A buffer is done: its lines packed and counted."""
        for c in ("pp", "ts") + RUN_COLS:
            self.fast[c].flush()
        if self.n:
            self.scan.count(FAST_FMT, self.n)
            self.scan.candidate_lines += self.n
            self.n = 0

    def close(self) -> None:
        """The source is done: its times in the sortable form ('T' between date and time)."""
        self.flush()
        self.fast["ts"].sortable_from(self.start)
