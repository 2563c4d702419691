"""The one writer of output files: reports (`-o`), gate baselines, JUnit, CSV/Parquet exports, plots and
bundles. What it promises (SECURITY.md, "What is written never destroys"):

- **Never destroys before it has the new content whole.** A regular file is written to a temporary file
  beside it, flushed to disk, then renamed over it: a full disk, a quota, a crash or Ctrl-C mid-write
  leaves the previous file as it was (never a truncated baseline read back as broken JSON). Where a
  rename cannot keep the file's owner (another user's file we may write to) or the directory is
  read-only, the file is written in place, but only once the space for the new content is reserved
  (`posix_fallocate`): on a full disk it is still unchanged.
- **Keeps the file's owner and mode** (a rename would give it ours).
- **Follows symlinks only as the kernel's `fs.protected_symlinks` rule allows**, whatever the sysctl says:
  not a link in a sticky world-writable directory (/tmp) unless it belongs to us or to the directory's
  owner — another user's `/tmp/report.json -> /root/.bashrc` is refused, at every component of the
  path, with one line. Likewise `fs.protected_regular`: another user's regular file in such a
  directory is not written to.
- **Streams are written in place**: `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` go
  to our own descriptor (`-o /dev/stdout >> ci.log` appends, `-o /dev/stdout | cat` works: reopening
  the path would truncate a file and fails for a pipe); character devices and FIFOs are opened for
  writing without truncation. Block devices, sockets and directories are refused.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import shutil
import stat
import sys
import tempfile
from collections import deque
from collections.abc import Iterator
from typing import BinaryIO

_MAX_LINKS = 40  # as the kernel's ELOOP limit


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _own_fd(path: str) -> int | None:
    """The descriptor a path names when it is one of ours (/dev/stdout, /dev/fd/N, /proc/self/fd/N)."""
    if path in ("/dev/stdout", "/dev/stderr"):
        return 1 if path.endswith("out") else 2
    m = re.fullmatch(rf"/(?:dev/fd|proc/(?:self|thread-self|{os.getpid()})/fd)/(\d+)", path)
    return int(m.group(1)) if m else None


def _refuse(path: str, why: str) -> OSError:
    return PermissionError(errno.EACCES, why, path)


def _sticky_world_writable(st: os.stat_result) -> bool:
    return bool(st.st_mode & stat.S_ISVTX and st.st_mode & stat.S_IWOTH)


def _may_follow(link: str, st: os.stat_result, directory: str) -> None:
    """fs.protected_symlinks: a link in a sticky world-writable directory is followed only when its owner
    is the follower or the directory's owner."""
    d = os.stat(directory)
    if _sticky_world_writable(d) and st.st_uid not in (os.geteuid(), d.st_uid):
        raise _refuse(
            link,
            f"a symlink owned by another user (uid {st.st_uid}) in the sticky world-writable directory "
            f"{directory}: not followed",
        )


def resolve(path: str) -> str:
    """`path` with every symlink in it followed, each one only as fs.protected_symlinks allows (see
    _may_follow), stopping at a descriptor of ours (/dev/stdout -> /proc/self/fd/1). The last component
    may not exist (a file to create); a missing directory raises FileNotFoundError."""
    todo = deque(p for p in os.path.abspath(path).split("/") if p)
    done, hops = "/", 0
    while todo:
        name = todo.popleft()
        if name == ".":
            continue
        if name == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, name)
        if not todo and _own_fd(here) is not None:
            return here
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            if todo:
                raise
            return here
        if not stat.S_ISLNK(st.st_mode):
            done = here
            continue
        hops += 1
        if hops > _MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
        _may_follow(here, st, done)
        target = os.readlink(here)
        if not todo and _own_fd(target) is not None:
            return target
        if target.startswith("/"):
            done = "/"
        todo.extendleft(reversed([p for p in target.split("/") if p]))
    return done


def _can_keep_owner(st: os.stat_result) -> bool:
    """Whether a new file of ours can be given `st`'s owner and group."""
    if os.geteuid() == 0:
        return True
    return st.st_uid == os.geteuid() and (st.st_gid == os.getegid() or st.st_gid in os.getgroups())


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _to_descriptor(fd: int, data: bytes) -> None:
    """Our own stream: written where it points, in its own mode (append stays append)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream.fileno() == fd:
                stream.flush()
    _write_fd(fd, data)


def _to_device(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NOFOLLOW)
    try:
        _write_fd(fd, data)
    finally:
        os.close(fd)


def _in_place(path: str, st: os.stat_result, data: bytes) -> None:
    """Overwrite a regular file where it is: the space first (nothing changes if it is not there), then the
    bytes, then the length."""
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NOFOLLOW)
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(now.st_mode):
            raise OSError(errno.EAGAIN, "the file was replaced while it was being written", path)
        if len(data) > now.st_size:
            try:
                os.posix_fallocate(fd, 0, len(data))
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, now.st_size)
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise
        done = 0
        while done < len(data):
            done += os.pwrite(fd, memoryview(data)[done:], done)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


class _Target:
    """Where `path` really is and how to write it: 'fd', 'device', 'new', 'replace' or 'in-place'."""

    def __init__(self, path: str, exclusive: bool):
        self.path = path
        if exclusive and os.path.lexists(path):  # (a link there too: a new file is made only by its own name)
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
        self.real = resolve(path)
        self.fd = _own_fd(self.real)
        self.st: os.stat_result | None = None
        if self.fd is not None:
            self.how = "fd"
        else:
            try:
                self.st = os.lstat(self.real)
            except FileNotFoundError:
                self.st = None
            self.how = self._how()
        if exclusive and self.how != "new":
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)

    def _how(self) -> str:
        st = self.st
        if st is None:
            return "new"
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            return "device"
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), self.path)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(self.path, "not a regular file, a character device or a pipe")
        directory = os.path.dirname(self.real)
        d = os.stat(directory)
        if _sticky_world_writable(d) and st.st_uid not in (os.geteuid(), d.st_uid):
            raise _refuse(
                self.path,
                f"a file owned by another user (uid {st.st_uid}) in the sticky world-writable directory "
                f"{directory}: not written to",
            )
        if not _can_keep_owner(st) or not os.access(directory, os.W_OK | os.X_OK):
            return "in-place"
        return "replace"


@contextlib.contextmanager
def open_atomic(path: str, *, exclusive: bool = False) -> Iterator[BinaryIO]:
    """A binary file that becomes `path` when the block ends without an error, and nothing otherwise.
    `exclusive`: fail with FileExistsError rather than replace anything (also a file that appears meanwhile)."""
    target = _Target(path, exclusive)
    real, st = target.real, target.st
    fd = tmp = None
    if target.how in ("new", "replace"):
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".{os.path.basename(real)}.", suffix=".partial", dir=os.path.dirname(real)
            )
        except PermissionError:
            if target.how == "new":
                raise
            target.how = "in-place"  # a file we may write in a directory we may not (an ACL, a security module)
    if fd is None or tmp is None:
        buf = io.BytesIO()
        yield buf
        data = buf.getvalue()
        if target.how == "fd":
            assert target.fd is not None
            _to_descriptor(target.fd, data)
        elif target.how == "device":
            _to_device(target.real, data)
        else:
            assert target.st is not None
            _in_place(target.real, target.st, data)
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if st is None:
            os.chmod(tmp, 0o666 & ~_umask())
        else:
            if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                os.chown(tmp, st.st_uid, st.st_gid)
            os.chmod(tmp, st.st_mode & 0o7777)
        if exclusive:
            os.link(tmp, real)  # fails if the name was taken meanwhile: nothing is replaced
            os.unlink(tmp)
        else:
            os.replace(tmp, real)  # (replaces the name: a link put there meanwhile is not followed)
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
    renamed. Fails with FileExistsError when `path` exists (a link there included)."""
    if os.path.lexists(path):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
    parent = resolve(os.path.dirname(os.path.abspath(path)))
    name = os.path.basename(os.path.abspath(path))
    tmp = tempfile.mkdtemp(prefix=f".{name}.", suffix=".partial", dir=parent)
    try:
        for fname, blob in files.items():
            with open(os.path.join(tmp, fname), "xb") as fh:
                fh.write(blob)
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o777 & ~_umask())
        dest = os.path.join(parent, name)
        if os.path.lexists(dest):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
