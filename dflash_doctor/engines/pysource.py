"""Parsed engine files: modules, classes, imports, base classes — read with `ast`, never imported.

`Sources` wraps a SourceTree, parses each file once, and resolves names the way Python would
statically: a class name through the module's own definitions and its `from … import …` lines, a
class's bases through the same (a simple depth-first MRO, enough for the model hierarchies the
probes walk). Anything it cannot resolve is recorded, so an answer can say which file was missing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .. import pyast
from .answers import Cite
from .tree import SourceTree


@dataclass
class Module:
    path: str
    text: str
    tree: ast.Module | None
    error: str | None = None
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local -> (module, name)
    _lines: list[str] | None = None

    def line(self, n: int) -> str:
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines[n - 1].strip()[:200] if 0 < n <= len(self._lines) else ""

    @property
    def ast_tree(self) -> ast.Module:
        """The parse tree of a module that parsed (what `Sources.parsed` returns)."""
        assert self.tree is not None, f"{self.path} did not parse"
        return self.tree

    def cite(self, node: ast.AST | int) -> Cite:
        n = node if isinstance(node, int) else getattr(node, "lineno", 0)
        return Cite(self.path, n, self.line(n))

    @property
    def dotted(self) -> str:
        p = self.path[:-3] if self.path.endswith(".py") else self.path
        if p.endswith("/__init__"):
            p = p[: -len("/__init__")]
        return p.replace("/", ".")


class Sources:
    def __init__(self, tree: SourceTree):
        self.tree = tree
        self._modules: dict[str, Module | None] = {}
        self.missing: set[str] = set()  # listed files wanted but not readable (not fetched)
        self.absent: set[str] = set()  # files wanted that are not in the install at all

    # -- files ---------------------------------------------------------------------------
    def listing(self) -> tuple[str, ...]:
        return self.tree.listing()

    def module(self, path: str) -> Module | None:
        if path in self._modules:
            return self._modules[path]
        mod = None
        text = self.tree.read(path)
        if text is None:
            (self.missing if self.tree.has(path) else self.absent).add(path)
        else:
            try:
                node = pyast.parse(text, filename=path)
                assert isinstance(node, ast.Module)  # (mode "exec" parses to a Module)
                mod = Module(path, text, node)
                _index(mod)
            except (SyntaxError, ValueError, RecursionError) as exc:
                mod = Module(path, text, None, error=f"{type(exc).__name__}: {exc}"[:200])
        self._modules[path] = mod
        return mod

    def parsed(self, path: str) -> Module | None:
        mod = self.module(path)
        return mod if mod is not None and mod.tree is not None else None

    def module_path(self, dotted: str) -> str | None:
        """The tree path of a dotted module name, if the install has it."""
        base = dotted.replace(".", "/")
        for cand in (f"{base}.py", f"{base}/__init__.py"):
            if self.tree.has(cand):
                return cand
        return None

    # -- names -----------------------------------------------------------------------------
    def resolve_class(self, mod: Module, name: str, depth: int = 0) -> tuple[Module, ast.ClassDef] | None:
        if name in mod.classes:
            return mod, mod.classes[name]
        imp = mod.imports.get(name)
        if imp is None or depth > 6:
            return None
        dotted, orig = imp
        path = self.module_path(dotted)
        if path is None:
            return None
        other = self.parsed(path)
        if other is None:
            return None
        return self.resolve_class(other, orig or name, depth + 1)

    def mro(self, mod: Module, cls: ast.ClassDef) -> list[tuple[Module, ast.ClassDef]]:
        """The class and its bases (depth-first, left to right, each once) that could be resolved."""
        out: list[tuple[Module, ast.ClassDef]] = []
        seen: set[tuple[str, str]] = set()

        def walk(m: Module, c: ast.ClassDef, depth: int) -> None:
            key = (m.path, c.name)
            if key in seen or depth > 12:
                return
            seen.add(key)
            out.append((m, c))
            for base in c.bases:
                name = _base_name(base)
                if name is None:
                    continue
                found = self.resolve_class(m, name)
                if found is not None:
                    walk(found[0], found[1], depth + 1)
                elif name not in _BUILTIN_BASES and name in m.imports:
                    path = self.module_path(m.imports[name][0])
                    if path is not None and self.tree.read(path) is None:
                        self.missing.add(path)

        walk(mod, cls, 0)
        return out

    def find_method(
        self, mro: list[tuple[Module, ast.ClassDef]], name: str
    ) -> tuple[Module, ast.ClassDef, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        for m, c in mro:
            for item in c.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
                    return m, c, item
        return None


_BUILTIN_BASES = {"object", "nn", "Module", "ABC", "Protocol", "Generic", "Enum"}


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):  # Generic[...] etc.
        return _base_name(node.value)
    return None  # nn.Module and other attribute bases are library classes


def _index(mod: Module) -> None:
    assert mod.tree is not None
    pkg = mod.dotted.rsplit(".", 1)[0] if "." in mod.dotted else ""
    if mod.path.endswith("/__init__.py"):
        pkg = mod.dotted
    for node in mod.tree.body:
        if isinstance(node, ast.ClassDef):
            mod.classes[node.name] = node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mod.functions[node.name] = node
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".") if pkg else []
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                mod.imports[alias.asname or alias.name] = (base, alias.name)
        elif isinstance(node, ast.Try):  # `try: from x import y` blocks
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom) and sub.module and not sub.level:
                    for alias in sub.names:
                        mod.imports.setdefault(alias.asname or alias.name, (sub.module, alias.name))


# --- small AST readers used by every probe ---------------------------------------------------


def const_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def const_int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = const_int(node.operand)
        return -v if v is not None else None
    return None


def str_tuple(node: ast.AST | None) -> tuple[str, ...] | None:
    """("a", "b") / ["a", "b"] / {"a", "b"} of string constants, else None."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        out = [const_str(e) for e in node.elts]
        if all(s is not None for s in out):
            return tuple(out)  # type: ignore[arg-type]
    return None


def call_name(node: ast.AST) -> str | None:
    """The last name of a call's function: `self.model.set_x(...)` -> 'set_x'."""
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute):
            return f.attr
        if isinstance(f, ast.Name):
            return f.id
    return None


def mentions(node: ast.AST, word: str) -> bool:
    """Whether a string constant, attribute or name equal to `word` occurs under node."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and sub.value == word:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == word:
            return True
        if isinstance(sub, ast.Name) and sub.id == word:
            return True
    return False


def string_of(node: ast.AST) -> str | None:
    """The text of a string built from constants: 'a' 'b', 'a' + 'b', f-strings (placeholders as {…})."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            else:
                parts.append("{…}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = string_of(node.left), string_of(node.right)
        if a is not None and b is not None:
            return a + b
    return None
