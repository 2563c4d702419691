"""The wire format of the scripts' answers: one line per item, `KIND b64(path) b64(data)` (see `emit` in
scripts.py), decoded into a Batch; errors arrive as `E<KIND> b64(path) CODE`. encode_batch writes the same
format back (bundles keep sanitized answers in it)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, cast


@dataclass
class Batch:
    files: dict[str, bytes | OSError] = field(default_factory=dict)
    links: dict[str, str | OSError] = field(default_factory=dict)
    dirs: dict[str, list[str] | OSError] = field(default_factory=dict)
    sizes: dict[str, int | OSError] = field(default_factory=dict)
    gpu: tuple[int, bytes] | None = None  # (exit status, output) of the survey's nvidia-smi query
    error: str | None = None

    def table(self, kind: str) -> dict[str, Any]:
        tables: dict[str, dict[str, Any]] = {"F": self.files, "L": self.links, "D": self.dirs, "S": self.sizes}
        return tables[kind]


_ERR = {
    "M": lambda p: FileNotFoundError(2, "No such file or directory", p),
    "P": lambda p: PermissionError(13, "Permission denied", p),
    "I": lambda p: IsADirectoryError(21, "Is a directory", p),
    # refused by the checkpoint guard (_GUARD): never read, so never in a report or a bundle
    "O": lambda p: RefusedRead("O", p),
    "U": lambda p: RefusedRead("U", p),
}


class RefusedRead(PermissionError):
    """A checkpoint file the guard would not read (a link out of the checkpoint, another user's file)."""

    WHY = {
        "O": "not read: its real location is outside the checkpoint directory",
        "U": "not read: owned by another user than the serving process, and not world-readable",
    }

    def __init__(self, code: str, path: str):
        super().__init__(13, self.WHY[code], path)
        self.code = code


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return b""


def parse_batch(out: bytes) -> Batch:
    """Decode the output of READ_MANY / SURVEY / MODELS (see `emit`)."""
    b = Batch()
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split(" ")
        if len(parts) < 2:
            continue
        k = parts[0]
        if k == "G" and parts[1].lstrip("-").isdigit():
            b.gpu = (int(parts[1]), _b64(parts[2]) if len(parts) > 2 else b"")
            continue
        path = _b64(parts[1]).decode("utf-8", "surrogateescape")
        data = _b64(parts[2]) if len(parts) > 2 else b""
        if k == "F":
            b.files[path] = data
        elif k == "L":
            b.links[path] = data.decode("utf-8", "surrogateescape")
        elif k == "D":
            b.dirs[path] = sorted(n.decode("utf-8", "surrogateescape") for n in data.split(b"\0") if n)
        elif k == "S":
            txt = data.decode("ascii", "replace").strip()
            b.sizes[path] = int(txt) if txt.isdigit() else OSError(f"{path}: no size")
        elif len(k) == 2 and k[0] == "E" and k[1] in "FLDS" and len(parts) > 2 and parts[2] in _ERR:
            b.table(k[1])[path] = _ERR[parts[2]](path)
    return b


def encode_batch(b: Batch) -> bytes:
    def e(x: bytes | str) -> str:
        return base64.b64encode(x.encode("utf-8", "surrogateescape") if isinstance(x, str) else x).decode("ascii")

    lines = []
    if b.gpu is not None:
        lines.append(f"G {b.gpu[0]} {e(b.gpu[1])}")
    for kind, table in (("F", b.files), ("L", b.links), ("D", b.dirs), ("S", b.sizes)):
        for path, v in table.items():
            if isinstance(v, OSError):
                code = (
                    v.code
                    if isinstance(v, RefusedRead)
                    else "P"
                    if isinstance(v, PermissionError)
                    else "I"
                    if isinstance(v, IsADirectoryError)
                    else "M"
                )
                lines.append(f"E{kind} {e(path)} {code}")
            elif kind == "D":
                lines.append(f"D {e(path)} {e(chr(0).join(cast(list[str], v)))}")
            elif kind == "S":
                lines.append(f"S {e(path)} {e(str(v))}")
            else:
                lines.append(f"{kind} {e(path)} {e(cast(bytes | str, v))}")  # F: bytes, L: str
    return ("\n".join(lines) + "\n").encode("ascii") if lines else b""


def parse_engine_locate(out: bytes, name: str) -> dict | None:
    """Decode ENGINE_LOCATE's answer: the package's site dir, how it was found, the listing and the version
    files (both relative to the site dir, as dflash_doctor.engines wants them). None when no package was found."""
    site = how = None
    listing: list[str] = []
    rest = []
    for line in out.decode("utf-8", "replace").splitlines():
        if line.startswith("PKG "):
            parts = line.split(" ")
            site = _b64(parts[1]).decode("utf-8", "surrogateescape") if len(parts) > 1 else None
            how = parts[2] if len(parts) > 2 else None
        elif line.startswith("P "):
            rel = line[2:].strip()
            if rel and not rel.startswith("/") and ".." not in rel.split("/"):
                listing.append(f"{name}/{rel}")
        elif line.startswith("M "):
            continue  # the /metrics lines (_metrics reads them)
        else:
            rest.append(line)
    if not site:
        return None
    files = {}
    for path, data in parse_batch("\n".join(rest).encode()).files.items():
        if isinstance(data, bytes) and path.startswith(site.rstrip("/") + "/"):
            rel = path[len(site.rstrip("/")) + 1 :]
            files[rel] = data
            if rel not in listing:
                listing.append(rel)
    return {
        "site": site.rstrip("/"),
        "location": f"{site.rstrip('/')}/{name}",
        "how": how,
        "listing": listing,
        "files": files,
    }
