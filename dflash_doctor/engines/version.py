"""The engine's version from every place an install keeps it, and which one is used.

Order of trust: the distribution metadata (`<engine>-X.dist-info/METADATA`, what pip installed),
then the package's own generated `_version.py`, then a literal in `version.py`, then the version a
log's startup line claims (a log line is a claim, so it comes last). A source checkout on
PYTHONPATH has no dist-info; its `_version.py` (written by the build) still names the version.
All readings are kept so a disagreement is visible (a wheel upgraded over a checkout, a stale
dist-info beside a newer tree).
"""

from __future__ import annotations

import ast
import re

from .. import pyast
from .answers import VersionReading
from .tree import SourceTree

_VERSION_RE = re.compile(r"^\s*v?\d+(\.\d+)*([.+-]?[0-9A-Za-z.+-]*)?\s*$")


def version_files(engine: str, listing: tuple[str, ...] | list[str]) -> list[str]:
    """The files that hold the version, in order of trust (those present in the listing)."""
    metas = sorted(
        p
        for p in listing
        if p.endswith((".dist-info/METADATA", ".egg-info/PKG-INFO"))
        and p.split("/")[0].split("-")[0].lower().replace("_", "-") == engine
    )
    own = [f"{engine}/_version.py", f"{engine}/version.py"]
    return metas + [p for p in own if p in set(listing)]


def read_version(engine: str, tree: SourceTree, log_version: str | None = None) -> VersionReading:
    readings: list[tuple[str, str]] = []
    for path in version_files(engine, tree.listing()):
        text = tree.read(path)
        if text is None:
            continue
        v = _from_metadata(text, engine) if path.endswith(("METADATA", "PKG-INFO")) else _from_python(text)
        if v:
            readings.append((path, v))
    if log_version and _VERSION_RE.match(log_version):
        readings.append(("log startup line", log_version.strip()))
    if not readings:
        return VersionReading(None, None, ())
    metas = [r for r in readings if r[0].endswith(("METADATA", "PKG-INFO"))]
    # several dist-info dirs: the one whose name carries the version it states is the consistent one
    chosen = next(
        (r for r in metas if f"-{r[1]}.dist-info" in r[0] or f"-{r[1]}.egg-info" in r[0]),
        metas[0] if metas else readings[0],
    )
    numeric = {_release(v) for _, v in readings}
    return VersionReading(chosen[1], chosen[0], tuple(readings), conflicts=len(numeric) > 1)


def _release(v: str) -> str:
    m = re.match(r"v?(\d+(?:\.\d+)*)", v.strip())
    return m.group(1) if m else v


def _from_metadata(text: str, engine: str) -> str | None:
    name = None
    for line in text.splitlines()[:40]:
        if not line.strip():
            break  # headers end at the first blank line
        if line.lower().startswith("name:"):
            name = line.split(":", 1)[1].strip().lower().replace("_", "-")
        elif line.lower().startswith("version:"):
            v = line.split(":", 1)[1].strip()
            if (name is None or name == engine) and _VERSION_RE.match(v):
                return v
    return None


def _from_python(text: str) -> str | None:
    """`__version__ = version = '0.20.1'` (or `__version__ = "…"`): a literal assignment only."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            value = node.value
            if (
                names & {"__version__", "version"}
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
                and _VERSION_RE.match(value.value)
            ):
                return value.value.strip()
    return None
