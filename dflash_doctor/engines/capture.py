"""Where a target model captures the hidden states a drafter reads, and which layer's output that is.

A capture site sits in the loop over decoder layers of a model's `forward`. For each one this
module works out `d`: "capture index k reads the output of layer k + d". A DFlash drafter's ids name
layer outputs, so the ids must reach the capture shifted by -d (vLLM and SGLang capture the stream
*entering* layer k, d = -1, hence their +1).

Recognised forms (each read from the code, none assumed):
  * a call `_maybe_add_hidden_state(aux, IDX, …)` (vLLM's EagleModelMixin; its body is checked);
  * `if IDX in self.<capture set>: aux.append(…)` before or after the layer call;
  * the capture handed into the layer call (`kw=aux if IDX in self.<set> else None`, or a layer marked
    by `setattr(self.layers[i], "…capture…", True)`): the layer's own `forward` taking that keyword is
    read to see whether it uses the hook before its attention/MLP (its input) or after (its output).
IDX is the loop's layer index, optionally `+ c`. Anything else is "could not decide".
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .answers import Cite
from .pysource import Module, call_name, const_str

CAPTURE_ATTRS = ("layers_to_capture", "aux_hidden_state_layers")
_COMPUTE = re.compile(r"attn|attention|mlp|mixer|moe|ffn|feed_forward|mamba|block_sparse")


@dataclass(frozen=True)
class Site:
    d: int | None  # capture index k reads the output of layer k + d; None: could not decide
    how: str  # what was read, in words
    cite: Cite
    hop: Cite | None = None  # the layer forward read for a capture handed into the layer


def capture_sites(mods: list[Module], only_classes: set[tuple[str, str]] | None = None) -> list[Site]:
    """Capture sites in the `forward` methods of the classes in `mods` (or only of `only_classes`)."""
    out: list[Site] = []
    hook_fns = _layer_forwards(mods)
    mixin_ok = _mixin_checked(mods)
    for mod in mods:
        if mod.tree is None:
            continue
        for cls in mod.classes.values():
            if only_classes is not None and (mod.path, cls.name) not in only_classes:
                continue
            for item in cls.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "forward":
                    for loop in _loops(item):
                        out.extend(_sites_in_loop(mod, cls, loop, hook_fns, mixin_ok))
    return out


def _loops(fn: ast.AST):
    for node in ast.walk(fn):
        if isinstance(node, ast.For):
            yield node


def _loop_vars(loop: ast.For) -> tuple[str | None, str | None]:
    """(index variable, layer variable) of a loop over decoder layers."""
    t, it = loop.target, loop.iter
    if isinstance(it, ast.Call) and call_name(it) == "islice" and it.args:
        it = it.args[0]
    if isinstance(t, ast.Tuple) and len(t.elts) == 2 and all(isinstance(e, ast.Name) for e in t.elts):
        if isinstance(it, ast.Call) and call_name(it) == "enumerate":
            i_var, layer_var = t.elts
            assert isinstance(i_var, ast.Name) and isinstance(layer_var, ast.Name)  # (checked above)
            return i_var.id, layer_var.id
        return None, None
    if isinstance(t, ast.Name) and isinstance(it, ast.Call) and call_name(it) == "range":
        return t.id, None
    return None, None


def _offset(node: ast.AST, idx: str) -> int | None:
    """c when node is `idx` (0) or `idx + c` / `c + idx`."""
    if isinstance(node, ast.Name) and node.id == idx:
        return 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = node.left, node.right
        sign = 1 if isinstance(node.op, ast.Add) else -1
        if (
            isinstance(left, ast.Name)
            and left.id == idx
            and isinstance(right, ast.Constant)
            and isinstance(right.value, int)
        ):
            return sign * right.value
        if (
            isinstance(node.op, ast.Add)
            and isinstance(right, ast.Name)
            and right.id == idx
            and isinstance(left, ast.Constant)
            and isinstance(left.value, int)
        ):
            return left.value
    return None


def _is_capture_test(test: ast.AST, idx: str, layer_names: set[str], marks: bool) -> int | None | bool:
    """c when `test` is `IDX in self.<capture set>` (or a capture mark on the layer), False when not a test."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In):
        coll = test.comparators[0]
        if isinstance(coll, ast.Attribute) and coll.attr in CAPTURE_ATTRS:
            return _offset(test.left, idx)
        return False
    if isinstance(test, ast.Call) and call_name(test) == "getattr" and len(test.args) >= 2:
        obj, attr = test.args[0], const_str(test.args[1])
        if attr and "capture" in attr and isinstance(obj, ast.Name) and obj.id in layer_names:
            return 0 if marks else None
    return False


def _sites_in_loop(mod: Module, cls: ast.ClassDef, loop: ast.For, hook_fns, mixin_ok: bool) -> list[Site]:  # noqa: C901 -- AST pattern match over the shapes a capture loop takes in the engines' source
    idx, layer_var = _loop_vars(loop)
    if idx is None:
        return []
    # locals bound to the layer: `layer = self.layers[i]`
    layer_names = {layer_var} if layer_var else set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Attribute) and v.value.attr == "layers":
                layer_names.add(node.targets[0].id)
    marks = _has_capture_marks(mod)
    calls = [n for n in ast.walk(loop) if isinstance(n, ast.Call) and _is_layer_call(n, layer_names, idx)]
    if not calls:
        return []
    first = min(c.lineno for c in calls)
    last = max(getattr(c, "end_lineno", c.lineno) for c in calls)
    sites: list[Site] = []
    hook_locals: dict[str, tuple[int | None, ast.AST]] = {}
    for node in ast.walk(loop):
        # vLLM: self._maybe_add_hidden_state(aux, IDX, hidden_states, residual)
        if isinstance(node, ast.Call) and call_name(node) == "_maybe_add_hidden_state" and len(node.args) >= 2:
            c = _offset(node.args[1], idx)
            sites.append(_placed(mod, node, c, first, last, "_maybe_add_hidden_state", certain=mixin_ok))
        elif isinstance(node, ast.If):
            c = _is_capture_test(node.test, idx, layer_names, marks)
            if c is not False and any(isinstance(n, ast.Call) and call_name(n) == "append" for n in ast.walk(node)):
                sites.append(_placed(mod, node, c, first, last, "membership test and append"))
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.IfExp)
        ):
            c = _is_capture_test(node.value.test, idx, layer_names, marks)
            if c is not False:
                hook_locals[node.targets[0].id] = (c, node)
    for call in calls:
        for kw in call.keywords:
            v = kw.value
            c = False
            at: ast.AST | None = None
            if isinstance(v, ast.IfExp):
                c, at = _is_capture_test(v.test, idx, layer_names, marks), v
            elif isinstance(v, ast.Name) and v.id in hook_locals:
                c, at = hook_locals[v.id]
            if c is False or kw.arg is None:
                continue
            assert at is not None  # (set along with every c that is not False)
            sites.append(_hooked(mod, at, c, kw.arg, hook_fns))
    unique: dict[tuple, Site] = {}
    for s in sites:
        unique.setdefault((s.cite.path, s.cite.line), s)
    return list(unique.values())


def _is_layer_call(n: ast.Call, layer_names: set[str], idx: str) -> bool:
    f = n.func
    if isinstance(f, ast.Name) and f.id in layer_names:
        return True
    return bool(isinstance(f, ast.Subscript) and isinstance(f.value, ast.Attribute) and f.value.attr == "layers")


def _placed(
    mod: Module, node: ast.stmt | ast.expr, c: int | None, first: int, last: int, how: str, certain: bool = True
) -> Site:
    line = node.lineno
    if c is None:
        return Site(None, f"{how}: the captured index is not the loop index (+ a constant)", mod.cite(node))
    if line < first:
        p = 0
        where = "before the layer call"
    elif line > last:
        p = 1
        where = "after the layer call"
    else:
        return Site(None, f"{how} between the layer calls of the loop", mod.cite(node))
    d = p - c - 1
    cidx = "i" if c == 0 else f"i {'+' if c > 0 else '-'} {abs(c)}"
    note = "" if certain else " (the capture helper's body was not read)"
    return Site(d, f"{how} of index {cidx} {where}{note}", mod.cite(node))


def _hooked(mod: Module, at: ast.AST, c: int | None, kw: str, hook_fns) -> Site:
    if c is None:
        return Site(None, f"capture handed to the layer as {kw}= with an index this probe cannot follow", mod.cite(at))
    fns = hook_fns.get(kw, [])
    if not fns:
        return Site(
            None, f"capture handed to the layer as {kw}=, but no layer forward taking {kw} was read", mod.cite(at)
        )
    places = set()
    hop = None
    for fmod, fn in fns:
        place = _hook_place(fn, kw)
        places.add(place)
        hop = hop or fmod.cite(fn)
    if len(places) != 1 or None in places:
        return Site(
            None,
            f"capture handed to the layer as {kw}=; the layer forwards use it at different or unclear points",
            mod.cite(at),
            hop,
        )
    p = places.pop()
    assert p is not None  # (None in places returned above)
    d = p - c - 1
    where = "at the layer's entry, before its attention/MLP" if p == 0 else "after the layer's attention/MLP"
    return Site(
        d, f"capture handed to layer i{'' if c == 0 else f' {c:+d}'} as {kw}= and used {where}", mod.cite(at), hop
    )


def _hook_place(fn: ast.FunctionDef, kw: str) -> int | None:
    """0 when the hook is used before the layer's first compute call, 1 after its last one."""
    uses = [n.lineno for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == kw]
    compute = [
        n.lineno
        for n in ast.walk(fn)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "self"
        and _COMPUTE.search(n.func.attr)
    ]
    if not uses or not compute:
        return None
    if max(uses) < min(compute):
        return 0
    if min(uses) > max(compute):
        return 1
    return None


def _layer_forwards(mods: list[Module]) -> dict[str, list[tuple[Module, ast.FunctionDef]]]:
    """Keyword name -> the `forward` methods that take it (decoder layers receiving a capture hook)."""
    out: dict[str, list[tuple[Module, ast.FunctionDef]]] = {}
    for mod in mods:
        if mod.tree is None:
            continue
        for cls in mod.classes.values():
            for item in cls.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    for a in item.args.args + item.args.kwonlyargs:
                        if "capture" in a.arg:
                            out.setdefault(a.arg, []).append((mod, item))
    return out


def _has_capture_marks(mod: Module) -> bool:
    """`setattr(self.layers[i], "…capture…", True)` for i in a capture list, somewhere in the module."""
    if mod.tree is None:
        return False
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Call) and call_name(node) == "setattr" and len(node.args) == 3:
            obj, name = node.args[0], const_str(node.args[1])
            if (
                name
                and "capture" in name
                and isinstance(obj, ast.Subscript)
                and isinstance(obj.value, ast.Attribute)
                and obj.value.attr == "layers"
                and isinstance(obj.slice, ast.Name)
            ):
                return True
    return False


def _mixin_checked(mods: list[Module]) -> bool:
    """vLLM's `_maybe_add_hidden_state(self, aux, layer_idx, …)` tests `layer_idx in self.aux_hidden_state_layers`."""
    for mod in mods:
        if mod.tree is None:
            continue
        for node in ast.walk(mod.tree):
            if (
                isinstance(node, ast.FunctionDef)
                and node.name == "_maybe_add_hidden_state"
                and len(node.args.args) >= 3
            ):
                param = node.args.args[2].arg
                for sub in ast.walk(node):
                    if (
                        isinstance(sub, ast.Compare)
                        and isinstance(sub.left, ast.Name)
                        and sub.left.id == param
                        and isinstance(sub.ops[0], ast.In)
                        and isinstance(sub.comparators[0], ast.Attribute)
                        and sub.comparators[0].attr == "aux_hidden_state_layers"
                    ):
                        return True
    return False
