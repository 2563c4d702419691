"""Layers that only point down: the package's modules may import only from the tiers below their own.

The tiers, bottom to top (the pipeline is evidence → checks → ranking → rendering; collectors and the
diagnosis service sit above what they drive, the CLI above everything):

  0  errors, redact, stats, atomic, safeio,   no dflash_doctor imports but each other's
     deadline
  1  textsafe, evidence                       the evidence model
  2  payloads, check, names                   typed payloads; the Check interface; the deployment's names
  3  parse, hosts                             log/launch parsers; host transports
  4  probe                                    the GPU probe
  5  models                                   drafter/target readers
  6  engines, rank                            engine-source analysis; knowledge and ranking
  7  settings, registry                       resolved settings; the check loader
  8  checks                                   the checks (checks/ is the dflash_doctor.checks package)
  9  collect, gate                            collectors feeding the EvidenceBuilder; the CI gate's judgement
  10 doctor                                   the diagnosis service
  11 inspection, prometheus, hostcheck        services built on it
  12 render                                   every renderer
  13 cli                                      flags → one service → one renderer
  14 __main__

Imports under `if TYPE_CHECKING:` are not imports at run time and are not counted. Lazy imports inside
functions are counted: a lazy upward import is still an upward dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

TIERS = [
    {"errors", "redact", "stats", "atomic", "safeio", "deadline"},
    {"textsafe", "evidence"},
    {"payloads", "check", "names"},
    {"parse", "hosts"},
    {"probe"},
    {"models"},
    {"engines", "rank"},
    {"settings", "registry"},
    {"checks"},
    {"collect", "gate"},
    {"doctor"},
    {"inspection", "prometheus", "hostcheck"},
    {"render"},
    {"cli"},
    {"__main__"},
]
TIER = {name: i for i, names in enumerate(TIERS) for name in names}


def _module_of(path: Path) -> str:
    if path.is_relative_to(ROOT / "checks"):
        rel = ("dflash_doctor", "checks", *path.relative_to(ROOT / "checks").with_suffix("").parts)
    else:
        rel = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(rel[:-1] if rel[-1] == "__init__" else rel)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def imports_of(path: Path, mod: str) -> list[tuple[str, int]]:
    """(imported dflash_doctor module, line) for every run-time import in `path`, the module `mod`."""
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_nodes(tree)
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".")
                base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "dflash_doctor":  # `from . import x` at the top: x is the module
                out += [(f"dflash_doctor.{a.name}", node.lineno) for a in node.names]
            else:
                out.append((target, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
    return [(t, line) for t, line in out if t.startswith("dflash_doctor.")]


def _top(module: str) -> str:
    return module.split(".")[1]


def sources() -> list[Path]:
    return sorted(p for d in ("dflash_doctor", "checks") for p in (ROOT / d).rglob("*.py"))


def upward_imports(modules) -> list[str]:
    """Violations among (path, module name) pairs."""
    bad = []
    for path, mod in modules:
        if mod == "dflash_doctor":
            continue  # the package's __init__ (version only)
        here = _top(mod)
        for target, line in imports_of(path, mod):
            there = _top(target)
            if there == "__version__" or there == here:
                continue
            assert there in TIER, f"{target} (imported by {path.relative_to(ROOT)}) has no tier: add it to TIERS"
            if TIER[there] >= TIER[here]:
                bad.append(
                    f"{path.name if not path.is_relative_to(ROOT) else path.relative_to(ROOT)}:{line}: {here} (tier {TIER[here]}) imports {target} "
                    f"(tier {TIER[there]})"
                )
    return bad


def test_every_package_has_a_tier():
    tops = {
        p.name if p.is_dir() else p.stem
        for p in (ROOT / "dflash_doctor").iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")
    }
    assert tops | {"checks"} <= set(TIER), sorted(tops - set(TIER))
    assert len(list(sources())) > 150  # the walk sees the package and checks/


def test_imports_point_down():
    bad = upward_imports((p, _module_of(p)) for p in sources())
    assert not bad, "upward or sideways imports between tiers:\n" + "\n".join(bad)


def test_the_layer_test_can_fail(tmp_path):
    """The detector itself: a rank module that imports the renderer, lazily, is caught; a TYPE_CHECKING
    import is not."""
    fake = tmp_path / "probe.py"
    fake.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..cli import app\n"
        "from .baselines import in_force\ndef f():\n    from ..render import terminal\n",
        encoding="utf-8",
    )
    bad = upward_imports([(fake, "dflash_doctor.rank.probe")])
    assert len(bad) == 1 and "imports dflash_doctor.render" in bad[0], bad
