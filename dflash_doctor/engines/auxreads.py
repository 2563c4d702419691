"""Which config fields an installed engine reads a drafter's aux layer ids from, and with what shift.

The same question models/aux_taps.toml answers per release, read here from the install itself:

  vLLM    V1: `_get_eagle3_aux_layers_from_config` (v1/worker/gpu_model_runner.py)
          V2: `get_eagle3_aux_layers_from_config` (v1/worker/gpu/spec_decode/eagle/eagle3_utils.py)
          each function is followed with idflow; a read is named by its key AND where it is read from
          (`getattr(hf_config, "eagle_aux_hidden_state_layer_ids")` is the top-level field,
          `eagle_config.get("eagle_aux_hidden_state_layer_ids")` the nested one), and the shift is what the
          function adds before it returns the ids (the target stores them as given: vllm.model_shift)
  SGLang  the model runner reads `eagle_config["eagle_aux_hidden_state_layer_ids"]` and hands it to the target's
          `set_eagle3_layers_to_capture`, whose shift is followed through the target's classes (targets.py)

Answer values are tuples of (placement, shift) pairs, sorted; a shift of None is "could not follow".
"""

from __future__ import annotations

import ast

from . import idflow
from .answers import CERTAIN, Answer, Cite, undecided
from .pysource import Module, Sources, call_name, const_str
from .targets import follow_setter

KEYS = ("eagle_aux_hidden_state_layer_ids", "target_layer_ids", "dspark_target_layer_ids", "layer_ids")
NESTED = ("eagle_config", "dflash_config")
V1_FN = "_get_eagle3_aux_layers_from_config"
V2_FILE = "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py"
V2_FN = "get_eagle3_aux_layers_from_config"
SG_FILES = (
    "sglang/srt/model_executor/model_runner.py",
    "sglang/srt/model_executor/model_runner_components/spec_aux_hidden_state.py",
)


def _nested_names(fn: ast.AST) -> dict[str, tuple[str, ...]]:
    """Local names bound to a nested drafter config: `x = getattr(cfg, "eagle_config", …)`, `x = cfg.get(…)`, and
    `for name in ("dflash_config", "eagle_config"): x = getattr(cfg, name, …)` (both)."""
    loops: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Tuple):
            names = tuple(n for n in (const_str(e) for e in node.iter.elts) if n in NESTED)
            if names:
                loops[node.target.id] = names
    out: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        found = _config_read(node.value, loops)
        if found:
            out[node.targets[0].id] = found
    return out


def _config_read(v: ast.AST, loops: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    if isinstance(v, ast.BoolOp):  # getattr(…, "eagle_config", None) or {}
        return next((r for r in (_config_read(x, loops) for x in v.values) if r), ())
    if isinstance(v, ast.Attribute) and v.attr in NESTED:
        return (v.attr,)
    if not isinstance(v, ast.Call) or len(v.args) < 1:
        return ()
    name = call_name(v)
    arg = v.args[1] if name == "getattr" and len(v.args) >= 2 else (v.args[0] if name == "get" else None)
    if arg is None:
        return ()
    if isinstance(arg, ast.Name) and arg.id in loops:
        return loops[arg.id]
    key = const_str(arg)
    return (key,) if key in NESTED else ()


def _read(e: ast.expr) -> tuple[ast.AST | None, str | None]:
    """(receiver, key) when `e` reads one of KEYS from a config."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "get" and e.args:
        return e.func.value, const_str(e.args[0])
    if isinstance(e, ast.Call) and call_name(e) == "getattr" and isinstance(e.func, ast.Name) and len(e.args) >= 2:
        return e.args[0], const_str(e.args[1])
    if isinstance(e, ast.Subscript) and isinstance(e.ctx, ast.Load):
        return e.value, const_str(e.slice)
    if isinstance(e, ast.Attribute) and isinstance(e.ctx, ast.Load):
        return e.value, e.attr
    return None, None


def _origin_of(nested: dict[str, tuple[str, ...]]):
    def origin(e: ast.expr) -> str | None:
        recv, key = _read(e)
        if key not in KEYS:
            return None
        if isinstance(recv, ast.Name) and recv.id in nested:
            return "|".join(f"{n}.{key}" for n in nested[recv.id])
        return key

    return origin


def function_reads(mod: Module, fn: ast.FunctionDef) -> Answer:
    """The placements `fn` returns ids from, each with the shift it applies."""
    flow = idflow.follow(fn, origin_of=_origin_of(_nested_names(fn)))
    shifts: dict[str, set[int | None]] = {}
    cites: list[Cite] = []
    for e in flow.exits:
        if e.how != "return":
            continue
        for t in e.value:
            for placement in t.origin.split("|"):
                shifts.setdefault(placement, set()).add(t.shift)
            cites.append(mod.cite(t.at))
    if not shifts:
        return Answer((), CERTAIN, f"{fn.name} returns no layer ids read from the config", (mod.cite(fn),))
    value = tuple(sorted((p, s.pop() if len(s) == 1 else None) for p, s in shifts.items()))
    words = "; ".join(f"{p} {'+' + str(s) if s else ('unshifted' if s == 0 else 'changed')}" for p, s in value)
    # the flow's values are sets: cite in source order, not in the hash seed's (the same report on every run)
    ordered = sorted(dict.fromkeys(cites), key=lambda c: (c.path, c.line, c.text))
    return Answer(value, CERTAIN, f"{fn.name} reads {words}", (mod.cite(fn), *ordered[:4]))


def vllm_reads(src: Sources, v1_runner: str) -> dict[str, Answer]:
    out: dict[str, Answer] = {}
    for runner, path, name in (("V1", v1_runner, V1_FN), ("V2", V2_FILE, V2_FN)):
        mod = src.parsed(path)
        if mod is None:
            if not src.tree.has(path):
                continue  # this release has no such runner (0.34: no V1)
            out[runner] = undecided(f"{path} was not read")
            continue
        fn = _find(mod, name)
        out[runner] = (
            function_reads(mod, fn) if fn is not None else Answer((), CERTAIN, f"{path} has no {name}", (mod.cite(1),))
        )
    return out


def _find(mod: Module, name: str) -> ast.FunctionDef | None:
    if mod.tree is None:
        return None
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def sglang_nested_read(src: Sources) -> Answer:
    """Where the SGLang model runner reads EAGLE-3 aux ids: `eagle_config["eagle_aux_hidden_state_layer_ids"]`."""
    for path in SG_FILES:
        mod = src.parsed(path)
        if mod is None or mod.tree is None:
            continue
        for fn in (n for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef)):
            nested = _nested_names(fn)
            for node in ast.walk(fn):
                recv, key = _read(node) if isinstance(node, ast.expr) else (None, None)
                if key != "eagle_aux_hidden_state_layer_ids":
                    continue
                if isinstance(recv, ast.Name) and "eagle_config" in nested.get(recv.id, ()):
                    return Answer(
                        ("eagle_config.eagle_aux_hidden_state_layer_ids",),
                        CERTAIN,
                        "the model runner reads eagle_config['eagle_aux_hidden_state_layer_ids']",
                        (mod.cite(node),),
                    )
    return undecided("no read of eagle_config's eagle_aux_hidden_state_layer_ids was found in the model runner")


def sglang_reads(src: Sources, entries) -> Answer:
    """The SGLang worker's EAGLE-3 reads: the nested placement, shifted by the target's set_eagle3_layers_to_capture."""

    read = sglang_nested_read(src)
    if not read.decided:
        return read
    if not entries:
        return undecided("the target's model class was not found: its set_eagle3_layers_to_capture was not read")
    answers = [follow_setter(src, m, c, "set_eagle3_layers_to_capture", "layers_to_capture")[0] for m, c in entries]
    bad = next((a for a in answers if not a.decided), None)
    if bad is not None or len({a.value for a in answers}) != 1:
        return undecided(bad.why if bad else "the target's classes shift the ids differently", *read.cites)
    shift = answers[0].value
    return Answer(
        tuple((p, shift) for p in read.value),
        CERTAIN,
        f"{read.why}; the target's set_eagle3_layers_to_capture adds {shift}",
        read.cites + answers[0].cites[:2],
    )
