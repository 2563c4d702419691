"""Output files written all or nothing: reports (`-o`), gate baselines, JUnit, plots and bundles.

A file is written to a temporary file in its own directory, flushed to disk, then renamed over the
destination: a full disk, a quota, a crash or Ctrl-C mid-write leaves the previous file as it was
(a truncated baseline once read as 8 KB of broken JSON) and nothing half-written behind, so a retry
starts clean. A destination that is not a regular file (/dev/stdout, a FIFO) is written in place:
renaming over it would replace the device.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import BinaryIO


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


@contextlib.contextmanager
def open_atomic(path: str, *, exclusive: bool = False) -> Iterator[BinaryIO]:
    """A binary file that becomes `path` when the block ends without an error, and nothing otherwise.
    `exclusive`: fail with FileExistsError rather than replace a file (also one that appears meanwhile)."""
    real = os.path.realpath(path)  # through a symlink to the file it names, as open() would
    if os.path.exists(real) and not os.path.isfile(real):
        if exclusive:
            raise FileExistsError(17, "File exists", path)
        with open(real, "wb") as fh:
            yield fh
        return
    if exclusive and os.path.lexists(path):
        raise FileExistsError(17, "File exists", path)
    try:
        mode = os.stat(real).st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(real)}.", suffix=".partial", dir=os.path.dirname(real))
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if exclusive:
            os.link(tmp, real)  # fails if the name was taken meanwhile: nothing is replaced
            os.unlink(tmp)
        else:
            os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: str, data: bytes | str, *, exclusive: bool = False) -> None:
    """Write `data` (a str as UTF-8) to `path`, all or nothing."""
    with open_atomic(path, exclusive=exclusive) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def write_dir_atomic(path: str, files: dict[str, bytes]) -> None:
    """A new directory holding `files`, all or nothing: built under a temporary name beside it, then
    renamed. Fails with FileExistsError when `path` exists."""
    if os.path.lexists(path):
        raise FileExistsError(17, "File exists", path)
    parent = os.path.dirname(os.path.abspath(path))
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(os.path.abspath(path))}.", suffix=".partial", dir=parent)
    try:
        for name, blob in files.items():
            with open(os.path.join(tmp, name), "xb") as fh:
                fh.write(blob)
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o777 & ~_umask())
        if os.path.lexists(path):
            raise FileExistsError(17, "File exists", path)
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
