"""Layers that only point down: the package's modules may import only from the tiers below their own.

The tiers, bottom to top (the pipeline is evidence → checks → ranking → rendering; collectors and the
diagnosis service sit above what they drive, the CLI above everything):

  0  errors, redact, stats, atomic, versions, no dflash_doctor imports but each other's
     model_ref, safeio, deadline, pyast
  1  textsafe, evidence, schema               the evidence model and every payload type; input shapes
  2  check, names                             the Check interface; the deployment's names
  3  parse, hosts                             log/launch parsers; host transports
  4  probe                                    the GPU probe
  5  models                                   drafter/target readers
  6  knowledge                                the causes and their rules, as data
  7  engines, interpret                       engine-source analysis; what the evidence means
  8  settings                                 resolved settings
  9  checks                                   the checks (checks/ is the dflash_doctor.checks package)
  10 collect, rank, registry                  collectors feeding the EvidenceBuilder; scoring and the fix
                                              plan; the check loader
  11 services                                 doctor, hostcheck, inspection, gate
  12 prometheus                               the fleet read from Prometheus, each engine diagnosed
  13 render                                   every renderer
  14 cli                                      flags → one service → one renderer
  15 __main__

Imports under `if TYPE_CHECKING:` are not imports at run time and are not counted. Lazy imports inside
functions are counted (a lazy upward import is still an upward dependency), and so are imports by name:
`importlib.import_module`/`__import__` calls and module names spelled in strings, which would otherwise hide
a dependency (a table of "module:Class" strings once hid a cycle through four packages).

No module may import itself back through others, by any of these routes or a TYPE_CHECKING import.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

TIERS = [
    {"errors", "redact", "stats", "atomic", "versions", "model_ref", "safeio", "deadline", "pyast"},
    {"textsafe", "evidence", "schema"},
    {"check", "names"},
    {"parse", "hosts"},
    {"probe"},
    {"models"},
    {"knowledge"},
    {"engines", "interpret"},
    {"settings"},
    {"checks"},
    {"collect", "rank", "registry"},
    {"services"},
    {"prometheus"},
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


def sources() -> list[Path]:
    return sorted(p for d in ("dflash_doctor", "checks") for p in (ROOT / d).rglob("*.py"))


MODULES = frozenset(_module_of(p) for p in sources())
_DOTTED = re.compile(r"dflash_doctor(?:\.\w+)+")


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def _from_import(node: ast.ImportFrom, mod: str, is_pkg: bool) -> list[str]:
    if node.level:
        base = mod.split(".")
        base = base[: len(base) - node.level + (1 if is_pkg else 0)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    # `from pkg import name` imports the module pkg.name when there is one (`from . import sglang as sg`)
    subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
    return subs if len(subs) == len(node.names) else [target, *subs]


def _dynamic(node: ast.Call, mod: str, is_pkg: bool, constants: list[str]) -> list[str]:
    """What an `importlib.import_module(...)` or `__import__(...)` call loads, as far as the text says: a literal
    name; `f"{__name__}.{x}"` or `f"{__package__}.{x}"` (each submodule whose name the module spells in a
    string); a literal prefix (`f"dflash_doctor.checks.{name}"`: that package)."""
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    if name not in ("import_module", "__import__") or not node.args:
        return []
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.JoinedStr) and arg.values:
        head = arg.values[0]
        if isinstance(head, ast.FormattedValue) and ast.unparse(head.value) in ("__name__", "__package__"):
            pkg = mod if is_pkg or ast.unparse(head.value) == "__name__" else mod.rpartition(".")[0]
            return [f"{pkg}.{c}" for c in constants if f"{pkg}.{c}" in MODULES]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            return [head.value.rstrip(".")]
    return []


def imports_of(path: Path, mod: str, type_checking: bool = False) -> list[tuple[str, int]]:
    """(imported dflash_doctor module, line) for every import in `path`, the module `mod`: import statements at
    any depth, `importlib.import_module`/`__import__` calls, and module names spelled in strings. Imports under
    `if TYPE_CHECKING:` count only with `type_checking`."""
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if type_checking else _type_checking_nodes(tree)
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    # `resources.files("dflash_doctor.rank")` names a package to read data files from, not a dependency
    data = {
        id(a)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("files")
        for a in n.args
    }
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            out += [(t, node.lineno) for t in _from_import(node, mod, is_pkg)]
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.Call):
            out += [(t, node.lineno) for t in _dynamic(node, mod, is_pkg, constants)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in data:
            m = _DOTTED.fullmatch(node.value.partition(":")[0])
            if m:
                out.append((m.group(), node.lineno))
    return list(dict.fromkeys((t, line) for t, line in out if t.startswith("dflash_doctor.") and t != mod))


def _top(module: str) -> str:
    return module.split(".")[1]


def _resolve(target: str, known: set[str]) -> str | None:
    """The module a dotted name lands in (`dflash_doctor.evidence.Kind` -> `dflash_doctor.evidence`)."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def cycles(modules) -> list[list[str]]:
    """Import cycles (strongly connected groups of more than one module) among (path, module name) pairs."""
    pairs = list(modules)
    known = set(MODULES) | {mod for _, mod in pairs}
    graph: dict[str, set[str]] = {}
    for path, mod in pairs:
        targets = (_resolve(t, known) for t, _ in imports_of(path, mod, type_checking=True))
        graph[mod] = {r for r in targets if r not in (None, mod)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            if group:
                found.append(sorted([v, *group]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


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
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                bad.append(f"{where}:{line}: {here} (tier {TIER[here]}) imports {target} (tier {TIER[there]})")
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


def test_the_layer_test_sees_imports_by_name(tmp_path):
    """A module named in a string, in an import_module call or a `from pkg import module` counts as an import."""
    fake = tmp_path / "probe.py"
    fake.write_text(
        "import importlib\nTABLE = {'x': 'dflash_doctor.render.json_report:dumps_safe'}\n"
        "def f():\n    return importlib.import_module('dflash_doctor.cli.app')\n",
        encoding="utf-8",
    )
    bad = upward_imports([(fake, "dflash_doctor.rank.probe")])
    assert len(bad) == 2 and "dflash_doctor.render.json_report" in bad[0] and "dflash_doctor.cli.app" in bad[1], bad
    init = tmp_path / "__init__.py"
    init.write_text("from . import sglang as sg\n", encoding="utf-8")
    assert imports_of(init, "dflash_doctor.engines") == [("dflash_doctor.engines.sglang", 1)]


def test_no_import_cycle():
    found = cycles((p, _module_of(p)) for p in sources())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_test_can_fail(tmp_path):
    """Two modules that import each other, one of them by name in a string, form a cycle."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from .b import x\n", encoding="utf-8")
    b.write_text("WHERE = 'dflash_doctor.rank.a:Thing'\n", encoding="utf-8")
    assert cycles([(a, "dflash_doctor.rank.a"), (b, "dflash_doctor.rank.b")]) == [
        ["dflash_doctor.rank.a", "dflash_doctor.rank.b"]
    ]
