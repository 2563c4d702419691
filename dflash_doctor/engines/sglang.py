"""SGLang: what an installed release does with a DFlash drafter, read from its files.

  * is DFlash there at all?     srt/speculative/spec_info.py (SpeculativeAlgorithm.DFLASH) and
                                srt/models/dflash.py (its EntryClass: DFlashDraftModel, DFlash2DraftModel…)
  * +1 on target_layer_ids?     srt/speculative/dflash_utils.py (the ids as parsed and resolved) and the
                                target's own `set_dflash_layers_to_capture` chain (srt/models/<target>.py,
                                through its bases and language model), then the capture loop
  * sliding drafter layers?     srt/models/dflash.py: per-layer type from layer_types, the window handed to
                                the attention, causal per layer
SGLang has no runner choice that changes any of this (no V1/V2 switch for DFlash).
"""

from __future__ import annotations

import ast
import re

from . import idflow
from .answers import CERTAIN, Answer, Cite, undecided
from .auxreads import SG_FILES
from .pysource import Module, Sources, mentions
from .targets import follow_setter
from .vllm import SwaRules, module_guesses

SRT = "sglang/srt/"
MODELS = SRT + "models/"
SPEC_INFO = SRT + "speculative/spec_info.py"
DFLASH_MODEL = MODELS + "dflash.py"
DFLASH_UTILS = SRT + "speculative/dflash_utils.py"
DEFAULT_TARGETS = ("llama.py", "qwen2.py", "qwen3.py")
DEFAULT_ENTRY = {"qwen3.py": "Qwen3ForCausalLM", "llama.py": "LlamaForCausalLM", "qwen2.py": "Qwen2ForCausalLM"}


def wanted(listing: tuple[str, ...], target_architectures: tuple[str, ...] = ()) -> list[str]:
    have = set(listing)
    out = [SPEC_INFO, DFLASH_MODEL, DFLASH_UTILS, *SG_FILES] + [MODELS + f for f in DEFAULT_TARGETS]
    for arch in target_architectures:
        out += [MODELS + f"{stem}.py" for stem in module_guesses(arch)]
    return [p for p in dict.fromkeys(out) if p in have]


def methods(src: Sources) -> Answer:
    spec = src.parsed(SPEC_INFO)
    if spec is None:
        if not src.tree.has(SPEC_INFO) and not src.tree.has(DFLASH_MODEL):
            return undecided(f"{SPEC_INFO} is not in the install")
        return undecided(f"{SPEC_INFO} was not read")
    member = None
    for cls in spec.classes.values():
        if cls.name == "SpeculativeAlgorithm":
            for item in cls.body:
                if isinstance(item, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "DFLASH" for t in item.targets
                ):
                    member = item
    if member is None and not src.tree.has(DFLASH_MODEL):
        return Answer((), CERTAIN, "no SpeculativeAlgorithm.DFLASH and no srt/models/dflash.py", (spec.cite(1),))
    model = src.parsed(DFLASH_MODEL)
    if member is None or model is None:
        return undecided(
            "SpeculativeAlgorithm.DFLASH and srt/models/dflash.py were not both found",
            *([spec.cite(member)] if member else []),
        )
    entry = _entry_classes(model)
    archs = tuple(n for n in entry if "DFlash" in n and "Draft" in n) or tuple(n for n in entry if "DFlash" in n)
    if not archs:
        return undecided("srt/models/dflash.py exports no DFlash draft model class", model.cite(1))
    return Answer(
        archs,
        CERTAIN,
        f"--speculative-algorithm DFLASH with {', '.join(archs)}",
        (spec.cite(member), model.cite(_entry_node(model) or 1)),
    )


def _entry_classes(mod: Module) -> tuple[str, ...]:
    node = _entry_node(mod)
    if node is None:
        return ()
    v = node.value
    names = [v] if isinstance(v, ast.Name) else list(getattr(v, "elts", []))
    return tuple(n.id for n in names if isinstance(n, ast.Name))


def _entry_node(mod: Module) -> ast.Assign | None:
    for node in mod.ast_tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets):
            return node
    return None


def runner_shift(src: Sources) -> Answer:
    """What the speculative worker does to dflash_config.target_layer_ids before the target gets them."""
    mod = src.parsed(DFLASH_UTILS)
    if mod is None:
        return undecided(f"{DFLASH_UTILS} was not read")
    shifts: set = set()
    cites: list[Cite] = []
    for fn in ast.walk(mod.ast_tree):
        if not isinstance(fn, ast.FunctionDef) or not mentions(fn, "target_layer_ids"):
            continue
        flow = idflow.follow(fn)
        for e in flow.exits_of("dflash"):
            if e.how in ("return",) or e.how.startswith("kw:"):
                shifts |= {t.shift for t in e.value if t.origin == "dflash"}
                cites.extend(mod.cite(t.at) for t in e.value if t.origin == "dflash")
                cites.append(mod.cite(e.node))
    if not cites:
        return undecided(f"{DFLASH_UTILS} never hands on target_layer_ids where this probe looks", mod.cite(1))
    if None in shifts or len(shifts) != 1:
        return undecided(
            "the DFlash config parser changes target_layer_ids in a way this probe cannot follow", *cites[:2]
        )
    s = shifts.pop()
    return Answer(
        s,
        CERTAIN,
        f"the DFlash config hands on target_layer_ids {'+ ' + str(s) if s else 'unshifted'}",
        tuple(cites[:2]),
    )


def target_entries(src: Sources, archs: tuple[str, ...]) -> tuple[list[tuple[Module, ast.ClassDef]], str]:
    """The target's model classes, found by their EntryClass in the model files read."""
    entries = []
    why = ""
    model_files = [p for p in src.listing() if p.startswith(MODELS) and p.endswith(".py")]
    for arch in archs:
        found = None
        guesses = [MODELS + f"{s}.py" for s in module_guesses(arch)]
        for path in guesses + model_files:
            if src.tree.read(path) is None:
                continue
            mod = src.parsed(path)
            if mod is not None and arch in mod.classes and arch in _entry_classes(mod):
                found = (mod, mod.classes[arch])
                break
        if found:
            entries.append(found)
        else:
            why = why or f"no model file read exports {arch}"
    return entries, why


def target_chain(src: Sources, entries) -> tuple[Answer, list[tuple[Module, ast.ClassDef]]]:
    if not entries:
        return undecided("the target's model class was not found"), []
    answers = [follow_setter(src, m, c, "set_dflash_layers_to_capture", "layers_to_capture") for m, c in entries]
    vals = {a.value for a, _ in answers}
    if any(not a.decided for a, _ in answers):
        return next(a for a, _ in answers if not a.decided), []
    if len(vals) != 1:
        return undecided(
            "the target's architectures shift the ids differently", *[c for a, _ in answers for c in a.cites][:3]
        ), []
    holders = [h for _, hs in answers for h in hs]
    return answers[0][0], holders


def default_entries(src: Sources) -> list[tuple[Module, ast.ClassDef]]:
    """The common targets that take DFlash ids (a class without set_dflash_layers_to_capture cannot serve one)."""
    out = []
    for f, cls in DEFAULT_ENTRY.items():
        mod = src.parsed(MODELS + f)
        if (
            mod is not None
            and cls in mod.classes
            and src.find_method(src.mro(mod, mod.classes[cls]), "set_dflash_layers_to_capture") is not None
        ):
            out.append((mod, mod.classes[cls]))
    return out


def swa_rules(src: Sources) -> SwaRules:
    mod = src.parsed(DFLASH_MODEL)
    if mod is None:
        a = undecided(f"{DFLASH_MODEL} was not read")
        return SwaRules(DFLASH_MODEL, a, a)
    tree = mod.ast_tree
    reads = [
        n
        for n in ast.walk(tree)
        if (isinstance(n, ast.Attribute) and n.attr == "layer_types")
        or (isinstance(n, ast.Constant) and n.value == "layer_types")
        or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and "layer_types" in n.func.id)
    ]
    window = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.keyword) and n.arg == "sliding_window_size" and not (isinstance(n.value, ast.Constant))
    ]
    if not reads and not mentions(tree, "sliding_attention"):
        read = Answer(
            False,
            CERTAIN,
            f"{mod.path} never reads layer_types: every drafter layer runs full attention",
            (mod.cite(1),),
        )
    elif reads and window:
        read = Answer(
            True,
            CERTAIN,
            f"{mod.path} reads the per-layer type and hands each layer its window",
            (mod.cite(reads[0]), mod.cite(window[0])),
        )
    else:
        read = undecided(
            f"{mod.path} mentions layer types, but no per-layer window reaching the attention was found",
            *([mod.cite(reads[0])] if reads else []),
        )
    causal = None
    for fn in ast.walk(tree):
        if (
            isinstance(fn, ast.FunctionDef)
            and mentions(fn, "ENCODER_ONLY")
            and mentions(fn, "DECODER")
            and (mentions(fn, "sliding_attention") or re.search("layer", fn.name))
        ):
            causal = Answer(
                "per-layer",
                CERTAIN,
                f"{fn.name}: sliding layers causal (DECODER), full layers non-causal (ENCODER_ONLY)",
                (mod.cite(fn),),
            )
            break
    raises = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Raise)
        and isinstance(n.exc, ast.Call)
        and getattr(n.exc.func, "id", "") == "NotImplementedError"
        and mentions(n, "sliding")
    ]
    mixed = (
        Answer("refused", CERTAIN, "mixed sliding/full drafters raise NotImplementedError", (mod.cite(raises[0]),))
        if raises
        else Answer("allowed", CERTAIN, f"{mod.path} raises nothing for mixed sliding/full drafters", (mod.cite(1),))
    )
    return SwaRules(mod.path, read, mixed, None, causal)
