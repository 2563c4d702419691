"""Which schema library: msgspec or pydantic v2, measured on what dflash-doctor does with one.

Four figures per library, each against the same baseline:

  import      CPU time of `import typer, rich, LIB` minus `import typer, rich` (the CLI's own floor),
              median of interleaved fresh interpreters
  first use   a fresh interpreter: import, define the causes.toml types, validate causes.toml once
              (what a `diagnose` pays), minus the same interpreter doing only the TOML parse
  validate    validating the parsed causes.toml again (types built, median per call)
  installed   bytes of the distribution's files (and its required distributions) on disk

    python benchmarks/bench_schema_libs.py [--runs 15]

Both libraries must be installed (`pip install msgspec pydantic`); the one not installed is reported
as such. The types below describe causes.toml's shape only: enough to compare the libraries on the
real document; the package's own types live in dflash_doctor/schema.py.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from importlib import metadata
from pathlib import Path

CAUSES = Path(__file__).resolve().parent.parent / "dflash_doctor" / "knowledge" / "causes.toml"

TYPES = {
    "msgspec": """
import msgspec
from typing import Optional
class TableFix(msgspec.Struct, forbid_unknown_fields=True):
    field: str
    fixed: list[str]
    fixed_if_uniform: list[str] = []
class ReleaseFix(msgspec.Struct, forbid_unknown_fields=True):
    engine: str
    versions: str
    fix: str
    next_step: Optional[str] = None
class Cause(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    title: str
    prior: float
    fix: str
    next_step: str
    decided_by: list[str] = []
    silence_note: Optional[str] = None
    expected_tau: str = "unknown"
    methods: list[str] = []
    suspect: bool = False
    remedy: str = "change"
    ablation: Optional[str] = None
    table_fix: Optional[TableFix] = None
    release_prior: Optional[float] = None
    release_fix: list[ReleaseFix] = []
class Rule(msgspec.Struct, forbid_unknown_fields=True):
    observation: str
    cause: str
    weight: float
    text: str
    contradicts_fix: bool = False
    fix: Optional[str] = None
class Separator(msgspec.Struct, forbid_unknown_fields=True):
    causes: list[str]
    step: str
class Doc(msgspec.Struct, forbid_unknown_fields=True):
    schema: int
    cause: list[Cause] = []
    rule: list[Rule] = []
    separator: list[Separator] = []
    circumstantial: list[str] = []
def check(d):
    return msgspec.convert(d, Doc)
""",
    "pydantic": """
import pydantic
from typing import Optional
class B(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=False)
class TableFix(B):
    field: str
    fixed: list[str]
    fixed_if_uniform: list[str] = []
class ReleaseFix(B):
    engine: str
    versions: str
    fix: str
    next_step: Optional[str] = None
class Cause(B):
    id: str
    title: str
    prior: float
    fix: str
    next_step: str
    decided_by: list[str] = []
    silence_note: Optional[str] = None
    expected_tau: str = "unknown"
    methods: list[str] = []
    suspect: bool = False
    remedy: str = "change"
    ablation: Optional[str] = None
    table_fix: Optional[TableFix] = None
    release_prior: Optional[float] = None
    release_fix: list[ReleaseFix] = []
class Rule(B):
    observation: str
    cause: str
    weight: float
    text: str
    contradicts_fix: bool = False
    fix: Optional[str] = None
class Separator(B):
    causes: list[str]
    step: str
class Doc(B):
    schema_: int = pydantic.Field(alias="schema")
    cause: list[Cause] = []
    rule: list[Rule] = []
    separator: list[Separator] = []
    circumstantial: list[str] = []
def check(d):
    return Doc.model_validate(d)
""",
}

_CPU = "import time as _t, sys as _s\n_c0 = _t.process_time()\n{body}\n_s.stdout.write(repr(_t.process_time() - _c0))"


def _cpu(body: str) -> float:
    """CPU seconds a fresh interpreter spends running `body` (interpreter start-up excluded)."""
    out = subprocess.run(
        [sys.executable, "-c", _CPU.format(body=body)], capture_output=True, text=True, check=True
    ).stdout
    return float(out)


def _paired(a: str, b: str, runs: int) -> float:
    """Median of (cost of a - cost of b), run interleaved so drift hits both alike."""
    _cpu(a), _cpu(b)  # warm the page cache
    return statistics.median(_cpu(a) - _cpu(b) for _ in range(runs))


def _installed(dist: str, seen: set[str] | None = None) -> int:
    """Bytes on disk of a distribution's files and of the distributions it requires (each counted once)."""
    seen = set() if seen is None else seen
    key = dist.lower().replace("_", "-")
    if key in seen:
        return 0
    seen.add(key)
    try:
        d = metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return 0
    total = sum(f.locate().stat().st_size for f in d.files or () if Path(f.locate()).is_file())
    for req in d.requires or ():
        if "extra ==" in req:
            continue
        name = req.split(";")[0].split("[")[0].split("(")[0]
        for sep in "<>=!~ ":
            name = name.split(sep)[0]
        if name.strip().lower() not in ("typing-extensions", "typing_extensions"):  # typer needs it already
            total += _installed(name.strip(), seen)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    parse = f"import tomllib; d = tomllib.loads(open({str(CAUSES)!r}, 'rb').read().decode())"
    print(f"python {sys.version.split()[0]}, causes.toml {CAUSES.stat().st_size} bytes, {args.runs} runs each")
    for lib, types in TYPES.items():
        try:
            version = metadata.version(lib)
        except metadata.PackageNotFoundError:
            print(f"{lib}: not installed")
            continue
        imp = _paired(f"import typer, rich, {lib}", "import typer, rich", args.runs)
        first = _paired(f"{parse}\n{types}\ncheck(d)", parse, args.runs)
        bench = f"{parse}\n{types}\ncheck(d)\nimport timeit\n" + (
            "print(min(timeit.repeat(lambda: check(d), number=200, repeat=5)) / 200)"
        )
        per_call = float(
            subprocess.run([sys.executable, "-c", bench], capture_output=True, text=True, check=True).stdout
        )
        size = _installed(lib)
        print(
            f"{lib} {version}: import after typer+rich +{imp * 1e3:.1f} ms CPU; "
            f"types + first validation +{first * 1e3:.1f} ms; validating causes.toml {per_call * 1e6:.0f} µs; "
            f"installed {size / 1e6:.1f} MB"
        )


if __name__ == "__main__":
    main()
