"""The `grep` pre-filter for large plain log files.

CPython finds one literal at 1–2 GB/s, so covering every format with literals costs several passes
over a gigabyte. GNU grep finds several literals in ONE pass at the speed of `grep -c` — as long as
they start with uncommon bytes (measured on a 1 GiB vLLM log: the five below together 0.40 s,
`grep -c 'SpecDecoding metrics'` 0.47 s; adding a literal that starts with a lowercase letter, such
as "mean acceptance length", 0.72 s). So for a regular file of at least GREP_MIN bytes, `grep -F -b`
reads the file and only its candidate lines, with their byte offsets, reach Python:

  * vLLM >= 0.10.2 metrics lines (nearly all of a modern log) are parsed a whole buffer at a time
    with one `findall`, and kept column-wise like the scanner's fast path;
  * every other candidate line goes through the same per-line dispatch as the streamed scanner;
  * what needs the lines around a hit is read from the file by offset: the startup lines (the
    file's first chunk, and before the first metrics line of each new process), the `vllm bench
    serve` block (its header `Speculative Decoding` / its `Draft tokens:` line are the literals);
  * the offline example's summary (lowercase only, so not a grep literal) is looked for in the
    file's first and last TAIL bytes, where a script's stdout puts it.

The result is the same LogScan the streamed scanner gives (tests compare the two on mixed logs).
Where grep is not GNU grep, or fails, the caller scans in Python instead.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from operator import gt, itemgetter

from . import lines as L
from . import logscan as S

GREP_MIN = 64 << 20
READ = 1 << 18
TAIL = 1 << 20  # bytes at each end of the file searched for the offline example's summary
STARTUP_BEFORE = 256 << 10  # read before the first metrics line of a new process for its startup lines
# Every line kind the scanner reads, as literals starting with 'S' or 'D' (see the module doc).
LITERALS = (L.V1_LITERAL, L.V0_LITERAL, L.SGL_LITERAL, "Speculative Decoding", "Draft tokens:")
_BENCH_HINTS = (b"Speculative Decoding", b"Draft tokens:")
_BENCH = L.BENCH_LITERAL.encode()
_OFFLINE = L.OFFLINE_LITERAL.encode()

# One grep output line "OFFSET:PREFIX<the vLLM >= 0.10.2 metrics message>\n", as logscan._FAST, with
# two cheaper parts (the regex is most of the time spent here): the prefix is scanned possessively up to
# the message, and the rates are taken loosely, then checked a whole buffer at a time (_rates_ok).
_FASTG = re.compile(rb"(?m)^(\d+):((?:[^S\n]++|S(?!pecDecoding metrics: ))*+)" + S.FAST_BODY.replace(
    rb"((?:0\.\d{3}|1\.000)(?:, ?(?:0\.\d{3}|1\.000))*)", rb"([0-9., ]+)") + rb"[ \t\r]*\n")
_DIGITS = b"0123456789"


def _rates_ok(pp, ks) -> bool:
    """Every rate list exactly as vLLM prints it: `d.ddd` values joined by ', ', each 0.ddd or 1.000
    (what logscan._FAST accepts, less its optional space). Checked with C-level slices of one blob."""
    k = ks[0]
    if ks.count(k) != len(ks):
        return all(_rates_ok([p], [kk]) for p, kk in zip(pp, ks))
    n = len(pp) * k
    blob = b", ".join(pp) + b", "  # each value then fills exactly 7 bytes
    if len(blob) != 7 * n or blob[1::7] != b"." * n or blob[5::7] != b"," * n or blob[6::7] != b" " * n:
        return False
    lead = blob[0::7]
    if lead.translate(None, b"01") or (blob[2::7] + blob[3::7] + blob[4::7]).translate(None, _DIGITS):
        return False
    i = lead.find(b"1")
    while i >= 0:  # 1.xxx must be 1.000
        if blob[7 * i + 2:7 * i + 5] != b"000":
            return False
        i = lead.find(b"1", i + 1)
    return True
_FAST_FMT = "vllm-v1-0.10.2"

_grep_path: str | None | bool = False


def grep_command(enabled: bool = True) -> str | None:
    """Path of a GNU grep (its -b/-a/-F behaviour is what this module relies on), or None; always None when
    the pre-filter is switched off (Settings.grep, DFLASH_DOCTOR_GREP=0)."""
    global _grep_path
    if not enabled:
        return None
    if _grep_path is False:
        _grep_path = None
        exe = shutil.which("grep")
        if exe:
            try:
                out = subprocess.run([exe, "--version"], capture_output=True, timeout=5).stdout
            except (OSError, subprocess.SubprocessError):
                out = b""
            if b"GNU grep" in out:
                _grep_path = exe
    return _grep_path or None


class GrepFailed(OSError):
    pass


class _GrepScanner:
    def __init__(self, scan: S.LogScan, source: str, fd: int, start: int, end: int, size: int):
        self.scan, self.source, self.fd = scan, source, fd
        self.start, self.end, self.size = start, end, size
        self.sc = S._Scanner(scan, source, count_lines=False)
        self.sc.fast_from = len(scan.fast["ts"])
        self.done_blocks: set[int] = set()
        self.bench_until = -1
        self.shape = (-1, b"", b"", 0, 0, None)

    # -- context read from the file by offset --
    def pread(self, off: int, n: int) -> bytes:
        off = max(0, off)
        return os.pread(self.fd, max(0, min(n, self.size - off)), off)

    def startup_around(self, off: int) -> None:
        """A process not seen before: its startup lines are printed before its first metrics line."""
        lo = max(0, off - STARTUP_BEFORE)
        data = self.pread(lo, off - lo + S.CHUNK)
        cut = data.find(b"\n") + 1 if lo else 0  # drop a partial first line
        self.sc._startup_scan(data[cut:])

    def new_tag(self, tag, off: int) -> None:
        self.sc.tags.add(tag)
        self.startup_around(off)

    # -- the grep output --
    def block(self, buf: bytes) -> None:
        """Complete grep output lines."""
        rows = _FASTG.findall(buf)
        if len(rows) == buf.count(b"\n") and self.fast_rows(rows):
            return
        pos = 0  # mixed or unusual: walk the matches, other lines one by one
        for m in _FASTG.finditer(buf):
            if m.start() != pos:
                self.slow_lines(buf[pos:m.start()])
            if not self.fast_rows([m.groups()]):
                self.slow_lines(m.group(0))
            pos = m.end()
        if pos < len(buf):
            self.slow_lines(buf[pos:])

    def fast_rows(self, rows: list[tuple]) -> bool:
        """Append vLLM >= 0.10.2 lines column-wise; False (nothing appended) when one needs the
        tolerant parser (accepted > drafted is reported as absurd there)."""
        if not rows:
            return True
        offs, pfx, mean, athr, dthr, acc, dft, pp, _rate = zip(*rows)
        acc = list(map(int, acc))
        dft = list(map(int, dft))
        if any(map(gt, acc, dft)):
            return False
        n = len(rows)
        widths = set(map(len, pp))
        width = widths.pop() if len(widths) == 1 else 0
        uniform = width and (width + 2) % 7 == 0  # one k for the whole buffer, as vLLM prints it
        ks = [(width + 2) // 7] * n if uniform else [p.count(b",") + 1 for p in pp]
        if not _rates_ok(pp, ks):
            return False
        offs = list(map(self.start.__add__, map(int, offs)))
        k = ks[0]
        if uniform and not any(d % k for d in dft):
            drafts, est = list(map(k.__rtruediv__, dft)), [False] * n
        else:
            drafts, est = [], []
            for d, k, a, p in zip(dft, ks, acc, pp):
                if d % k == 0:
                    drafts.append(d / k)
                    est.append(False)
                else:
                    tot = sum(float(x) for x in p.split(b","))
                    drafts.append(a / tot if tot else d / k)
                    est.append(True)
        ts, tags = self.prefixes(pfx, offs)
        F = self.scan.fast
        F["src"].extend([self.source] * n)
        F["no"].extend([None] * n)
        F["ts"].extend(ts)
        F["tag"].extend(tags)
        F["pp"].extend(pp)
        F["est"].extend(est)
        for c, vals in (("drafts", drafts), ("dft", dft), ("acc", acc), ("k", ks), ("mean", list(map(float, mean))),
                        ("athr", list(map(float, athr))), ("dthr", list(map(float, dthr))), ("off", offs)):
            S.extend_numeric(F, c, vals)
        self.scan.formats[_FAST_FMT] = self.scan.formats.get(_FAST_FMT, 0) + n
        self.scan.candidate_lines += n
        return True

    def prefixes(self, pfx, offs) -> tuple[list, list]:
        """Timestamp and process tag of each line from the text in front of the message. Lines of one
        process share the prefix's shape (only the time differs), so the regex runs once a shape."""
        shape_len, head, tail, a, b, tag = self.shape
        if b and set(map(len, pfx)) == {shape_len} and set(map(itemgetter(slice(0, a)), pfx)) == {head} \
                and set(map(itemgetter(slice(b, None)), pfx)) == {tail}:
            # the whole buffer in the shape seen last (the usual case): C-level passes only
            ts_out = b"\n".join(map(itemgetter(slice(a, b)), pfx)).decode("ascii", "replace")
            return ts_out.replace(" ", "T").split("\n"), [tag] * len(pfx)
        ts_out, tags = [], []
        add_ts, add_tag = ts_out.append, tags.append
        sc = self.sc
        for p, off in zip(pfx, offs):
            if not (len(p) == shape_len and p.startswith(head) and p.endswith(tail)):
                shape_len, head, tail, a, b, key = S.prefix_shape(p)
                tag, new = sc.tag_for(key, p)
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
            raw = ln[colon + 1:]
            if _BENCH_HINTS[0] in raw or _BENCH_HINTS[1] in raw:
                self.bench_block(off)
                continue
            tag = S._handle_line(self.scan, self.sc.startup, self.sc._decode(raw), self.source, None, off)
            if tag is not S._NO_TAG and tag not in self.sc.tags:
                self.new_tag(tag, off)

    def bench_block(self, off: int) -> None:
        """The `vllm bench serve` block around a hit on its header or `Draft tokens:` line (a block's
        `Acceptance rate (%)` line sits within a few lines of either). Hits inside a window already read
        are skipped, so even a log full of such words is read about once, not once a hit."""
        if off < self.bench_until:
            return
        lo = max(0, off - 4096)
        data = self.pread(lo, off - lo + S.BLOCK_LOOKAHEAD)
        self.bench_until = off + S.BLOCK_LOOKAHEAD - 4096
        # a block belongs to the range its first line starts in (ranges are scanned apart)
        self.summaries(data, lo, _BENCH, in_range=True)

    def summaries(self, data: bytes, lo: int, literal: bytes, in_range: bool) -> None:
        """Each summary whose first line in data (read from offset lo) holds `literal`, handed once to the
        dispatch with the lines after and before it; `in_range`: only those starting in this range."""
        p = data.find(literal)
        while p >= 0:
            ls = data.rfind(b"\n", 0, p) + 1
            if (lo == 0 or ls > 0) and lo + ls not in self.done_blocks \
                    and (not in_range or self.start <= lo + ls < self.end):
                self.done_blocks.add(lo + ls)
                self.context_line(data, ls, lo)
            p = data.find(b"\n", p)
            p = data.find(literal, p) if p >= 0 else -1

    def context_line(self, data: bytes, ls: int, lo: int) -> None:
        """Hand the line at data[ls:] to the dispatch with the lines after and before it."""
        le = data.find(b"\n", ls)
        le = len(data) if le < 0 else le
        parts = data[le + 1:].split(b"\n")[:80]
        block = [self.sc._decode(x) for x in parts]
        before = [self.sc._decode(x) for x in data[max(0, ls - 2048):ls].split(b"\n")[-6:]]
        S._handle_line(self.scan, self.sc.startup, self.sc._decode(data[ls:le]), self.source, None, lo + ls,
                       block, before)

    def offline_edges(self) -> None:
        """The offline example's summary: searched at the file's ends (it is a script's last output).
        A window is read by the range it starts in, and whole (its lines past the range are nobody else's)."""
        for lo in sorted({0, max(0, self.size - TAIL)}):
            if self.start <= lo < self.end:
                self.summaries(self.pread(lo, TAIL + S.BLOCK_LOOKAHEAD), lo, _OFFLINE, in_range=False)


def scan_range(fh, path: str, start: int, end: int, size: int, scan: S.LogScan, grep: str) -> None:
    """Scan the lines that start in [start, end) of a plain file through `grep`; raise GrepFailed
    (with nothing added to `scan` that the caller keeps) when grep does not behave."""
    fd = fh.fileno()
    g = _GrepScanner(scan, path, fd, start, end, size)
    if start == 0:
        g.sc._startup_scan(S.head_lines(fd, size))
    src = open(path, "rb", buffering=0)  # its own file offset: grep reads from `start`
    try:
        os.lseek(src.fileno(), start, os.SEEK_SET)
        args = [grep, "-F", "-a", "-b"]
        for lit in LITERALS:
            args += ["-e", lit]
        try:
            proc = subprocess.Popen(args, stdin=src, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env={"LC_ALL": "C"})  # (grep is an absolute path)
        except OSError as exc:
            raise GrepFailed(str(exc)) from None
    finally:
        src.close()
    S._big_pipe(proc.stdout.fileno())  # fewer, larger reads
    limit = end - start
    stopped = finished = False
    try:
        out = proc.stdout
        carry = b""
        skipping = 0
        while True:
            data = out.read1(READ) if hasattr(out, "read1") else out.read(READ)
            if not data:
                break
            if skipping:
                nl = data.find(b"\n")
                if nl < 0:
                    skipping += len(data)
                    continue
                S._long_line(scan, g.sc, path, skipping + nl)
                skipping, data = 0, data[nl + 1:]
            buf = carry + data if carry else data
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                if len(buf) > S.MAX_LINE:  # (its length without grep's "OFFSET:")
                    skipping, carry = len(buf) - buf.find(b":") - 1, b""
                else:
                    carry = buf
                continue
            carry = buf[cut:]
            buf = buf[:cut]
            # the lines from `end` on belong to the next range: stop there
            last = buf.rfind(b"\n", 0, len(buf) - 1) + 1
            if int(buf[last:buf.index(b":", last)]) >= limit:
                keep = 0
                for ln in buf.split(b"\n"):
                    if not ln or int(ln[:ln.index(b":")]) >= limit:
                        break
                    keep += len(ln) + 1
                g.block(buf[:keep])
                stopped = True
                break
            g.block(buf)
        if not stopped and carry:
            g.block(carry + b"\n")
        finished = True
    except ValueError:
        raise GrepFailed("unexpected grep output") from None
    finally:
        # at EOF grep is exiting by itself: wait for it. Stopped early (the next range's lines) or by an
        # error here, it is ended: our own child, reading our file, nothing else.
        if (stopped or not finished) and proc.poll() is None:
            try:
                proc.send_signal(signal.SIGTERM)
            except OSError:
                pass
        err = proc.stderr.read(4096) if not stopped else b""
        proc.stdout.close()
        proc.stderr.close()
        rc = proc.wait()
    if not stopped and rc not in (0, 1):
        raise GrepFailed(f"grep exit status {rc}: {err.decode('utf-8', 'replace').strip()[:200]}")
    g.offline_edges()
    scan.startup = g.sc.startup.build()
    scan.bytes += end - start
    scan.replacements += g.sc.replacements
    scan.lines = None
