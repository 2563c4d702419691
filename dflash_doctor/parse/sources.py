"""Opening a log source as a stream of UTF-8 bytes with `\\n` line ends, whatever it is: a plain file,
gzip (also truncated or damaged: what came before the damage is kept), stdin, a byte range, or lines
from elsewhere — and whatever its encoding: UTF-16/32 with or without a BOM (a PowerShell `>`
redirection writes UTF-16 LE with BOM), a UTF-8 BOM, lone-CR line ends (old Mac tools, some
terminals' captures). Those are transcoded on the fly, chunk by chunk (never loaded whole), and said.

A container runtime's capture is read record by record as the runtime wrote them: a log line longer than
16 KiB is split into several records — CRI (`containerd`, CRI-O: `TIME stdout P …` records up to the `F`
one) and Docker's json-file driver (`{"log": …}` records whose text has no line end yet) — and such records
are joined again (`_Reassemble`) before any line is judged, so that text a prompt put right at a split is
read as the middle of the prompt's line it is, never as a line of its own.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import gzip
import io
import json
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, cast

COUNT_LINES_BELOW = 64 << 20  # regular files larger than this are addressed by byte offset
HEAD = 1 << 16


@dataclass
class Opened:
    stream: IO[bytes]
    count_lines: bool  # small or streamed inputs: line numbers; large plain files: byte offsets
    plain: bool  # a regular file whose bytes are what the scanner reads (the grep route may take it)
    size: int
    note: str | None = None  # what was detected and transcoded


class _Gunzip(io.RawIOBase):
    """Decompress in small steps so that a truncated or damaged .gz yields everything before the
    damage (GzipFile.read(n) drops the whole call's data when it hits the end early)."""

    def __init__(self, gz: gzip.GzipFile, raw=None):
        self.gz, self.raw = gz, raw
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.error is not None:
            err, self.error = self.error, None
            raise err
        parts: list[bytes] = []
        size = 0
        while n < 0 or size < n:
            try:
                piece = self.gz.read1(1 << 16)
            except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as exc:
                if not parts:
                    raise
                self.error = exc
                break
            if not piece:
                break
            parts.append(piece)
            size += len(piece)
        return b"".join(parts)

    def close(self) -> None:
        self.gz.close()
        if self.raw is not None:
            self.raw.close()
        super().close()


class Range(io.RawIOBase):
    """Bytes [start, end) of an open file, read with pread (the file's offset is not moved)."""

    def __init__(self, fh, start: int, end: int):
        self.fh, self.pos, self.end = fh, start, end

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = self.end - self.pos if n < 0 else min(n, self.end - self.pos)
        if n <= 0:
            return b""
        data = os.pread(self.fh.fileno(), n, self.pos)
        self.pos += len(data)
        return data


class _Prepend(io.RawIOBase):
    """`head` (already read to look at it), then the rest of `raw`."""

    def __init__(self, head: bytes, raw):
        self.head, self.raw = head, raw

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n < 0 or n >= len(self.head):
                out, self.head = self.head, b""
                return out
            out, self.head = self.head[:n], self.head[n:]
            return out
        return self.raw.read(n)

    def close(self) -> None:
        if self.raw is not sys.stdin.buffer:
            self.raw.close()
        super().close()


class _Transcode(io.RawIOBase):
    """A stream decoded from `encoding` (incrementally) and handed on as UTF-8, lone CRs made LF."""

    def __init__(self, raw, encoding: str | None, cr: bool, skip: int = 0):
        self.raw, self.cr = raw, cr
        self.dec = codecs.getincrementaldecoder(encoding)("replace") if encoding else None
        self.skip = skip
        self.pending_cr = False

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        while True:
            data = self.raw.read(n if n > 0 else 1 << 18)
            if self.skip and data:
                cut = min(self.skip, len(data))
                data, self.skip = data[cut:], self.skip - cut
                if not data:
                    continue
            eof = not data
            out = self.dec.decode(data, final=eof).encode("utf-8", "surrogatepass") if self.dec is not None else data
            if self.cr and out:
                if self.pending_cr and out.startswith(b"\n"):
                    out = out[1:]
                self.pending_cr = out.endswith(b"\r")
                out = out.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if out or eof:
                return out

    def close(self) -> None:
        if self.raw is not sys.stdin.buffer:
            self.raw.close()
        super().close()


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32 LE"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 BE"),
    (codecs.BOM_UTF8, None, "UTF-8 with a BOM"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16 LE"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 BE"),
)


def detect(head: bytes) -> tuple[str | None, int, bool, str | None]:  # noqa: C901 - a branch per encoding
    """(encoding to transcode from or None, BOM bytes to skip, lone CRs to translate, a note)."""
    enc, skip, what = None, 0, None
    for bom, e, name in _BOMS:
        if head.startswith(bom):
            body = head[len(bom) : len(bom) + 4096]
            # a log is mostly ASCII: in UTF-16 half its bytes are NUL, in UTF-32 three quarters. Bytes that
            # merely start like a BOM (a damaged or binary file) keep being read as they are.
            if e and e.startswith("utf-16") and body.count(0) < 0.2 * len(body):
                continue
            if e and e.startswith("utf-32") and body.count(0) < 0.5 * len(body):
                continue
            enc, skip, what = e, len(bom), f"{name} (byte-order mark)"
            break
    if what is None and len(head) >= 16:
        sample = head[:4096]
        n = len(sample) // 4 * 4
        if (
            n
            and sample[1:n:4].count(0) + sample[2:n:4].count(0) + sample[3:n:4].count(0) > 0.9 * (3 * n // 4)
            and sample[0:n:4].count(0) < 0.1 * (n // 4)
        ):
            enc, what = "utf-32-le", "UTF-32 LE (no byte-order mark)"
        elif (
            n
            and sample[0:n:4].count(0) + sample[1:n:4].count(0) + sample[2:n:4].count(0) > 0.9 * (3 * n // 4)
            and sample[3:n:4].count(0) < 0.1 * (n // 4)
        ):
            enc, what = "utf-32-be", "UTF-32 BE (no byte-order mark)"
        else:
            odd, even = sample[1::2].count(0), sample[0::2].count(0)
            half = len(sample) // 2
            if odd > 0.4 * half and even < 0.05 * half:
                enc, what = "utf-16-le", "UTF-16 LE (no byte-order mark)"
            elif even > 0.4 * half and odd < 0.05 * half:
                enc, what = "utf-16-be", "UTF-16 BE (no byte-order mark)"
    text_head = head[skip:]
    if enc is not None:
        with contextlib.suppress(UnicodeError, LookupError):
            text_head = codecs.getincrementaldecoder(enc)("replace").decode(text_head).encode("utf-8")
    lf = text_head.count(b"\n")
    lone_cr = text_head.count(b"\r") - text_head.count(b"\r\n")
    cr = lone_cr >= 2 and lone_cr > lf
    notes = []
    if what:
        notes.append(f"encoded as {what}: transcoded to UTF-8 while reading")
    if cr:
        notes.append("lines end with a lone CR (\\r): read as line ends")
    if not what and not cr:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 4:  # (not just a character cut at the end of the head)
                try:
                    head.decode("cp1252")
                    notes.append(
                        "not UTF-8 (a single-byte encoding such as Latin-1/CP1252?): ASCII text read as is, "
                        "other bytes replaced"
                    )
                except UnicodeDecodeError:
                    pass
    return enc, skip, cr, ("; ".join(notes) or None)


def open_source(path: str) -> Opened:
    """A UTF-8, LF-terminated binary stream for a path ('-' is stdin; gzip detected by its magic
    bytes; other encodings and lone CRs transcoded)."""
    if path == "-":
        raw = sys.stdin.buffer
        head = raw.read(HEAD)
        return _wrap(_Prepend(head, raw), head, 0, count_lines=True, plain=False)
    fh = _open_regular(path)
    try:
        magic = os.pread(fh.fileno(), 2, 0)
        if magic == b"\x1f\x8b":
            gz = _Gunzip(gzip.GzipFile(fileobj=io.BufferedReader(fh, 1 << 20)), fh)
            try:
                head = gz.read(HEAD)
            except (EOFError, zlib.error, gzip.BadGzipFile, OSError):
                return Opened(cast(IO[bytes], gz), True, False, 0)  # damaged from its start: the scanner says so
            return _wrap(_Prepend(head, gz), head, 0, count_lines=True, plain=False)
        size = os.fstat(fh.fileno()).st_size
        head = os.pread(fh.fileno(), HEAD, 0)
    except BaseException:
        fh.close()
        raise
    return _wrap(fh, head, size, count_lines=size < COUNT_LINES_BELOW, plain=True)


def _open_regular(path: str) -> io.FileIO:
    """The file at `path`, opened once: every later read goes through this descriptor (nothing reopens the
    name, which may by then be another file or a FIFO). Opening never blocks; what is not a regular file
    (a FIFO, a device, a directory) is refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        os.set_blocking(fd, True)
        return io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def _wrap(stream, head: bytes, size: int, count_lines: bool, plain: bool) -> Opened:
    enc, skip, cr, note = detect(head)
    if enc is not None or skip or cr:
        # transcoded: streamed in Python, line numbers counted (offsets would be the transcoded text's)
        stream, count_lines, plain = _Transcode(stream, enc, cr, skip), True, False
    kind = framing(head)
    if kind is not None:  # (records joined: streamed in Python; line numbers are the joined records')
        stream, count_lines, plain = _Reassemble(stream, kind), True, False
        note = "; ".join(x for x in (note, f"{KINDS[kind]}: records split at 16 KiB joined before reading") if x)
    return Opened(stream, count_lines, plain, size, note)


_CRI = re.compile(rb"^(\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d)) (stdout|stderr) ([PF]) ?")
_DOCKER = re.compile(rb'^\s*\{\s*"log"\s*:\s*"')
_DOCKER_WHOLE = re.compile(rb'\\n"\s*,\s*"stream"')  # a record whose text ends its line
KINDS = {"cri": "a CRI container log (stdout/stderr P/F records)", "docker": "a Docker json-file log"}


def framing(head: bytes) -> str | None:
    """Which container runtime's record format the source's first lines are in, if any: "cri" or "docker"."""
    lines = [ln for ln in head.split(b"\n")[:50] if ln.strip()]
    if len(lines) > 1 and head.rfind(b"\n") > 0:
        lines = lines[:-1]  # (the last one may be cut by the head's end)
    if not lines:
        return None
    if sum(1 for ln in lines if _CRI.match(ln)) * 2 > len(lines):
        return "cri"
    if sum(1 for ln in lines if _DOCKER.match(ln)) * 2 > len(lines):
        return "docker"
    return None


class _Reassemble(io.RawIOBase):
    """A container runtime's records with each split line joined again (see the module doc). A joined line
    is kept to MAX_JOINED bytes: a longer one is replaced by a note of its own (no line reads it)."""

    MAX_JOINED = 1 << 20

    def __init__(self, raw, kind: str):
        self.raw, self.kind = raw, kind
        self.carry = b""
        self.pending: dict[bytes, list] = {}  # stream -> [first record's head, parts, bytes, over the cap]
        self.done = False

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        while not self.done:
            data = self.raw.read(1 << 18)
            if not data:
                self.done = True
                out = self._lines(self.carry + b"\n") if self.carry else b""
                return out + self._flush()
            buf = self.carry + data
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                if len(buf) > 2 * self.MAX_JOINED:  # one record without a line end: not a record; passed on
                    self.carry = b""
                    return buf
                self.carry = buf
                continue
            self.carry = buf[cut:]
            out = self._lines(buf[:cut])
            if out:
                return out
        return b""

    def _lines(self, buf: bytes) -> bytes:
        if not self.pending and not self._split_in(buf):
            return buf  # (the usual chunk: every record whole, passed on as it is)
        out = []
        for ln in buf[:-1].split(b"\n") if buf.endswith(b"\n") else buf.split(b"\n"):
            joined = self._record(ln)
            if joined is not None:
                out.append(joined)
        return b"".join(x + b"\n" for x in out)

    def _split_in(self, buf: bytes) -> bool:
        if self.kind == "cri":
            return b" stdout P" in buf or b" stderr P" in buf
        return len(re.findall(rb'(?m)^\s*\{\s*"log"\s*:', buf)) != len(_DOCKER_WHOLE.findall(buf))

    def _record(self, ln: bytes) -> bytes | None:
        """A record in; out the line it ends (None while its line goes on in the next record)."""
        parsed = self._parse(ln)
        if parsed is None:
            return ln
        head, stream, partial, text, meta = parsed
        pend = self.pending.get(stream)
        if pend is None and not partial:
            return ln
        if pend is None:
            pend = self.pending[stream] = [head, [], 0, False, meta]
        if not pend[3]:
            pend[1].append(text)
            pend[2] += len(text)
            if pend[2] > self.MAX_JOINED:
                pend[1], pend[3] = [], True
        if partial:
            return None
        del self.pending[stream]
        return self._emit(pend)

    def _parse(self, ln: bytes):
        """(head to keep, stream, partial?, text, meta) of a record, or None for a line that is none."""
        if self.kind == "cri":
            m = _CRI.match(ln)
            if m is None:
                return None
            return m.group(1) + b" " + m.group(2) + b" F ", m.group(2), m.group(3) == b"P", ln[m.end() :], None
        if not _DOCKER.match(ln):
            return None
        try:
            rec = json.loads(ln)
        except (ValueError, RecursionError):
            return None
        text = rec.get("log") if isinstance(rec, dict) else None
        if not isinstance(text, str):
            return None
        stream = str(rec.get("stream", "")).encode()
        return b"", stream, not text.endswith("\n"), text.encode("utf-8", "surrogatepass"), rec

    def _emit(self, pend: list) -> bytes:
        head, parts, _, over, meta = pend
        text = b"" if over else b"".join(parts)
        if over:
            text = b"(a record of more than 1 MiB, joined from the runtime's split records: not read)"
        if self.kind == "cri":
            return head + text
        rec = dict(meta)
        rec["log"] = text.decode("utf-8", "surrogatepass") + ("\n" if not over else "")
        return json.dumps(rec, ensure_ascii=False).encode("utf-8", "surrogatepass")

    def _flush(self) -> bytes:
        """Records whose line never ended (the capture stopped in the middle of one): given as they are."""
        out = b"".join(self._emit(p) + b"\n" for p in self.pending.values())
        self.pending = {}
        return out

    def close(self) -> None:
        if self.raw is not sys.stdin.buffer:
            self.raw.close()
        super().close()


def open_lines(lines: Iterable[str]):
    """Text lines from elsewhere as the stream the scanner reads (a container runtime's records joined)."""
    reader = LineReader(lines)
    head = reader.read(HEAD)
    stream = _Prepend(head, reader)
    kind = framing(head)
    return _Reassemble(stream, kind) if kind is not None else stream


class LineReader(io.RawIOBase):
    """Adapts an iterable of text lines (a remote file, a test) to the binary stream scanner."""

    def __init__(self, lines: Iterable[str]):
        self._it = iter(lines)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        parts, size = [self._buf], len(self._buf)
        while n < 0 or size < n:
            try:
                ln = next(self._it)
            except StopIteration:
                break
            # any lone surrogate is kept as is: the scanner decodes leniently
            b = ln.encode("utf-8", "surrogatepass") if isinstance(ln, str) else bytes(ln)
            if not b.endswith(b"\n"):
                b += b"\n"
            parts.append(b)
            size += len(b)
        data = b"".join(parts)
        if n < 0:
            self._buf = b""
            return data
        self._buf = data[n:]
        return data[:n]
