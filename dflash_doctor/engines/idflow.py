"""Follow a drafter's layer ids through one function: by how much are they shifted where they leave it?

A small abstract interpreter over a function's `ast`. Every value is a set of tags; a tag says
"a list of (or one element of) layer ids that came from ORIGIN, shifted by SHIFT". Origins are the
config keys the ids are read from (`target_layer_ids` -> "dflash", `eagle_aux_hidden_state_layer_ids`
-> "eagle") or a parameter named as the source. It understands what engines actually write:

    ids = cfg.get("target_layer_ids")                    reads (also cfg["…"], getattr(cfg, "…"), cfg.…)
    ids = [i + 1 for i in ids or []]                     comprehensions / generator expressions / map(lambda)
    tuple(ids), list(ids), sorted(ids)                   copies
    out.append(layer_id + 1) in a for loop               accumulation
    if / else, try, with                                 every path is kept (the union of what it can hold)
    return …, self.x.layers_to_capture = …, obj.set_…_layers_to_capture(…)   where the ids leave

and nothing else: ids handed to an unknown function, arithmetic on a whole list, a slice, are
recorded as "could not follow" (shift None) rather than guessed. `len(ids) + 1` is a number, not ids,
so a +1 on a length never counts as a shift.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeGuard

LIST, ELEM = "list", "elem"
ORIGIN_KEYS = {"target_layer_ids": "dflash", "eagle_aux_hidden_state_layer_ids": "eagle"}
COPY_CALLS = {"tuple", "list", "sorted"}
ELEM_CALLS = {"int"}


@dataclass(frozen=True)
class Tag:
    origin: str
    shift: int | None  # None: the ids went through something this interpreter cannot follow
    kind: str  # LIST | ELEM
    at: int = 0  # the line of the read, or of the latest shift


@dataclass
class Exit:
    """Where ids leave the function: a return, an attribute store, or a call that hands them on."""

    how: str  # "return" | "attr:NAME" | "call:NAME"
    value: frozenset
    node: ast.AST


@dataclass
class Flow:
    exits: list[Exit] = field(default_factory=list)
    lost: list[ast.AST] = field(default_factory=list)  # nodes where ids went out of sight

    def shifts(self, origin: str = "dflash", how: Iterable[str] | None = None) -> set[int | None]:
        out: set[int | None] = set()
        for e in self.exits:
            if how is not None and not any(e.how == h or e.how.startswith(h) for h in how):
                continue
            out |= {t.shift for t in e.value if t.origin == origin}
        return out

    def exits_of(self, origin: str = "dflash") -> list[Exit]:
        return [e for e in self.exits if any(t.origin == origin for t in e.value)]


SINK_ATTRS = ("layers_to_capture", "aux_hidden_state_layers")
SINK_CALLS = (
    "set_dflash_layers_to_capture",
    "set_aux_hidden_state_layers",
    "_set_aux_hidden_state_layers",
    "set_eagle3_layers_to_capture",
)


def follow(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    sources: dict[str, str] | None = None,
    sink_attrs: Iterable[str] = SINK_ATTRS,
    sink_calls: Iterable[str] = SINK_CALLS,
    origin_of: Callable[[ast.expr], str | None] | None = None,
) -> Flow:
    """Interpret `fn`; `sources` maps parameter names to origins (their ids start unshifted). `origin_of`, when
    given, names the origin of a config read instead of the key alone (e.g. by where the key is read from)."""
    env: dict[str, frozenset] = {}
    for name, origin in (sources or {}).items():
        env[name] = frozenset({Tag(origin, 0, LIST, fn.lineno)})
    it = _Interp(set(sink_attrs), set(sink_calls), origin_of or _source_read)
    it.block(fn.body, env)
    return it.flow


class _Interp:
    def __init__(self, sink_attrs: set[str], sink_calls: set[str], origin_of: Callable[[ast.expr], str | None]):
        self.flow = Flow()
        self.sink_attrs = sink_attrs
        self.sink_calls = sink_calls
        self.origin_of = origin_of

    # -- statements: each returns the environment after it, or None when the path ended ------
    def block(self, stmts: list[ast.stmt], env: dict | None) -> dict | None:
        for s in stmts:
            if env is None:
                return None
            env = self.stmt(s, env)
        return env

    def stmt(self, s: ast.stmt, env: dict) -> dict | None:  # noqa: C901 -- AST dispatcher: one branch per statement kind the data-flow follows
        if isinstance(s, ast.Return):
            if s.value is not None:
                self.flow.exits.append(Exit("return", self.expr(s.value, env), s))
            return None
        if isinstance(s, ast.Raise):
            return None
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if s.value is None:
                return env
            val = self.expr(s.value, env)
            env = dict(env)
            for t in targets:
                self.assign(t, val, env, s)
            return env
        if isinstance(s, ast.AugAssign):
            env = dict(env)
            cur = self.expr(s.target, env) if isinstance(s.target, ast.Name) else frozenset()
            val = self.expr(s.value, env)
            merged = _lose(cur | val) if (_ids(cur) or _ids(val)) else frozenset()
            if _ids(cur) or _ids(val):
                self.flow.lost.append(s)
            self.assign(s.target, merged, env, s)
            return env
        if isinstance(s, ast.Expr):
            if _accumulates(s.value):
                return self.after_call(s.value, env)
            self.expr(s.value, env)
            return env
        if isinstance(s, ast.If):
            self.expr(s.test, env)
            a = self.block(s.body, dict(env))
            b = self.block(s.orelse, dict(env))
            return _join(a, b)
        if isinstance(s, (ast.For, ast.AsyncFor)):
            src = self.expr(s.iter, env)
            inner = dict(env)
            self.assign(s.target, _elements(src), inner, s)
            after = self.block(s.body, inner)
            # one abstract iteration, joined with "not entered"; accumulations show in `after`
            out = _join(env, after)
            if s.orelse:
                out = self.block(s.orelse, out) if out is not None else None
            return out
        if isinstance(s, ast.While):
            self.expr(s.test, env)
            return _join(env, self.block(s.body, dict(env)))
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.expr(item.context_expr, env)
            return self.block(s.body, env)
        if isinstance(s, (ast.Try, ast.TryStar)):
            body = self.block(s.body, dict(env))
            outs = [body]
            for h in s.handlers:
                outs.append(self.block(h.body, dict(env)))
            res = None
            for o in outs:
                res = _join(res, o) if res is not None else o
            if s.orelse and body is not None:
                res = _join(res, self.block(s.orelse, dict(body)))
            if s.finalbody and res is not None:
                res = self.block(s.finalbody, res)
            return res
        if isinstance(
            s,
            (
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
                ast.Import,
                ast.ImportFrom,
                ast.Pass,
                ast.Break,
                ast.Continue,
                ast.Global,
                ast.Nonlocal,
                ast.Assert,
            ),
        ):
            return env
        # Delete, Match and anything newer: ids that pass through are out of sight
        if any(_ids(env.get(n.id, frozenset())) for n in ast.walk(s) if isinstance(n, ast.Name)):
            self.flow.lost.append(s)
            env = {k: (_lose(v) if _ids(v) else v) for k, v in env.items()}
        return env

    def assign(self, target: ast.expr, val: frozenset, env: dict, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = val
        elif isinstance(target, ast.Attribute):
            if target.attr in self.sink_attrs and _ids(val):
                self.flow.exits.append(Exit(f"attr:{target.attr}", val, node))
            elif _ids(val):
                self.flow.exits.append(Exit(f"store:{target.attr}", val, node))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.assign(elt, _lose(val) if _ids(val) else frozenset(), env, node)
        elif isinstance(target, ast.Subscript) and _ids(val):
            self.flow.lost.append(node)

    def after_call(self, call: ast.Call, env: dict) -> dict:
        """`out.append(x)` / extend / add / insert on a local: the list accumulates what is added."""
        f = call.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            name = f.value.id
            args = [self.expr(a, env) for a in call.args]
            if f.attr == "insert" and len(args) == 2:
                args = args[1:]
            added: frozenset = frozenset()
            for a in args:
                added |= _as_list(a) if f.attr in ("append", "add", "insert") else a
            if _ids(added) or _ids(env.get(name, frozenset())):
                env = dict(env)
                env[name] = env.get(name, frozenset()) | added
        return env

    # -- expressions --------------------------------------------------------------------------
    def expr(self, e: ast.expr | None, env: dict) -> frozenset:  # noqa: C901 -- AST dispatcher: one branch per expression kind the data-flow follows
        if e is None:
            return frozenset()
        src = self.origin_of(e)
        if src is not None:
            base = frozenset({Tag(src, 0, LIST, e.lineno)})
            if isinstance(e, ast.Call) and call_func(e) == "getattr" and len(e.args) >= 3:
                base |= self.expr(e.args[2], env)
            if (
                isinstance(e, ast.Call)
                and isinstance(e.func, ast.Attribute)
                and e.func.attr == "get"
                and len(e.args) >= 2
            ):
                base |= self.expr(e.args[1], env)
            return base
        if isinstance(e, ast.Name):
            return env.get(e.id, frozenset())
        if isinstance(e, ast.Constant):
            return frozenset()
        if isinstance(e, ast.BoolOp):
            out: frozenset = frozenset()
            for v in e.values:
                out |= self.expr(v, env)
            return out
        if isinstance(e, ast.IfExp):
            self.expr(e.test, env)
            return self.expr(e.body, env) | self.expr(e.orelse, env)
        if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.comprehension(e, env)
        if isinstance(e, ast.BinOp):
            left, right = self.expr(e.left, env), self.expr(e.right, env)
            k_right, k_left = _int(e.right), _int(e.left)
            if isinstance(e.op, (ast.Add, ast.Sub)):
                sign = 1 if isinstance(e.op, ast.Add) else -1
                if _elems(left) and k_right is not None and not _ids(right):
                    return _shift(left, sign * k_right, e.lineno)
                if isinstance(e.op, ast.Add) and _elems(right) and k_left is not None and not _ids(left):
                    return _shift(right, k_left, e.lineno)
            if _ids(left) or _ids(right):
                self.flow.lost.append(e)
                return _lose(left | right)
            return frozenset()
        if isinstance(e, ast.Call):
            return self.call(e, env)
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            vals = [self.expr(x, env) for x in e.elts]
            ids = frozenset().union(*vals) if vals else frozenset()
            if _ids(ids):
                if all(_elems(v) or not _ids(v) for v in vals) and any(_elems(v) for v in vals):
                    return _as_list(ids)
                self.flow.lost.append(e)
                return _lose(ids)
            return frozenset()
        if isinstance(e, ast.Starred):
            return self.expr(e.value, env)
        if isinstance(e, ast.Subscript):
            base = self.expr(e.value, env)
            self.expr(e.slice, env)
            if _ids(base):
                self.flow.lost.append(e)
                return _lose(base)
            return frozenset()
        if isinstance(e, ast.Compare):
            for x in [e.left, *e.comparators]:
                self.expr(x, env)
            return frozenset()
        if isinstance(e, ast.UnaryOp):
            self.expr(e.operand, env)
            return frozenset()
        if isinstance(e, ast.Attribute):
            self.expr(e.value, env)
            return frozenset()
        if isinstance(e, ast.Lambda):
            return frozenset()
        if isinstance(e, ast.NamedExpr):
            got = self.expr(e.value, env)
            env[e.target.id] = got
            return got
        if isinstance(e, ast.Dict):
            for part in list(e.keys) + list(e.values):
                if part is not None and _ids(self.expr(part, env)):
                    self.flow.lost.append(e)
            return frozenset()
        if isinstance(e, ast.JoinedStr):
            return frozenset()
        return frozenset()

    def comprehension(self, e: ast.ListComp | ast.GeneratorExp | ast.SetComp, env: dict) -> frozenset:
        inner = dict(env)
        for gen in e.generators:
            src = self.expr(gen.iter, inner)
            _bind(gen.target, _elements(src), inner)
            for cond in gen.ifs:
                self.expr(cond, inner)
        val = self.expr(e.elt, inner)
        if len(e.generators) != 1 and _ids(val):
            self.flow.lost.append(e)
            return _lose(_as_list(val))
        if _ids(val) and not _elems(val):
            self.flow.lost.append(e)
            return _lose(_as_list(val))
        return _as_list(val)

    def call(self, e: ast.Call, env: dict) -> frozenset:
        name = call_func(e)
        args = [self.expr(a, env) for a in e.args]
        kw = [self.expr(k.value, env) for k in e.keywords]
        # a keyword named after the key the ids came from stores them under that name: `Cfg(target_layer_ids=ids)`
        for k, v in zip(e.keywords, kw, strict=True):
            if k.arg in ORIGIN_KEYS and _ids(v):
                self.flow.exits.append(Exit(f"kw:{k.arg}", v, e))
        kw = [v for k, v in zip(e.keywords, kw, strict=True) if k.arg not in ORIGIN_KEYS]
        ids_in = frozenset().union(*args, *kw) if (args or kw) else frozenset()
        attr = e.func.attr if isinstance(e.func, ast.Attribute) else None
        if attr in self.sink_calls and _ids(ids_in):
            self.flow.exits.append(Exit(f"call:{attr}", ids_in, e))
            return frozenset()
        if isinstance(e.func, ast.Attribute):
            self.expr(e.func.value, env)
        if not _ids(ids_in):
            return frozenset()
        if name in COPY_CALLS and isinstance(e.func, ast.Name) and len(e.args) == 1 and not e.keywords:
            return args[0]
        if name in ELEM_CALLS and isinstance(e.func, ast.Name) and len(e.args) == 1:
            return args[0]
        if name == "len" and isinstance(e.func, ast.Name):
            return frozenset()  # a count, not ids: `len(ids) + 1` shifts nothing
        if name in ("isinstance", "bool", "any", "all", "hasattr", "getattr", "print") and isinstance(e.func, ast.Name):
            return frozenset()
        if attr in ("debug", "info", "warning", "warning_once", "info_once", "error", "warn"):
            return frozenset()
        if name == "map" and isinstance(e.func, ast.Name) and len(e.args) == 2 and isinstance(e.args[0], ast.Lambda):
            lam = e.args[0]
            if len(lam.args.args) == 1:
                inner = dict(env)
                inner[lam.args.args[0].arg] = _elements(args[1])
                val = self.expr(lam.body, inner)
                if _elems(val):
                    return _as_list(val)
        self.flow.lost.append(e)
        return _lose(ids_in)


def _accumulates(e: ast.expr) -> TypeGuard[ast.Call]:
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and isinstance(e.func.value, ast.Name)
        and e.func.attr in ("append", "extend", "add", "insert")
        and not e.keywords
    )


def call_func(e: ast.Call) -> str | None:
    if isinstance(e.func, ast.Name):
        return e.func.id
    if isinstance(e.func, ast.Attribute):
        return e.func.attr
    return None


def _source_read(e: ast.expr) -> str | None:
    """The origin when `e` reads a layer-id key from a config (dict or attribute), else None."""
    if isinstance(e, ast.Call):
        f = e.func
        if isinstance(f, ast.Attribute) and f.attr == "get" and e.args:
            return _origin(e.args[0])
        if isinstance(f, ast.Name) and f.id == "getattr" and len(e.args) >= 2:
            return _origin(e.args[1])
        return None
    if isinstance(e, ast.Subscript) and isinstance(e.ctx, ast.Load):
        return _origin(e.slice)
    if isinstance(e, ast.Attribute) and isinstance(e.ctx, ast.Load):
        return ORIGIN_KEYS.get(e.attr)
    return None


def _origin(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ORIGIN_KEYS.get(node.value)
    return None


def _int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _ids(v: frozenset | None) -> bool:
    return bool(v)


def _elems(v: frozenset) -> bool:
    return bool(v) and all(t.kind == ELEM for t in v)


def _elements(v: frozenset) -> frozenset:
    return frozenset(
        Tag(t.origin, t.shift, ELEM, t.at) if t.kind == LIST else Tag(t.origin, None, ELEM, t.at) for t in v
    )


def _as_list(v: frozenset) -> frozenset:
    return frozenset(Tag(t.origin, t.shift, LIST, t.at) for t in v)


def _shift(v: frozenset, k: int, line: int) -> frozenset:
    return frozenset(Tag(t.origin, None if t.shift is None else t.shift + k, t.kind, line) for t in v)


def _lose(v: frozenset) -> frozenset:
    return frozenset(Tag(t.origin, None, t.kind, t.at) for t in v)


def _bind(target: ast.expr, val: frozenset, env: dict) -> None:
    if isinstance(target, ast.Name):
        env[target.id] = val
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _bind(elt, _lose(val) if val else frozenset(), env)


def _join(a: dict | None, b: dict | None) -> dict | None:
    if a is None:
        return b
    if b is None:
        return a
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, frozenset()) | v
    return out
