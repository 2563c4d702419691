"""From a target model's class to where its capture list is stored, adding up the shifts on the way.

SGLang's targets take the drafter's ids in `set_dflash_layers_to_capture(layer_ids)` and either store
them (`self.model.layers_to_capture = [val + 1 for val in layer_ids]`) or hand them on to the
language model (`self.model.set_dflash_layers_to_capture([val + 1 …])`, whose class is found from
`self.model = Cls(…)` or a `language_model_cls=Cls` default in the most derived `__init__`). Each
hop is followed with idflow; a hop whose class cannot be found is "could not decide".
"""

from __future__ import annotations

import ast

from . import idflow
from .answers import CERTAIN, Answer, Cite, undecided
from .pysource import Module, Sources


def attr_classes(src: Sources, mro: list[tuple[Module, ast.ClassDef]], attr: str) -> list[tuple[Module, ast.ClassDef]]:
    """The classes `self.<attr>` is built from in the __init__ methods along `mro`."""
    out: list[tuple[Module, ast.ClassDef]] = []
    for mod, cls in mro:
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is None:
            continue
        params = {a.arg for a in init.args.args + init.args.kwonlyargs}
        for node in ast.walk(init):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            if not any(
                isinstance(t, ast.Attribute)
                and t.attr == attr
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
                for t in node.targets
            ):
                continue
            f = node.value.func
            if not isinstance(f, ast.Name):
                continue
            if f.id in params:
                found = _param_class(src, mro, f.id)
                out.extend(found)
            else:
                found1 = src.resolve_class(mod, f.id)
                if found1 is not None:
                    out.append(found1)
        if out:
            break  # the most derived class that builds the attribute decides
    uniq: dict[tuple[str, str], tuple[Module, ast.ClassDef]] = {}
    for m, c in out:
        uniq.setdefault((m.path, c.name), (m, c))
    return list(uniq.values())


def _param_class(src: Sources, mro, param: str) -> list[tuple[Module, ast.ClassDef]]:
    """The class a constructor parameter defaults to, in the most derived __init__ that declares it."""
    for mod, cls in mro:
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is None:
            continue
        args = init.args.args
        defaults = init.args.defaults
        offset = len(args) - len(defaults)
        for i, a in enumerate(args):
            if a.arg == param and i >= offset:
                d = defaults[i - offset]
                if isinstance(d, ast.Name):
                    found = src.resolve_class(mod, d.id)
                    return [found] if found else []
        for a, kd in zip(init.args.kwonlyargs, init.args.kw_defaults, strict=False):
            if a.arg == param and isinstance(kd, ast.Name):
                found = src.resolve_class(mod, kd.id)
                return [found] if found else []
    return []


def follow_setter(
    src: Sources, mod: Module, cls: ast.ClassDef, method: str, sink_attr: str, depth: int = 0
) -> tuple[Answer, list[tuple[Module, ast.ClassDef]]]:
    """(total shift, the classes whose `sink_attr` ends up holding the ids) starting at cls.method."""
    mro = src.mro(mod, cls)
    found = src.find_method(mro, method)
    if found is None:
        return undecided(f"{cls.name} has no {method} (in the files read)", mod.cite(cls)), []
    m, owner, fn = found
    params = [a.arg for a in fn.args.args[1:]]
    if not params:
        return undecided(f"{owner.name}.{method} takes no ids", m.cite(fn)), []
    flow = idflow.follow(fn, {params[0]: "dflash"}, sink_attrs=(sink_attr,), sink_calls=(method,))
    exits = [e for e in flow.exits_of("dflash") if e.how in (f"attr:{sink_attr}", f"call:{method}")]
    if not exits:
        return undecided(f"{owner.name}.{method} does not store the ids where this probe looks", m.cite(fn)), []
    shifts: set[int | None] = set()
    cites: list[Cite] = []
    holders: list[tuple[Module, ast.ClassDef]] = []
    for e in exits:
        s = {t.shift for t in e.value if t.origin == "dflash"}
        if None in s or len(s) != 1:
            return undecided(
                f"{owner.name}.{method} changes the ids in a way this probe cannot follow", m.cite(e.node)
            ), []
        base = s.pop()
        cites.extend(m.cite(t.at) for t in e.value if t.origin == "dflash" and t.at != fn.lineno)
        target = e.node.func.value if e.how.startswith("call:") else e.node.targets[0].value  # type: ignore[attr-defined]
        if e.how.startswith("call:"):
            if depth > 4:
                return undecided("too many hops", m.cite(e.node)), []
            callees = _owner_classes(src, mro, target)
            if not callees:
                return undecided(
                    f"{owner.name}.{method} hands the ids to an object whose class was not found", m.cite(e.node)
                ), []
            sub_answers = [follow_setter(src, cm, cc, method, sink_attr, depth + 1) for cm, cc in callees]
            sub_shifts = {a.value for a, _ in sub_answers}
            if any(not a.decided for a, _ in sub_answers) or len(sub_shifts) != 1:
                bad = next((a for a, _ in sub_answers if not a.decided), sub_answers[0][0])
                return undecided(f"the language model's {method}: {bad.why}", m.cite(e.node), *bad.cites), []
            shifts.add(base + sub_shifts.pop())
            cites.append(m.cite(e.node))
            for a, h in sub_answers:
                cites.extend(a.cites)
                holders.extend(h)
        else:
            shifts.add(base)
            cites.append(m.cite(e.node))
            holders.extend(_owner_classes(src, mro, target) or [])
    if len(shifts) != 1:
        return undecided(f"{owner.name}.{method} shifts the ids differently on different paths", *cites[:3]), []
    total = shifts.pop()
    return Answer(
        total,
        CERTAIN,
        f"{owner.name}.{method} stores the ids {'+ ' + str(total) if total else 'as given'}",
        tuple(dict.fromkeys(cites))[:4],
    ), holders


def _owner_classes(src: Sources, mro, target: ast.expr) -> list[tuple[Module, ast.ClassDef]]:
    """`self` -> the class itself; `self.model` -> the class(es) self.model is built from."""
    if isinstance(target, ast.Name) and target.id == "self":
        return [mro[0]]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return attr_classes(src, mro, target.attr)
    return []
