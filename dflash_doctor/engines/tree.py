"""An installed engine's files, as the analysis sees them: a listing and the text of the files it asks for.

The analysis never imports or runs anything from the engine: it reads text. Paths are relative to
the *site* directory, the one holding the package directory (`vllm/config/vllm.py`) and, for an
installed distribution, its metadata (`vllm-0.20.1.dist-info/METADATA`). A source checkout on
PYTHONPATH has the package directory and no dist-info; that is a valid tree too.

Two implementations:
  * `DirectoryTree`   a local directory: an extracted wheel, a site-packages directory, a checkout;
  * `FetchedTree`     what a collector brought back from a host: a listing plus the texts it fetched.

The collector's protocol (two reads on the host, nothing executed there):
  1. list the package's `.py` files and the site directory's `*.dist-info` names, and fetch
     `version_files(engine, listing)`;
  2. fetch `wanted_files(engine, listing, target_architectures)` (analysis.py) — then, if it wants to
     be thorough, one more round with `follow_up(...)`, which names the modules the target's classes
     import that were not fetched yet.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping

MAX_FILE_BYTES = 2 << 20  # a source file larger than this is not read (no engine file comes close)


class SourceTree(ABC):
    """A read-only view of an engine install: which files exist, and their text."""

    name: str = "tree"  # where it came from, for messages ("/opt/venv/lib/python3.11/site-packages", "host:…")

    @abstractmethod
    def listing(self) -> tuple[str, ...]:
        """Relative paths ('/'-separated) of the package's .py files and the dist-info metadata files."""

    @abstractmethod
    def read(self, path: str) -> str | None:
        """The text of one listed file, or None when it is not available (not fetched, unreadable)."""

    def has(self, path: str) -> bool:
        return path in self._listed()

    def _listed(self) -> frozenset[str]:
        cached = getattr(self, "_listed_cache", None)
        if cached is None:
            cached = frozenset(self.listing())
            self._listed_cache = cached
        return cached


class DirectoryTree(SourceTree):
    """A local directory holding `<engine>/…` and possibly `<engine>-X.dist-info/`.

    Given the package directory itself (…/site-packages/vllm), its parent is used as the root.
    """

    def __init__(self, root: str | os.PathLike, packages: Iterable[str] = ("vllm", "sglang")):
        root = os.path.abspath(os.fspath(root))
        base = os.path.basename(root.rstrip(os.sep))
        if base in packages and os.path.isfile(os.path.join(root, "__init__.py")):
            root = os.path.dirname(root)
        self.root = root
        self.packages = tuple(packages)
        self.name = root
        self._listing: tuple[str, ...] | None = None

    def listing(self) -> tuple[str, ...]:
        if self._listing is None:
            out: list[str] = []
            try:
                names = sorted(os.listdir(self.root))
            except OSError:
                names = []
            for name in names:
                full = os.path.join(self.root, name)
                if name in self.packages and os.path.isdir(full):
                    for dirpath, dirnames, filenames in os.walk(full):
                        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
                        rel = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
                        out.extend(f"{rel}/{f}" for f in sorted(filenames) if f.endswith(".py"))
                elif name.endswith((".dist-info", ".egg-info")) and name.split("-")[0].lower() in self.packages:
                    meta = "METADATA" if name.endswith(".dist-info") else "PKG-INFO"
                    if os.path.isfile(os.path.join(full, meta)):
                        out.append(f"{name}/{meta}")
            self._listing = tuple(out)
        return self._listing

    def read(self, path: str) -> str | None:
        if path.startswith("/") or ".." in path.split("/"):
            return None
        full = os.path.join(self.root, *path.split("/"))
        try:
            if os.path.getsize(full) > MAX_FILE_BYTES:
                return None
            with open(full, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return None


class FetchedTree(SourceTree):
    """A listing and the texts a collector fetched (bytes are decoded as UTF-8 with replacement)."""

    def __init__(self, listing: Iterable[str], files: Mapping[str, str | bytes], name: str = "host"):
        self._listing = tuple(dict.fromkeys(p for p in listing if p))
        self._files: dict[str, str] = {}
        for path, data in files.items():
            if isinstance(data, bytes):
                if len(data) > MAX_FILE_BYTES:
                    continue
                data = data.decode("utf-8", "replace")
            self._files[path] = data
        self.name = name

    def listing(self) -> tuple[str, ...]:
        return self._listing

    def read(self, path: str) -> str | None:
        return self._files.get(path)

    def add(self, files: Mapping[str, str | bytes]) -> None:
        """Texts fetched in a later round."""
        for path, data in files.items():
            self._files[path] = data.decode("utf-8", "replace") if isinstance(data, bytes) else data

    def fetched(self) -> tuple[str, ...]:
        return tuple(self._files)
