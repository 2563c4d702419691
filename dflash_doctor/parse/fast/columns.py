"""The fast paths' vLLM lines kept column-wise (`Columns`), and the compact column types they use for the
per-position rates, timestamps and per-line constants.

A 1 GiB server log holds ~160 000 vLLM metrics lines (a metrics-dense one ten times that). Kept as one
bytes object per line, the rate lists alone cost ~150 bytes a line and the timestamps ~70: most of the
memory of a scan, and of the time spent creating and moving them between processes. vLLM prints both in
fixed shapes — rates as `d.ddd` joined by ', ', times as `MM-DD HH:MM:SS` — so a batch of lines with the
same k (or the same time width) is stored as a few byte strings: the rates' four digit columns
(4 bytes a rate), the times back to back. Anything else (a rate printed otherwise, a missing time) is
kept as it is, in order. The columns behave as sequences (len, iteration, indexing, `del col[n:]`), and
the aggregation reads the digits straight into numpy without a Python object per line. The source,
line number (None on the grep route), process tag and estimated flag are the same for long runs of
lines: kept as runs (PackedRuns).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from itertools import groupby, repeat
from typing import Any

from ..formats.vllm_v1 import FAST_FMT
from ..frame import RateMatrix, obj_array, rates_from_items
from ..records import Row


def _width_runs(
    items: list, kind: type[bytes] | type[str], ascii_only: bool = False
) -> Iterator[tuple[list, int | None]]:
    """`items` cut into runs in order: (run, width) for consecutive items of `kind` (ASCII ones only, with
    `ascii_only`) and one length, (run, None) for consecutive items that are not — what a packed column can
    store as one blob, and what it keeps as a plain list."""
    start, n = 0, len(items)
    while start < n:
        first = items[start]
        if not (isinstance(first, kind) and (not ascii_only or first.isascii())):
            j = start + 1
            while j < n and not (isinstance(items[j], kind) and (not ascii_only or items[j].isascii())):
                j += 1
            yield items[start:j], None
        else:
            w = len(first)
            j = start + 1
            while (
                j < n and isinstance(items[j], kind) and len(items[j]) == w and (not ascii_only or items[j].isascii())
            ):
                j += 1
            yield items[start:j], w
        start = j


class _Segments:
    """A sequence stored as segments in order: ("blob", n, …) packed or ("list", items)."""

    def __init__(self) -> None:
        self.segs: list[tuple] = []
        self.n = 0
        self.pending: list = []

    def __len__(self) -> int:
        return self.n + len(self.pending)

    def __bool__(self) -> bool:
        return len(self) > 0

    def append(self, item) -> None:
        self.pending.append(item)

    def extend(self, items) -> None:
        if isinstance(items, type(self)):
            items.flush()
            self.flush()
            self.segs.extend(items.segs)
            self.n += items.n
            return
        self.pending.extend(items)

    def flush(self) -> None:
        if self.pending:
            items, self.pending = self.pending, []
            self._add(items)

    def _add(self, items: list) -> None:  # overridden: pack what can be packed
        self.segs.append(("list", items))
        self.n += len(items)

    def _seg_len(self, seg) -> int:
        return len(seg[1]) if seg[0] == "list" else seg[1]

    def __iter__(self) -> Iterator:
        self.flush()
        for seg in self.segs:
            if seg[0] == "list":
                yield from seg[1]
            else:
                yield from self._unpack(seg)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(self)[i]
        self.flush()
        if i < 0:
            i += self.n
        for seg in self.segs:
            m = self._seg_len(seg)
            if i < m:
                return seg[1][i] if seg[0] == "list" else self._one(seg, i)
            i -= m
        raise IndexError(i)

    def __delitem__(self, s) -> None:
        """Only `del col[n:]` (dropping a tail, as Ctrl-C or a filter does) and keeping a subset via keep()."""
        if not isinstance(s, slice) or s.step not in (None, 1) or s.stop is not None:
            raise TypeError("only a tail can be deleted")
        n = s.start or 0
        if n < 0:
            n += len(self)
        if n >= len(self):
            return
        self.keep(range(n))

    def keep(self, idx) -> None:
        """Keep the items at the given increasing indices (repacked)."""
        items = list(self)
        self.segs, self.n, self.pending = [], 0, []
        self._add([items[i] for i in idx])

    def compact(self) -> None:
        """Nothing to join in a column without byte-blob segments (the packed kinds join theirs)."""
        self.flush()

    def wire(self) -> tuple:
        """The segments a worker sends (compacted first: fewer, larger pieces for the aggregation)."""
        self.compact()
        return tuple(self.segs)

    def _join_runs(self, tag: str) -> None:
        """Consecutive `tag` segments of one shape (seg[2]: the width, the k) joined into one: their counts
        summed, each byte column (seg[3:]) joined once."""
        self.flush()
        out: list[tuple] = []
        run: list[tuple] = []
        for seg in self.segs + [None]:
            if seg is not None and seg[0] == tag and (not run or run[0][2] == seg[2]):
                run.append(seg)
                continue
            if len(run) > 1:
                columns = zip(*(s[3:] for s in run), strict=False)
                out.append((tag, sum(s[1] for s in run), run[0][2], *(b"".join(col) for col in columns)))
            else:
                out.extend(run)
            run = [seg] if seg is not None and seg[0] == tag else []
            if seg is not None and seg[0] != tag:
                out.append(seg)
        self.segs = out

    @classmethod
    def from_wire(cls, segs) -> _Segments:
        col = cls()
        col.segs = [tuple(s) for s in segs]
        col.n = sum(col._seg_len(s) for s in col.segs)
        return col

    def _unpack(self, seg) -> Iterator:
        raise NotImplementedError

    def _one(self, seg, i):
        raise NotImplementedError


class PackedRates(_Segments):
    """Per-position rate lists as vLLM prints them (bytes `0.150, 0.020, …`). Packed segment:
    ("rates", n, k, lead digits, tenths, hundredths, thousandths) — four byte strings of n·k digits."""

    def _add(self, items: list) -> None:
        try:
            widths = set(map(len, items))
        except TypeError:
            widths = set()
        if len(widths) == 1 and type(items[0]) is bytes:  # (the usual case: one k, C-level)
            packed = self._pack(items, widths.pop())
            if packed is not None:
                self.segs.append(packed)
                self.n += len(items)
                return
        # runs of the same printed width (the same k, every rate d.ddd): one blob each
        for run, w in _width_runs(items, bytes):
            packed = self._pack(run, w) if w is not None else None
            if packed is None:
                super()._add(run)
            else:
                self.segs.append(packed)
                self.n += len(run)

    def extend_uniform(self, items: list, width: int) -> None:
        """Items all `width` bytes long (the caller knows): packed in one step, C-level."""
        self.flush()
        packed = self._pack(items, width) if items else None
        if packed is None:
            self._add(list(items))
        else:
            self.segs.append(packed)
            self.n += len(items)

    @staticmethod
    def _pack(run: list, w: int):
        if (w + 2) % 7:
            return None
        k = (w + 2) // 7
        n = len(run)
        try:
            blob = b", ".join(run) + b", "
        except TypeError:  # (not all bytes)
            return None
        if len(blob) != 7 * n * k or blob[1::7] != b"." * (n * k) or blob[5::7] != b"," * (n * k):
            return None
        return ("rates", n, k, blob[0::7], blob[2::7], blob[3::7], blob[4::7])

    def _one(self, seg, i):
        _, n, k, a, b, c, d = seg
        lo = i * k
        return b", ".join(bytes((a[j], 46, b[j], c[j], d[j])) for j in range(lo, lo + k))

    def _unpack(self, seg) -> Iterator:
        _, n, k, a, b, c, d = seg
        for i in range(n):
            yield self._one(seg, i)

    def compact(self) -> None:
        """Consecutive packed segments of one k joined into one: the aggregation then turns each into a
        matrix in one step (a numpy call has a fixed cost: ~5 ms for the 250 segments of a 1 GiB log)."""
        self._join_runs("rates")

    def matrices(self):
        """(first row, rows, k, digit columns or the items) per segment, in order: what the aggregation
        turns into a rate matrix without an object per line."""
        self.flush()
        pos = 0
        for seg in self.segs:
            m = self._seg_len(seg)
            yield pos, m, seg
            pos += m


class PackedText(_Segments):
    """Timestamps (str or None). Packed segment: ("text", n, width, blob) — n strings of one width, in
    one byte string (ASCII)."""

    def _add(self, items: list) -> None:
        for run, w in _width_runs(items, str, ascii_only=True):
            if w and len(run) >= 8:
                self.segs.append(("text", len(run), w, "".join(run).encode("ascii")))
                self.n += len(run)
            else:
                super()._add(run)

    def _one(self, seg, i):
        _, n, w, blob = seg
        return blob[i * w : (i + 1) * w].decode("ascii")

    def _unpack(self, seg) -> Iterator:
        _, n, w, blob = seg
        text = blob.decode("ascii")
        for i in range(n):
            yield text[i * w : (i + 1) * w]

    def sortable_from(self, start: int) -> None:
        """'MM-DD HH:MM:SS' -> 'MM-DDTHH:MM:SS' for the items from `start` on (the streamed fast path
        keeps the time as printed)."""
        self.flush()
        pos = 0
        for i, seg in enumerate(self.segs):
            m = self._seg_len(seg)
            if pos + m > start:
                if seg[0] == "text":
                    _, n, w, blob = seg
                    lo = max(0, start - pos) * w
                    self.segs[i] = ("text", n, w, blob[:lo] + blob[lo:].replace(b" ", b"T"))
                else:
                    items = seg[1]
                    for j in range(max(0, start - pos), len(items)):
                        t = items[j]
                        if t is not None and " " in t:
                            items[j] = t.replace(" ", "T", 1)
            pos += m

    def compact(self) -> None:
        """Consecutive packed segments of one width joined into one (the aggregation then reads the times
        in place, without a joined copy beside the pieces)."""
        self._join_runs("text")

    def extend_blob(self, n: int, width: int, blob: bytes) -> None:
        """n strings of `width` ASCII bytes, back to back (the grep route's C-level join)."""
        self.flush()
        self.segs.append(("text", n, width, blob))
        self.n += n


class PackedRuns(_Segments):
    """A column whose value repeats for long runs of lines (the source, the process tag, None for the
    line number, the estimated flag). Packed segment: ("run", n, value)."""

    def _add(self, items: list) -> None:
        if not items:
            return
        if items.count(items[0]) == len(items):  # (the usual case: one value, C-level)
            self._run(items[0], len(items))
            return
        runs = [(v, sum(1 for _ in g)) for v, g in groupby(items)]
        if len(runs) * 8 > len(items):  # short runs: a plain list is smaller
            super()._add(items)
            return
        for v, m in runs:
            self._run(v, m)

    def _run(self, value, n: int) -> None:
        last = self.segs[-1] if self.segs else None
        if last is not None and last[0] == "run" and type(last[2]) is type(value) and last[2] == value:
            self.segs[-1] = ("run", last[1] + n, last[2])
        else:
            self.segs.append(("run", n, value))
        self.n += n

    def extend_run(self, value, n: int) -> None:
        """n lines with the same value."""
        self.flush()
        if n:
            self._run(value, n)

    def _one(self, seg, i):
        return seg[2]

    def _unpack(self, seg) -> Iterator:
        return repeat(seg[2], seg[1])

    def runs(self) -> Iterator[tuple[int, int, Any]]:
        """(first index, length, value or a list of values) per segment, in order: what the aggregation
        fills its arrays from without an object per line."""
        self.flush()
        pos = 0
        for seg in self.segs:
            m = self._seg_len(seg)
            yield pos, m, (seg[2] if seg[0] == "run" else seg[1])
            pos += m


# ---- the vLLM >= 0.10.2 lines of a scan, column-wise ---------------------------------------------------

COLS = ("src", "no", "ts", "tag", "drafts", "dft", "acc", "k", "pp", "mean", "athr", "dthr", "off", "est")
RUN_COLS = ("src", "no", "tag", "est")  # the same value for long runs of lines (PackedRuns)
# Numeric columns kept as machine arrays (typecode) while their numbers fit one: marshal and numpy then take
# them whole instead of one Python number at a time.
ARRAY_COLS = {"drafts": "d", "dft": "q", "acc": "q", "k": "q", "mean": "d", "athr": "d", "dthr": "d", "off": "q"}


class Columns(dict):
    """The fast paths' vLLM >= 0.10.2 lines (`FAST_FMT`), one entry per line in each of COLS: rates and times
    packed, run-length columns as runs, numbers as machine arrays. A dict of the columns by name, with what
    the scan and the aggregation need of them as a whole."""

    def __init__(self) -> None:
        super().__init__((c, []) for c in COLS)
        self["pp"], self["ts"] = PackedRates(), PackedText()
        for c in RUN_COLS:
            self[c] = PackedRuns()

    def __len__(self) -> int:  # (the number of lines, not of columns)
        return len(self["ts"])

    def __bool__(self) -> bool:
        return len(self) > 0

    def even(self) -> None:
        """Every column as long as the shortest (a Ctrl-C may land between two appends of one line)."""
        n = min(len(col) for col in self.values())
        for col in self.values():
            del col[n:]

    def keep(self, idx: list[int]) -> None:
        """Keep the lines at the increasing indices idx."""
        for c in COLS:
            col = self[c]
            if isinstance(col, _Segments):
                col.keep(idx)
            else:
                self[c] = [col[i] for i in idx]

    def extend_numeric(self, c: str, vals) -> None:
        """Append to a numeric column, kept as a machine array while its numbers fit one (an absurd
        5000-digit count turns the column back into a list of Python ints)."""
        col = self[c]
        if type(col) is list and not col:
            self[c] = col = array(ARRAY_COLS[c])
        if type(col) is not list:
            if type(vals) is array and vals.typecode == col.typecode:
                col.extend(vals)
                return
            if not isinstance(vals, list):
                vals = list(vals)
            before = len(col)
            try:
                col.extend(vals)
                return
            except (OverflowError, TypeError):
                del col[before:]
                self[c] = col = col.tolist()
        col.extend(vals)

    def rows(self) -> list[Row]:
        """Every line as a Row, in order."""
        return [
            Row(FAST_FMT, src, no, ts, tag, d, dft, acc, k, pp, mean, a, b, None, off, est)
            for src, no, ts, tag, d, dft, acc, k, pp, mean, a, b, off, est in zip(
                *(self[c] for c in COLS), strict=False
            )
        ]

    def arrays(self, skip: tuple[str, ...] = ()) -> dict[str, Any]:
        """The lines as the aggregation's numpy columns (frame.py), read from the packed pieces without a
        Python object per line; the `skip` ones are not built."""
        import numpy as np

        n = len(self)

        def num(c):  # a machine array of doubles is read in place (no copy); anything else converted
            v = self[c]
            if getattr(v, "typecode", None) == "d" and len(v) == n:
                return np.frombuffer(v, dtype=np.float64)
            return np.array(v, dtype=float)

        rates = _rates_from_packed(self["pp"], self["k"])
        d = {
            # (one str object shared by every row: np.full would make a copy of it per row)
            "fmt": _runs(((0, n, FAST_FMT),), n, object),
            "source": _runs(self["src"], n, object),
            "line_no": None,
            "timestamp": _text_array(self["ts"]),
            "engine": _runs(self["tag"], n, object),
            "drafts": num("drafts"),
            "drafted": np.array(self["dft"], dtype=float),
            "accepted": np.array(self["acc"], dtype=float),
            "k": np.array(self["k"], dtype=float),
            "per_position": rates,
            "printed_mean": num("mean"),
            "accepted_throughput": num("athr"),
            "drafted_throughput": num("dthr"),
            "emitted": np.full(n, np.nan),
            "offset": np.array(self["off"], dtype=float),
            "estimated": _runs(self["est"], n, bool),
            "per_request": np.zeros(n, dtype=bool),
            "npos": rates.npos,
        }
        if "line_no" not in skip:  # (None for every line of the grep route: it reads by offset)
            d["line_no"] = _runs(self["no"], n, float)
        return {k: v for k, v in d.items() if k not in skip}


def _rates_from_packed(col: PackedRates, k_col) -> RateMatrix:
    """The packed rates: the digit columns go straight into the matrix."""
    import numpy as np

    npos = np.array(k_col, dtype=np.int64)
    kmax = int(npos.max()) if len(npos) else 0
    q = np.zeros((len(npos), kmax), dtype=np.uint16)
    exact_idx: list[int] = []
    exact: list[Any] = []
    for pos, m, seg in col.matrices():
        if seg[0] == "rates":
            _, n, k, a, b, c, d = seg
            # thousandths = ((a·10 + b)·10 + c)·10 + d of the digits' codes, less the codes' '0's; in place
            # in one array (each temporary would be megabytes of fresh memory on a large log)
            v = np.frombuffer(a, dtype=np.uint8).astype(np.uint16)
            for digits in (b, c, d):
                v *= 10
                v += np.frombuffer(digits, dtype=np.uint8)
            v -= 48 * 1111
            q[pos : pos + m, :k] = v.reshape(m, k)
        else:
            sub = rates_from_items(seg[1], npos[pos : pos + m])
            q[pos : pos + m, : sub.q.shape[1]] = sub.q
            exact_idx.extend((sub.exact_idx + pos).tolist())
            exact.extend(np.pad(sub.exact, ((0, 0), (0, kmax - sub.exact.shape[1])), constant_values=np.nan))
    return RateMatrix(
        q, npos, np.array(exact_idx, dtype=np.int64), np.array(exact, dtype=float).reshape(len(exact), kmax)
    )


def _runs(col, n: int, dtype):
    """A column as a numpy array, filled a run at a time when it is kept as runs (PackedRuns); None is NaN
    in a float column."""
    import numpy as np

    runs: Iterable[tuple[int, int, Any]]
    if isinstance(col, tuple):  # (first, length, value) triples given
        runs = col
    elif isinstance(col, PackedRuns):
        runs = col.runs()
    else:
        return obj_array(col) if dtype is object else np.array(col, dtype=dtype)
    arr = np.empty(n, dtype=dtype)
    for pos, m, v in runs:
        if isinstance(v, list):
            arr[pos : pos + m] = obj_array(v) if dtype is object else np.array(v, dtype=dtype)
        else:
            arr[pos : pos + m] = np.nan if v is None and dtype is float else v
    return arr


def _text_array(col: PackedText):
    """Timestamps as an array: fixed-width bytes when the column is one packed width (no object per line),
    else objects."""
    import numpy as np

    segs = col.wire()
    if segs and all(seg[0] == "text" for seg in segs) and len({seg[2] for seg in segs}) == 1:
        w = segs[0][2]
        return np.frombuffer(segs[0][3] if len(segs) == 1 else b"".join(seg[3] for seg in segs), dtype=f"S{w}")
    return obj_array(list(col))
