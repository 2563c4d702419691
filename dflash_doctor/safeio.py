"""Reading files and JSON we did not write, with bounds: the one place that says what "a file" and "a JSON
document" may be.

- `read_regular`: a file named where a file is expected is opened without blocking and refused unless it is a
  regular file (a FIFO would block the read for ever, a device like `/dev/zero` never ends), then read up to a
  byte cap.
- `load_json`: JSON with a size cap, a cap on the values it would allocate (`[[],[],…]` allocates far more
  memory than its text: docs/performance.md), a depth cap (the decoder's own recursion limit, caught), and no
  NaN/Infinity (not JSON, and a number no check can reason with).

Both raise `ValueError`/`OSError` subclasses with a one-line reason; callers turn them into their own one-line
error or "could not check".
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from typing import Any

# What JSON values a document may hold before it is refused: far beyond a real Prometheus answer for a fleet
# (series × points × 3), a report, a probe result or a knowledge file.
MAX_JSON_VALUES = 4_000_000
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class NotRegularFile(OSError):
    """A path that names something other than a regular file where a file is expected."""


def kind_of(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_regular(path: str | os.PathLike, max_bytes: int) -> bytes:
    """The bytes of a regular file, at most `max_bytes` (OSError EFBIG past it). Opened with O_NONBLOCK so a
    FIFO cannot block the open, and refused (NotRegularFile) unless fstat says it is a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, f"{kind_of(st.st_mode)}, not a regular file", str(path))
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise OSError(errno.EFBIG, f"larger than {_size(max_bytes)}", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB" if n >= 1 << 10 else f"{n} bytes"


class JSONError(ValueError):
    """Text that is not a JSON document we take: malformed, or past a limit (JSONLimit)."""


class JSONLimit(JSONError):
    """JSON past a limit: too large, too many values, too deep, NaN/Infinity, a number beyond any float or
    integer we parse."""


def json_values(data: bytes) -> int:
    """An upper bound of the JSON values `data` would allocate: separators and brackets outside strings."""
    crude = data.count(b",") + data.count(b"[") + data.count(b"{")
    if crude <= MAX_JSON_VALUES:
        return crude
    return len(_JSON_STRING.sub(b"", data).translate(None, b']} \t\r\n:0123456789.eE+-truefalsn"'))


def _no_constant(name: str) -> Any:
    raise JSONLimit(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JSONLimit(f"{text[:40]} is beyond any float")
    return value


def load_json(data: bytes | str, *, max_bytes: int = 64 << 20, max_values: int = MAX_JSON_VALUES) -> Any:
    """A JSON document, within the caps (see the module's docstring); JSONError with a one-line reason."""

    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > max_bytes:
        raise JSONLimit(f"larger than {_size(max_bytes)}")
    if json_values(raw) > max_values:
        raise JSONLimit(f"more than {max_values:,} JSON values")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except JSONError:
        raise
    except RecursionError:  # the decoder's own depth limit (the interpreter's recursion limit, ~1000)
        raise JSONLimit("nested too deep") from None
    except json.JSONDecodeError as exc:
        raise JSONError(str(exc).splitlines()[0][:160]) from None
    except ValueError as exc:  # a 5000-digit integer (the interpreter's int max str digits)
        raise JSONLimit(str(exc).split(";")[0][:160]) from None
