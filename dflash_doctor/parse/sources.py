"""Opening a log source as a stream of UTF-8 bytes with `\\n` line ends, whatever it is: a plain file,
gzip (also truncated or damaged: what came before the damage is kept), stdin, a byte range, or lines
from elsewhere — and whatever its encoding: UTF-16/32 with or without a BOM (a PowerShell `>`
redirection writes UTF-16 LE with BOM), a UTF-8 BOM, lone-CR line ends (old Mac tools, some
terminals' captures). Those are transcoded on the fly, chunk by chunk (never loaded whole), and said.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

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
        parts, size = [], 0
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
            if self.dec is not None:
                out = self.dec.decode(data, final=eof).encode("utf-8", "surrogatepass")
            else:
                out = data
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


def detect(head: bytes) -> tuple[str | None, int, bool, str | None]:
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
        try:
            text_head = codecs.getincrementaldecoder(enc)("replace").decode(text_head).encode("utf-8")
        except (UnicodeError, LookupError):
            pass
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
    fh = open(path, "rb", buffering=0)
    try:
        magic = fh.read(2)
        fh.seek(0)
        if magic == b"\x1f\x8b":
            gz = _Gunzip(gzip.GzipFile(fileobj=io.BufferedReader(fh, 1 << 20)), fh)
            try:
                head = gz.read(HEAD)
            except (EOFError, zlib.error, gzip.BadGzipFile, OSError):
                return Opened(gz, True, False, 0)  # damaged from its start: the scanner says so
            return _wrap(_Prepend(head, gz), head, 0, count_lines=True, plain=False)
        size = os.fstat(fh.fileno()).st_size
        head = os.pread(fh.fileno(), HEAD, 0)
    except BaseException:
        fh.close()
        raise
    return _wrap(fh, head, size, count_lines=size < COUNT_LINES_BELOW, plain=True)


def _wrap(stream, head: bytes, size: int, count_lines: bool, plain: bool) -> Opened:
    enc, skip, cr, note = detect(head)
    if enc is None and not skip and not cr:
        return Opened(stream, count_lines, plain, size, note)
    # transcoded: streamed in Python, line numbers counted (offsets would be the transcoded text's)
    return Opened(_Transcode(stream, enc, cr, skip), True, False, size, note)


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
