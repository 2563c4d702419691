"""The `grep` pre-filter for large plain log files.

CPython finds one literal at 1–2 GB/s, so covering every format with literals costs several passes
over a gigabyte. GNU grep finds several literals in ONE pass at the speed of `grep -c` as long as they
start with at most two, uncommon, bytes (the rule: routes.py, which enforces it on every format's
literals). So for a large regular file (`ScanPlan.fast_from`), `grep -F -b` reads the file and only its
candidate lines, with their byte offsets, reach Python:

  * vLLM >= 0.10.2 metrics lines (nearly all of a modern log) are parsed a whole buffer at a time
    with one `split`, and kept column-wise as on the streamed route (lines.py);
  * every other candidate line goes through the same dispatch (linereader.py) as the streamed route;
  * what needs the lines around a hit is read from the file by offset: the startup lines (the
    file's first chunk, and before the first metrics line of each new process), a summary block
    around a hit on its header or one of its lines;
  * formats without a fast literal (the offline example, the generic reader) are looked for in the
    file's first and last TAIL bytes, where a script's output puts its summary;
  * a pass other than the main one (llama.cpp's literals, SGLang's request log) runs when a sample of
    the file (head, tail, windows between: `selection_sample`) holds its markers or its own literals,
    or when the main pass found nothing;
  * each source's rows are put in file order once it is read (result.finish_source).

grep runs with SIGINT, SIGTERM and SIGHUP ignored (they are this process's to handle: what was read is
kept; grep is ended with SIGKILL), dies with the process that started it, and runs with
its data segment capped (RLIMIT_DATA): grep holds a whole line to print it, so a huge line would make
it grow with the line; capped, it stops ("memory exhausted") and the range is streamed in Python
instead, which skips the line with a note. The result is the same LogScan the streamed scanner gives
(tests compare the two). Where grep is not GNU grep, or fails, the range is streamed in Python instead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
from array import array
from bisect import bisect_left
from operator import gt, itemgetter
from typing import Any

from .. import formats as F
from ..formats.vllm_v1 import FAST_BODY, FAST_FMT, counts_fit
from ..linereader import (
    BLOCK_LOOKAHEAD,
    BLOCK_LOOKBACK,
    CHUNK,
    MAX_LINE,
    NO_TAG,
    SourceReader,
    context_lines,
    is_block_start,
    prefix_shape,
)
from ..result import LogScan
from .routes import BLOCK_HINTS, EDGE_FORMATS, GREP_PASSES, LINE_LITERALS, MAIN_PASS
from .workers import STOP_SIGNALS, big_pipe, die_with_parent

READ = 1 << 18
TAIL = 1 << 20  # bytes at each end of the file searched for formats without a fast literal
STARTUP_BEFORE = 256 << 10  # read before the first metrics line of a new process for its startup lines
GREP_DATA_LIMIT = 4 * MAX_LINE + (8 << 20)  # grep's data segment: any line much longer than MAX_LINE stops it
SELECT_WINDOWS, SELECT_WINDOW = 8, 64 << 10  # windows between head and tail searched for the passes' markers

# One grep output line "OFFSET:PREFIX<the vLLM >= 0.10.2 metrics message>\n", as the streamed fast path,
# with cheaper parts (the regex is most of the time spent here): the prefix is scanned possessively up to
# the message (as an unrolled loop: runs without an S, each S not starting the message; ~8 % less time than
# the alternation), the rates are taken loosely, then checked a whole buffer at a time (_rates_ok), and the
# average rate (not used) is not captured. Eight groups: `split` gives the text between matches at every
# ninth place (all empty: every line of the buffer is one of these) and each column as a C-level slice.
_FASTG = re.compile(
    rb"(?m)^(\d+):([^S\n]*+(?:S(?!pecDecoding metrics: )[^S\n]*+)*+)"
    + FAST_BODY.replace(rb"((?:0\.\d{3}|1\.000)(?:, ?(?:0\.\d{3}|1\.000))*)", rb"([0-9., ]+)").replace(
        rb"(\d+\.\d)%", rb"\d+\.\d%"
    )
    + rb"[ \t\r]*\n"
)
_NG = 8
assert _FASTG.groups == _NG
# The same with the prefix taken as exactly as many bytes as the shape seen last (`.{L}`: no byte-by-byte
# search for the message): about 30 % less time a buffer. Used while the lines keep that shape; the
# prefixes are then checked for the message's literal (the general regex's prefix ends at its first
# one) and against the shape's template (`prefixes`), so both regexes give the same rows.
_MSG = b"SpecDecoding metrics: "
_FAST_TAIL = _FASTG.pattern[_FASTG.pattern.index(_MSG) :]
_SHAPED: dict[int, re.Pattern] = {}
SHAPED_PAUSE = 8  # buffers read with the general regex after the shaped one missed a line


def _shaped(length: int) -> re.Pattern:
    rx = _SHAPED.get(length)
    if rx is None:
        rx = _SHAPED[length] = re.compile(rb"(?m)^(\d+):(.{%d})" % length + _FAST_TAIL)
        assert rx.groups == _NG
    return rx


_DIGITS = b"0123456789"
_CAND = F.CANDIDATE.encode()
_HINTS = tuple(lit.encode() for lit in BLOCK_HINTS)
_BLOCK_IDS = frozenset(f.id for f in F.FORMATS if f.block)
_EDGE_BLOCK_IDS = frozenset(f.id for f in EDGE_FORMATS) | _BLOCK_IDS
_LINE_LITS = tuple(lit.encode() for lit in LINE_LITERALS)


def _rates_ok(pp, ks) -> bool:
    """Every rate list exactly as vLLM prints it: `d.ddd` values joined by ', ', each 0.ddd or 1.000
    (what the streamed fast path accepts, less its optional space). Checked with C-level slices of one blob."""
    k = ks[0]
    if ks.count(k) != len(ks):
        return all(_rates_ok([p], [kk]) for p, kk in zip(pp, ks, strict=False))
    n = len(pp) * k
    blob = b", ".join(pp) + b", "  # each value then fills exactly 7 bytes
    if len(blob) != 7 * n or blob[1::7] != b"." * n or blob[5::7] != b"," * n or blob[6::7] != b" " * n:
        return False
    lead = blob[0::7]
    if lead.translate(None, b"01") or (blob[2::7] + blob[3::7] + blob[4::7]).translate(None, _DIGITS):
        return False
    i = lead.find(b"1")
    while i >= 0:  # 1.xxx must be 1.000
        if blob[7 * i + 2 : 7 * i + 5] != b"000":
            return False
        i = lead.find(b"1", i + 1)
    return True


@functools.cache
def grep_command() -> str | None:
    """Path of a GNU grep (its -b/-a/-F behaviour is what this module relies on), or None."""
    exe = shutil.which("grep")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return exe if b"GNU grep" in out else None


def passes_for(sample: bytes) -> list[str]:
    """The grep passes a file needs: the main one, and each other pass whose markers the file's
    sample (`selection_sample`) holds. A pass's own literals are among its markers (formats/__init__.py):
    a file holding one of its lines in the sample selects it, whatever else was cut or left out."""
    out = [MAIN_PASS]
    for name, (_, marks) in GREP_PASSES.items():
        if name != MAIN_PASS and any(m.encode() in sample for m in marks):
            out.append(name)
    return out


def selection_sample(fd: int, size: int) -> bytes:
    """The text a file's grep passes are chosen by: its head (the startup lines name the engine), its
    last CHUNK bytes, and SELECT_WINDOWS windows spread evenly between. A format whose lines start only
    after the head (a request log switched on later, a head full of long prompts) is found there, at the
    cost of reading about 1 MiB; one whose lines are in none of these places and that the main pass does
    not find either is the residue (then the other passes run anyway: logscan._other_passes)."""
    parts = [head_lines(fd, size)]
    if size > CHUNK:
        step = size // (SELECT_WINDOWS + 1)
        parts += [os.pread(fd, SELECT_WINDOW, i * step) for i in range(1, SELECT_WINDOWS + 1)]
        parts.append(os.pread(fd, CHUNK, max(0, size - CHUNK)))
    return b"\n".join(parts)


class GrepFailed(OSError):
    pass


def _grep_child(parent: int) -> None:  # pragma: no cover - runs between fork and exec
    for sig in STOP_SIGNALS:  # (its scanning process decides; it ends grep with SIGKILL)
        signal.signal(sig, signal.SIG_IGN)
    die_with_parent(parent)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_DATA, (GREP_DATA_LIMIT, GREP_DATA_LIMIT))


class _GrepScanner:
    def __init__(self, scan: LogScan, source: str, fd: int, start: int, end: int, size: int):
        self.scan, self.source, self.fd = scan, source, fd
        self.start, self.end, self.size = start, end, size
        self.sc = SourceReader(scan, source)
        self.fast_from = len(scan.fast)
        self.done: set[int] = set()  # line starts (absolute) of blocks read, their lines included
        self.window_until = -1
        self.shape = (-1, b"", b"", 0, 0, None)
        self.n_fast = 0
        self.pause = 0  # buffers to read with the general regex before the shaped one is tried again

    # -- context read from the file by offset --
    def pread(self, off: int, n: int) -> bytes:
        off = max(0, off)
        return os.pread(self.fd, max(0, min(n, self.size - off)), off)

    def startup_around(self, off: int) -> None:
        """A process not seen before: its startup lines are printed before its first metrics line."""
        lo = max(0, off - STARTUP_BEFORE)
        data = self.pread(lo, off - lo + CHUNK)
        cut = data.find(b"\n") + 1 if lo else 0  # drop a partial first line
        self.sc.startup_scan(data[cut:])

    def new_tag(self, tag, off: int) -> None:
        self.sc.tags.add(tag)
        self.startup_around(off)

    # -- the grep output --
    def block(self, buf: bytes) -> None:
        """Complete grep output lines."""
        shape_len = self.shape[0]
        if shape_len > 0 and self.shape[4] and not self.pause:
            parts = _shaped(shape_len).split(buf)
            if (
                not any(parts[0 :: _NG + 1])
                and _MSG not in b"".join(parts[2 :: _NG + 1])
                and self.fast_rows([parts[i :: _NG + 1] for i in range(1, _NG + 1)])
            ):
                return
            self.pause = SHAPED_PAUSE  # (lines of another shape: the general regex for a while)
        elif self.pause:
            self.pause -= 1
        parts = _FASTG.split(buf)
        if not any(parts[0 :: _NG + 1]) and self.fast_rows([parts[i :: _NG + 1] for i in range(1, _NG + 1)]):
            return
        pos = 0  # mixed or unusual: walk the matches, other lines one by one
        for m in _FASTG.finditer(buf):
            if m.start() != pos:
                self.slow_lines(buf[pos : m.start()])
            if not self.fast_rows([[g] for g in m.groups()]):
                self.slow_lines(m.group(0))
            pos = m.end()
        if pos < len(buf):
            self.slow_lines(buf[pos:])

    def fast_rows(self, cols: list[list]) -> bool:
        """Append vLLM >= 0.10.2 lines (given column-wise: the regex's groups) to the fast columns; False
        (nothing appended) when one needs the dispatch (accepted > drafted, a count beyond the cap, a
        prefix that is not only wrappers)."""
        offs, pfx, mean, athr, dthr, acc, dft, pp = cols
        if not offs:
            return True
        acc = list(map(int, acc))
        dft = list(map(int, dft))
        if any(map(gt, acc, dft)) or max(dft) > 10**15:
            return False
        n = len(offs)
        widths = set(map(len, pp))
        width = widths.pop() if len(widths) == 1 else 0
        uniform = width and (width + 2) % 7 == 0  # one k for the whole buffer, as vLLM prints it
        ks: list[int] | array[int] = [(width + 2) // 7] * n if uniform else [p.count(b",") + 1 for p in pp]
        if not _rates_ok(pp, ks):
            return False
        off_arr = array("q", map(self.start.__add__, map(int, offs)) if self.start else map(int, offs))
        got = self.prefixes(pfx, off_arr)
        if got is None:
            return False
        ts, tags = got
        k = ks[0]
        # (numbers go straight into machine arrays where they can: no list of Python objects in between)
        drafts: array[float] | list[float]
        est: list[bool]
        mean_f = array("d", map(float, mean))
        if uniform and not any(map(k.__rmod__, dft)):
            drafts, est = array("d", map(k.__rtruediv__, dft)), [False] * n
            if not all(map(counts_fit, mean_f, acc, drafts)):
                return False  # drafts shorter than k on some line (n-gram, dynamic k): the registry reads those
            ks = array("q", [k]) * n
        else:
            drafts, est = [], []
            for d, k, a, p, m in zip(dft, ks, acc, pp, mean_f, strict=False):
                if d % k == 0:
                    if not counts_fit(m, a, d / k):
                        return False
                    drafts.append(d / k)
                    est.append(False)
                else:
                    tot = sum(float(x) for x in p.split(b","))
                    drafts.append(a / tot if tot else d / k)
                    est.append(True)
        fast = self.scan.fast
        fast["src"].extend_run(self.source, n)
        fast["no"].extend_run(None, n)
        if isinstance(ts, tuple):  # (width, blob): the times back to back, as the packed column keeps them
            fast["ts"].extend_blob(n, ts[0], ts[1])
        else:
            fast["ts"].extend(ts)
            fast["ts"].flush()
        fast["tag"].extend(tags)
        fast["tag"].flush()
        if uniform:
            fast["pp"].extend_uniform(pp, width)
        else:
            fast["pp"].extend(pp)
            fast["pp"].flush()
        fast["est"].extend(est)
        fast["est"].flush()
        for c, vals in (
            ("drafts", drafts),
            ("dft", dft),
            ("acc", acc),
            ("k", ks),
            ("mean", mean_f),
            ("athr", array("d", map(float, athr))),
            ("dthr", array("d", map(float, dthr))),
            ("off", off_arr),
        ):
            fast.extend_numeric(c, vals)
        self.n_fast += n
        return True

    def prefixes(self, pfx, offs) -> tuple[tuple[int, bytes] | list, list] | None:
        """Timestamp and process tag of each line from the text in front of the message; None when one
        prefix is not only wrappers. Lines of one process share the prefix's shape (only the time
        differs), so the regexes run once a shape."""
        shape_len, head, tail, a, b, tag = self.shape
        if b and shape_len > 0 and set(map(len, pfx)) == {shape_len}:
            # the whole buffer in the shape seen last (the usual case): every prefix is head + its time +
            # tail (all of one length, so the joined prefixes equal that template exactly then); C-level
            # passes only, the times kept back to back for the packed column
            times = list(map(itemgetter(slice(a, b)), pfx))
            if b"".join(pfx) == head + (tail + head).join(times) + tail:
                blob = b"".join(times).replace(b" ", b"T")
                if blob.isascii():
                    return (b - a, blob), [tag] * len(pfx)
                text = b"\n".join(times).decode("ascii", "replace")
                return text.replace(" ", "T").split("\n"), [tag] * len(pfx)
        ts_out: list[Any] = []
        tags: list[Any] = []
        add_ts, add_tag = ts_out.append, tags.append
        sc = self.sc
        for p, off in zip(pfx, offs, strict=False):
            if not (len(p) == shape_len and p.startswith(head) and p.endswith(tail)):
                shape_len, head, tail, a, b, key = prefix_shape(p)
                tag, ok, new = sc.shape_facts(key, p)
                if not ok:
                    self.shape = (-1, b"", b"", 0, 0, None)
                    return None
                if new:
                    self.new_tag(tag, off)
            add_ts(p[a:b] if b else None)
            add_tag(tag)
        self.shape = (shape_len, head, tail, a, b, tag)
        # the sortable form has a 'T' between date and time (one C-level pass over all of them)
        if None in ts_out:
            ts_out = [t.decode().replace(" ", "T", 1) if t is not None else None for t in ts_out]
        elif ts_out:
            ts_out = b"\n".join(ts_out).decode("ascii", "replace").replace(" ", "T").split("\n")
        return ts_out, tags

    def slow_lines(self, text: bytes) -> None:
        for ln in text.split(b"\n"):
            if not ln:
                continue
            colon = ln.find(b":")
            try:
                off = self.start + int(ln[:colon])
            except ValueError:
                raise GrepFailed("unexpected grep output") from None
            raw = ln[colon + 1 :]
            if off in self.done:
                continue
            if any(h in raw for h in _HINTS) or is_block_start(raw):
                self.window(off)
                if off in self.done:
                    continue
            if _CAND not in raw and not any(x.encode() in raw for x in F.SCAN_EXTRA):
                continue  # a block header (read with its window), or a line no format reads alone
            tag, _ = self.sc.dispatch(self.sc.decode(raw), None, off)
            if tag is not NO_TAG and tag not in self.sc.tags:
                self.new_tag(tag, off)

    def window(self, off: int) -> None:
        """The summary blocks around a hit on a block format's literal (its header, one of its lines):
        every block start in the window is read with its context, once. A block belongs to the range
        its first line starts in (ranges are scanned apart)."""
        if off < self.window_until:
            return
        lo = max(0, off - BLOCK_LOOKBACK)
        data = self.pread(lo, off - lo + BLOCK_LOOKAHEAD)
        self.window_until = off + BLOCK_LOOKAHEAD - BLOCK_LOOKBACK
        self.blocks(data, lo, _BLOCK_IDS, self.start, self.end)

    def blocks(self, data: bytes, lo: int, only: frozenset, a_lo: int, a_hi: int, skip=frozenset()) -> None:
        """Each block start in data (read from offset lo) at an offset in [a_lo, a_hi), dispatched to the
        `only` formats, once. `skip`: line starts known not to start one (lines the fast path read)."""
        pos = data.find(b"\n") + 1 if lo else 0  # (a partial first line is not a line)
        limit = len(data) - BLOCK_LOOKAHEAD // 2 if lo + len(data) < self.size else len(data)
        edge = only is _EDGE_BLOCK_IDS
        while pos < limit:
            # only a line holding the candidate literal is read: go straight to the next one
            hit = data.find(_CAND, pos)
            if hit < 0:
                break
            pos = data.rfind(b"\n", pos, hit) + 1 or pos
            if pos >= limit:
                break
            le = data.find(b"\n", pos)
            le = len(data) if le < 0 else le
            raw = data[pos:le]
            abs_ls = lo + pos
            if abs_ls >= a_hi:
                break
            if (
                abs_ls not in self.done
                and abs_ls not in skip
                and abs_ls >= a_lo
                and _CAND in raw
                and (is_block_start(raw) or edge and not any(h in raw for h in _LINE_LITS))
            ):
                got: list = []

                def ctx(data=data, pos=pos, le=le, got=got):
                    got.append(context_lines(self.sc, data, pos, le))
                    return got[0]

                tag, consumed = self.sc.dispatch(self.sc.decode(raw), None, abs_ls, ctx, only=only)
                if tag is not NO_TAG or consumed:
                    self.done.add(abs_ls)
                    nxt = le + 1
                    for n in got[0][2] if got else ():
                        if nxt >= le + 1 + consumed:
                            break
                        self.done.add(lo + nxt)
                        nxt += n
                    pos = le + 1 + consumed
                    continue
            pos = le + 1

    def edges(self) -> None:
        """Formats without a fast literal (a script's summary, the generic reader): searched near the
        file's ends, each range the part of those windows its own lines are in. Block formats take part
        too, so that the reader of last resort never takes a block a known format owns."""
        offs = self.scan.fast["off"]
        for lo in sorted({0, max(0, self.size - TAIL)}):
            a_lo, a_hi = max(lo, self.start), min(lo + TAIL, self.end)
            if a_lo < a_hi:
                r = max(0, a_lo - BLOCK_LOOKBACK)
                # A line the fast path read is the vLLM metrics format's: that format comes first and keeps
                # it, so no block starts there (the dispatch would parse it only to give way: ~40 us a line)
                i, j = (bisect_left(offs, a, self.fast_from) for a in (a_lo, a_hi))
                self.blocks(
                    self.pread(r, a_hi - r + BLOCK_LOOKAHEAD), r, _EDGE_BLOCK_IDS, a_lo, a_hi, frozenset(offs[i:j])
                )


def head_lines(fd: int, size: int) -> bytes:
    """The lines that start in a file's first CHUNK bytes (the last one completed, up to MAX_LINE)."""
    data = os.pread(fd, CHUNK, 0)
    if len(data) == CHUNK and not data.endswith(b"\n") and size > CHUNK:
        more = os.pread(fd, min(MAX_LINE, size - CHUNK), CHUNK)
        nl = more.find(b"\n")
        data += more[: nl + 1] if nl >= 0 else more
    return data


def scan_range(
    fh,
    path: str,
    start: int,
    end: int,
    size: int,
    scan: LogScan,
    grep: str,
    passes: list[str] | None = None,
    head: bool = True,
) -> None:
    """Scan the lines that start in [start, end) of a plain file through `grep`; raise GrepFailed
    (with nothing added to `scan` that the caller keeps) when grep does not behave. Ctrl-C keeps the
    lines read before (KeyboardInterrupt goes on up once `scan` holds them)."""
    fd = fh.fileno()
    g = _GrepScanner(scan, path, fd, start, end, size)
    names = passes or [MAIN_PASS]
    first = _start_grep(fd, start, grep, GREP_PASSES[names[0]][0])  # (it reads while the head is scanned)
    try:
        if start == 0 and head:
            g.sc.startup_scan(head_lines(fd, size))
    except BaseException:
        _end_grep(first)
        raise
    try:  # (each pass adds its rows in file order; finish_source puts the passes' rows in one file order)
        for i, name in enumerate(names):
            _grep_pass(g, path, start, end, grep, GREP_PASSES[name][0], first if i == 0 else None)
        g.edges()
    except KeyboardInterrupt:
        scan.interrupted = True
        _close(g, scan, start, end)
        raise
    _close(g, scan, start, end)


def _close(g: _GrepScanner, scan: LogScan, start: int, end: int) -> None:
    if g.n_fast:
        scan.count(FAST_FMT, g.n_fast)
        scan.candidate_lines += g.n_fast
    scan.fast.even()
    scan.startup = g.sc.startup.build()
    scan.engine_frames |= g.sc.startup.frames
    scan.conflicts.extend(c for c in g.sc.startup.conflicts if c not in scan.conflicts)
    scan.bytes += end - start
    scan.replacements += g.sc.replacements
    scan.lines = None


def _reopen(fd: int) -> int:
    """The open file `fd` once more, with an offset of its own (grep reads from its own start): through
    /proc/self/fd, which names the open file itself — never its path, which may now be another file."""
    try:
        new = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise GrepFailed(f"the open log cannot be handed to grep: {exc}") from None
    a, b = os.fstat(fd), os.fstat(new)
    if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) or not stat.S_ISREG(b.st_mode):
        os.close(new)
        raise GrepFailed("the open log cannot be handed to grep")
    os.set_blocking(new, True)
    return new


def _start_grep(fd: int, start: int, grep: str, literals: tuple[str, ...]) -> subprocess.Popen:
    """grep reading the open file `fd` from `start` on, its output lines "OFFSET:LINE" (offsets from
    `start`)."""
    src = os.fdopen(_reopen(fd), "rb", buffering=0)
    try:
        os.lseek(src.fileno(), start, os.SEEK_SET)
        args = [grep, "-F", "-a", "-b"]
        for lit in literals:
            args += ["-e", lit]
        try:
            proc = subprocess.Popen(
                args,
                stdin=src,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"LC_ALL": "C"},
                preexec_fn=functools.partial(_grep_child, os.getpid()),
            )  # (grep is an absolute path)
        except OSError as exc:
            raise GrepFailed(str(exc)) from None
    finally:
        src.close()
    assert proc.stdout is not None  # (stdout=PIPE)
    big_pipe(proc.stdout.fileno())  # fewer, larger reads
    return proc


def _end_grep(proc: subprocess.Popen) -> None:
    """A grep this process will not read: ended (our own child, reading our file, nothing else) and reaped."""
    with contextlib.suppress(OSError):
        proc.kill()
    assert proc.stdout is not None and proc.stderr is not None  # (a _start_grep process: both piped)
    proc.stdout.close()
    proc.stderr.close()
    proc.wait()


def _grep_pass(
    g: _GrepScanner,
    path: str,
    start: int,
    end: int,
    grep: str,
    literals: tuple[str, ...],
    proc: subprocess.Popen | None = None,
) -> None:
    """One grep pass over [start, end) (`proc`: its grep, started already)."""
    scan = g.scan
    if proc is None:
        proc = _start_grep(g.fd, start, grep, literals)
    assert proc.stdout is not None and proc.stderr is not None  # (a _start_grep process: both piped)
    limit = end - start
    stopped = finished = False
    try:
        out = proc.stdout
        carry = b""
        skipping = 0
        while True:
            # READ bytes at a time (grep writes a few KiB at a time: each buffer's handling has a fixed cost)
            data = out.read(READ)
            if not data:
                break
            if skipping:
                nl = data.find(b"\n")
                if nl < 0:
                    skipping += len(data)
                    continue
                scan.note(
                    f"{path}: a line of {skipping + nl} bytes without a newline was skipped (longer than "
                    f"{MAX_LINE} bytes)"
                )
                skipping, data = 0, data[nl + 1 :]
            buf = carry + data if carry else data
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                if len(buf) > MAX_LINE:  # (its length without grep's "OFFSET:")
                    skipping, carry = len(buf) - buf.find(b":") - 1, b""
                else:
                    carry = buf
                continue
            carry = buf[cut:]
            buf = buf[:cut]
            if len(carry) > MAX_LINE:
                skipping, carry = len(carry) - carry.find(b":") - 1, b""
            # the lines from `end` on belong to the next range: stop there
            keep = _within(buf, limit)
            g.block(_cap(buf[:keep], scan, path))
            if keep < len(buf):
                stopped = True
                break
        if not stopped and carry:
            g.block(_cap(carry + b"\n", scan, path))
        finished = True
    except ValueError:
        raise GrepFailed("unexpected grep output") from None
    finally:
        # at EOF grep is exiting by itself: wait for it. Stopped early (the next range's lines), by an
        # error or by Ctrl-C here, it is ended: our own child, reading our file, nothing else.
        if (stopped or not finished) and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()
        err = proc.stderr.read(4096) if finished and not stopped else b""
        proc.stdout.close()
        proc.stderr.close()
        rc = proc.wait()
    if not stopped and rc not in (0, 1):
        raise GrepFailed(f"grep exit status {rc}: {err.decode('utf-8', 'replace').strip()[:200]}")


def _within(buf: bytes, limit: int) -> int:
    """How much of buf (complete grep output lines) holds lines at offsets below `limit`."""
    last = buf.rfind(b"\n", 0, len(buf) - 1) + 1
    if int(buf[last : buf.index(b":", last)]) < limit:
        return len(buf)
    keep = 0
    for ln in buf.split(b"\n"):
        if not ln or int(ln[: ln.index(b":")]) >= limit:
            break
        keep += len(ln) + 1
    return keep


def _cap(buf: bytes, scan: LogScan, path: str) -> bytes:
    """Complete grep output lines, any longer than MAX_LINE dropped with a note (as the streamed route)."""
    if len(buf) <= MAX_LINE or max(map(len, buf.split(b"\n"))) <= MAX_LINE + 24:
        return buf
    keep = []
    for ln in buf.split(b"\n"):
        if len(ln) > MAX_LINE + 24:
            scan.note(
                f"{path}: a line of {len(ln) - ln.find(b':') - 1} bytes without a newline was skipped "
                f"(longer than {MAX_LINE} bytes)"
            )
            continue
        keep.append(ln)
    return b"\n".join(keep)
