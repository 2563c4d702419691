"""Read-only file access for checkpoint inspection, over a local disk or any `Host`.

The model readers only ever need four things: read the first N bytes of a file, its size, a
directory listing, and whether a path is a directory. `HostFiles` provides them over the `Host`
interface (so the same reader works on a remote host); `LocalFiles` does it with plain `os` calls.
"""

from __future__ import annotations

import errno
import os
from typing import Protocol

from ..hosts.interface import Host


class FileAccess(Protocol):
    name: str

    def read(self, path: str, max_bytes: int) -> bytes: ...

    def size(self, path: str) -> int: ...

    def list_dir(self, path: str) -> list[str]: ...

    def is_dir(self, path: str) -> bool: ...

    def exists(self, path: str) -> bool: ...


def describe_os_error(exc: OSError) -> str:
    """One line for a file error, naming symlink loops and permissions plainly."""
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if isinstance(exc, PermissionError) or exc.errno == errno.EACCES:
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "file not found"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    return exc.strerror or str(exc)


class LocalFiles:
    name = "local"

    def __init__(self, hf_cache: str | None = None):
        self.hf_cache = hf_cache  # where repo ids are looked up (Settings.hf_cache); None: the hub's default

    def read(self, path: str, max_bytes: int) -> bytes:
        with open(path, "rb") as fh:
            return fh.read(max_bytes)

    def size(self, path: str) -> int:
        return os.stat(path).st_size

    def list_dir(self, path: str) -> list[str]:
        return sorted(os.listdir(path))

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def exists(self, path: str) -> bool:
        # lexists too, so a dangling or looping symlink is reported rather than called absent
        return os.path.exists(path) or os.path.lexists(path)


class HostFiles:
    """File access through a `Host`: read_file/list_dir, and `stat` for sizes."""

    def __init__(self, host: Host, timeout: float = 30.0):
        self.host = host
        self.name = host.name
        self.timeout = timeout

    def read(self, path: str, max_bytes: int) -> bytes:
        return self.host.read_file(path, max_bytes=max_bytes, timeout=self.timeout)

    def size(self, path: str) -> int:
        res = self.host.run(["stat", "-L", "-c", "%s", "--", path], timeout=self.timeout, max_bytes=256)
        if not res.ok:
            err = res.stderr.decode("utf-8", "replace").strip() or res.error or "stat failed"
            if "No such file" in err:
                raise FileNotFoundError(errno.ENOENT, "file not found", path)
            if "Permission denied" in err:
                raise PermissionError(errno.EACCES, "permission denied", path)
            if "Too many levels of symbolic links" in err:
                raise OSError(errno.ELOOP, "symlink loop", path)
            raise OSError(errno.EIO, err.splitlines()[0][:200], path)
        try:
            return int(res.text().strip())
        except ValueError:
            raise OSError(errno.EIO, f"unexpected stat output {res.text()[:40]!r}", path) from None

    def list_dir(self, path: str) -> list[str]:
        return sorted(self.host.list_dir(path, timeout=self.timeout))

    def is_dir(self, path: str) -> bool:
        try:
            self.host.list_dir(path, timeout=self.timeout)
            return True
        except OSError:
            return False

    def exists(self, path: str) -> bool:
        if self.is_dir(path):
            return True
        try:
            self.size(path)
            return True
        except FileNotFoundError:
            return False
        except OSError:
            return True


def files_for(host: Host | None) -> FileAccess:
    """Direct os access on this machine (no subprocess per stat); the Host interface anywhere else."""
    if host is None or host.name == "local":
        return LocalFiles()
    return HostFiles(host)
