"""Release wheels for the conformance suite: downloaded once into a cache outside the repo, .py files extracted.

Cache: $DFLASH_DOCTOR_WHEEL_CACHE, else ~/.cache/dflash-doctor/wheels (the Makefile's `conformance` target
passes the machine's shared cache when there is one). A wheel is fetched with
`pip download --no-deps --only-binary=:all:` only when the cache holds none for that release; only the
package's `.py` files and its dist-info METADATA are extracted, under <cache>/extracted/<pkg>-<version>/.
Nothing of the engines is ever written into the repository.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

VLLM = (
    "0.19.0",
    "0.19.1",
    "0.20.0",
    "0.20.1",
    "0.20.2",
    "0.21.0",
    "0.22.0",
    "0.22.1",
    "0.23.0",
    "0.24.0",
    "0.25.0",
    "0.25.1",
    "0.26.0",
    "0.27.0",
    "0.27.1",
    "0.28.0",
    "0.29.0",
    "0.30.0",
    "0.31.0",
    "0.32.0",
    "0.33.0",
)
SGLANG = ("0.5.15", "0.5.15.post1", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23")


def cache_dir() -> Path:
    env = os.environ.get("DFLASH_DOCTOR_WHEEL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "dflash-doctor" / "wheels"


class WheelUnavailable(Exception):
    pass


def find_wheel(pkg: str, version: str, cache: Path | None = None) -> Path | None:
    cache = cache or cache_dir()
    # vllm-0.20.1-1-cp38-…whl has a build tag; 0.5.15 must not match 0.5.15.post1
    hits = sorted(p for p in cache.glob(f"{pkg}-{version}-*.whl"))
    return hits[0] if hits else None


def download(pkg: str, version: str, cache: Path | None = None, timeout: float = 1800) -> Path:
    cache = cache or cache_dir()
    found = find_wheel(pkg, version, cache)
    if found:
        return found
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--quiet",
        "-d",
        str(cache),
        f"{pkg}=={version}",
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    found = find_wheel(pkg, version, cache)
    if res.returncode != 0 or found is None:
        why = (res.stderr or res.stdout).strip().splitlines()
        raise WheelUnavailable(f"{pkg}=={version}: " + (why[-1] if why else f"pip exit status {res.returncode}"))
    return found


def extract(wheel: Path, pkg: str, version: str, cache: Path | None = None) -> Path:
    """<cache>/extracted/<pkg>-<version>/ with <pkg>/**.py and <pkg>-<version>.dist-info/METADATA."""
    cache = cache or cache_dir()
    out = cache / "extracted" / f"{pkg}-{version}"
    done = out / ".complete"
    if done.exists():
        return out
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            top = name.split("/", 1)[0]
            keep = (top == pkg and name.endswith(".py")) or (top.endswith(".dist-info") and name.endswith("/METADATA"))
            if keep and ".." not in name.split("/") and not name.startswith("/"):
                z.extract(name, out)
    done.write_text(wheel.name + "\n")
    return out


def tree_for(pkg: str, version: str, fetch: bool = True) -> Path:
    cache = cache_dir()
    out = cache / "extracted" / f"{pkg}-{version}"
    if (out / ".complete").exists():
        return out
    wheel = download(pkg, version, cache) if fetch else find_wheel(pkg, version, cache)
    if wheel is None:
        raise WheelUnavailable(f"{pkg}=={version}: no wheel in {cache}")
    return extract(wheel, pkg, version, cache)


def all_cached() -> bool:
    """Every release of the suite already in the cache (CI runs the suite only then)."""
    cache = cache_dir()
    return all(
        (cache / "extracted" / f"{p}-{v}" / ".complete").exists() or find_wheel(p, v, cache)
        for p, vs in (("vllm", VLLM), ("sglang", SGLANG))
        for v in vs
    )
