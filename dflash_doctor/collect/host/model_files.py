"""File access for the model readers (models.facts) on a host: answers from the first batch, and one
guarded MODEL_READ call per file the batch lacks."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ...models.file_access import HostFiles
from .protocol import Batch, parse_batch
from .scripts import MODEL_READ, SAFETENSORS_PREFIX

if TYPE_CHECKING:
    from ...hosts.interface import Host


class BatchFiles:
    """inspect-model's FileAccess, answered from a batch; whatever the batch lacks goes to `fallback`.

    tokenizer.json (often > 10 MiB) is not fetched from a host: the target's special-token ids come
    from tokenizer_config.json, which the batch carries.
    """

    SKIP = ("tokenizer.json",)

    def __init__(self, batch: Batch, fallback, name: str, batch_max: int = 1 << 20):
        self.b, self.fallback, self.name, self.batch_max = batch, fallback, name, batch_max

    def _cap(self, path: str) -> int:
        return SAFETENSORS_PREFIX if path.endswith(".safetensors") else self.batch_max

    def read(self, path: str, max_bytes: int) -> bytes:
        v = self.b.files.get(path)
        if isinstance(v, OSError):
            raise v
        if isinstance(v, bytes):
            size = self.b.sizes.get(path)
            whole = len(v) < self._cap(path) or (isinstance(size, int) and len(v) >= size)
            if whole or max_bytes <= len(v):
                return v[:max_bytes]
        if v is None and os.path.basename(path) in self.SKIP:
            raise OSError(27, "not transferred from the host (large file)", path)
        return self.fallback.read(path, max_bytes)

    def size(self, path: str) -> int:
        v = self.b.sizes.get(path)
        if isinstance(v, OSError):
            raise v
        return v if isinstance(v, int) else self.fallback.size(path)

    def list_dir(self, path: str) -> list[str]:
        v = self.b.dirs.get(path)
        if isinstance(v, OSError):
            raise v
        return list(v) if isinstance(v, list) else self.fallback.list_dir(path)

    def is_dir(self, path: str) -> bool:
        if isinstance(self.b.dirs.get(path), list):
            return True
        if isinstance(self.b.files.get(path), (bytes, IsADirectoryError)):
            return isinstance(self.b.files.get(path), IsADirectoryError)
        return self.fallback.is_dir(path)

    def exists(self, path: str) -> bool:
        for table in (self.b.dirs, self.b.files, self.b.sizes):
            v = table.get(path)
            if v is not None:
                return not isinstance(v, FileNotFoundError)
        return self.fallback.exists(path)


class GuardedFiles:
    """The readers' fallback for checkpoint files outside the first batch: one MODEL_READ call per file,
    under the same guard (nothing outside the checkpoint directory, nothing the serving process's user
    could not share). Listings and sizes carry no content and go to the host directly."""

    def __init__(self, host: Host, timeout: float, root: str, pid: int):
        self.host, self.timeout, self.root, self.pid = host, timeout, root, pid
        self.plain = HostFiles(host, timeout=timeout)
        self.name = self.plain.name

    def read(self, path: str, max_bytes: int) -> bytes:
        res = self.host.run(
            ["sh", "-c", MODEL_READ, "sh", str(max_bytes), str(self.pid), self.root, f"F:{path}"],
            timeout=self.timeout,
            max_bytes=max_bytes * 2 + (1 << 16),
        )
        v = parse_batch(res.stdout).files.get(path)
        if isinstance(v, bytes):
            return v[:max_bytes]
        if isinstance(v, OSError):
            raise v
        raise OSError(5, res.error or "not read", path)

    def size(self, path: str) -> int:
        return self.plain.size(path)

    def list_dir(self, path: str) -> list[str]:
        return self.plain.list_dir(path)

    def is_dir(self, path: str) -> bool:
        return self.plain.is_dir(path)

    def exists(self, path: str) -> bool:
        return self.plain.exists(path)
