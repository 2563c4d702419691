"""vLLM: what an installed release does with a DFlash drafter, read from its files.

Questions and where a release answers them (the paths moved little from 0.19 to 0.33):
  * is DFlash there at all?     config/speculative.py (the method literal "dflash"),
                                model_executor/models/registry.py (DFlashDraftModel, DFlash2DraftModel)
  * +1 on target_layer_ids?     the V1 runner (v1/worker/gpu_model_runner.py) and the V2 runner
                                (v1/worker/gpu/…): the functions that read the ids, followed to where they
                                leave (idflow); the target model's capture loop (capture)
  * sliding drafter layers?     the DFlash model module named by the registry (qwen3_dflash.py): does it
                                read layer_types and pass a per-layer window, and the NotImplementedError
                                it raises for mixed sliding/full drafters, with the condition around it
  * which runner runs?          envs.py (how VLLM_USE_V2_MODEL_RUNNER is parsed and its unset default),
                                config/vllm.py (`use_v2_model_runner`: explicit value first, then the
                                engine's own rules), the V2 method allow-list, V1's refusals (0.29+)
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from . import idflow
from .answers import CERTAIN, LIKELY, Answer, Cite, undecided
from .capture import capture_sites
from .pysource import Module, Sources, call_name, const_str, mentions, str_tuple, string_of

CONFIG = "vllm/config/vllm.py"
SPEC = "vllm/config/speculative.py"
ENVS = "vllm/envs.py"
V1_RUNNER = "vllm/v1/worker/gpu_model_runner.py"
V2_DIR = "vllm/v1/worker/gpu/"
MODELS = "vllm/model_executor/models/"
REGISTRY = MODELS + "registry.py"
INTERFACES = MODELS + "interfaces.py"
DEFAULT_TARGETS = ("llama.py", "qwen2.py", "qwen3.py")
ENV = "VLLM_USE_V2_MODEL_RUNNER"
DFLASH_ARCHS = ("DFlashDraftModel", "DFlash2DraftModel")


def wanted(listing: tuple[str, ...], target_architectures: tuple[str, ...] = ()) -> list[str]:
    have = set(listing)
    out = [CONFIG, SPEC, ENVS, V1_RUNNER, REGISTRY, INTERFACES]
    out += [
        p
        for p in listing
        if p.startswith(V2_DIR + "spec_decode/") and ("/eagle/" in p or "eagle3_utils" in p or "dflash" in p)
    ]
    out += [p for p in listing if p.startswith(MODELS) and "dflash" in p.rsplit("/", 1)[-1]]
    out += [MODELS + f for f in DEFAULT_TARGETS]
    for arch in target_architectures:
        out += [MODELS + f"{stem}.py" for stem in module_guesses(arch)]
    return [p for p in dict.fromkeys(out) if p in have]


def module_guesses(arch: str) -> list[str]:
    """Module stems an architecture name suggests: Qwen3_5ForConditionalGeneration -> qwen3_5, qwen3."""
    head = re.split(r"For(?:CausalLM|ConditionalGeneration|SequenceClassification)|Model$", arch)[0]
    snake = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", head).lower()
    flat = head.lower()
    stems = [flat, snake]
    m = re.match(r"([a-z]+\d*)", flat)
    if m:
        stems.append(m.group(1))
    return list(dict.fromkeys(s for s in stems if s))


# --- the registry ---------------------------------------------------------------------------------


def registry(src: Sources) -> tuple[dict[str, tuple[str, str, Cite]], Module | None]:
    """architecture -> (module path, class name, cite) from registry.py's dict literals."""
    mod = src.parsed(REGISTRY)
    out: dict[str, tuple[str, str, Cite]] = {}
    if mod is None:
        return out, None
    for node in ast.walk(mod.ast_tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=False):
                arch = const_str(k)
                pair = str_tuple(v)
                if k is not None and arch and pair and len(pair) == 2:
                    m = pair[0]
                    path = MODELS + f"{m}.py" if "." not in m else (src.module_path(m) or m.replace(".", "/") + ".py")
                    out.setdefault(arch, (path, pair[1], mod.cite(k)))
    return out, mod


def methods(src: Sources, reg: dict) -> Answer:
    """The DFlash drafter architectures this release can load with method "dflash" (empty: absent)."""
    spec = src.parsed(SPEC)
    if spec is None:
        return undecided(f"{SPEC} was not read")
    lit = next((n for n in ast.walk(spec.ast_tree) if isinstance(n, ast.Constant) and n.value == "dflash"), None)
    archs = [a for a in DFLASH_ARCHS if a in reg]
    if src.parsed(REGISTRY) is None:
        return undecided(f"{REGISTRY} was not read")
    if lit is None and not archs:
        return Answer(
            (),
            CERTAIN,
            "no speculative method 'dflash' in config/speculative.py and no DFlash drafter "
            "architecture in the model registry",
            (spec.cite(1),),
        )
    if lit is None or not archs:
        return undecided(
            "the speculative config and the model registry disagree about DFlash",
            *([spec.cite(lit)] if lit else []),
            *[reg[a][2] for a in archs],
        )
    present = tuple(a for a in archs if src.tree.has(reg[a][0]))
    cites = (spec.cite(lit),) + tuple(reg[a][2] for a in archs)
    if not present:
        return undecided("the registry names DFlash modules that are not in the install", *cites)
    return Answer(
        present, CERTAIN, f"method 'dflash' and drafter architectures {', '.join(present)} are registered", cites
    )


# --- target_layer_ids through the runners -----------------------------------------------------------


def runner_shifts(src: Sources) -> dict[str, Answer]:
    """Per runner ("V1", "V2"): by how much the runner shifts dflash_config.target_layer_ids."""
    out = {}
    # every V2-runner file at hand (a collector fetches its spec-decode helpers; a local tree has them all)
    v2_files = [
        p
        for p in src.listing()
        if p.startswith(V2_DIR)
        and p.endswith(".py")
        and (src.tree.read(p) is not None or p.startswith(V2_DIR + "spec_decode/eagle/"))
    ]
    for runner, files in (("V1", [V1_RUNNER]), ("V2", v2_files)):
        mods = [m for m in (src.parsed(p) for p in files) if m is not None]
        if not mods:
            out[runner] = undecided(f"the {runner} runner's files were not read")
            continue
        out[runner] = _shift_in(mods, runner)
    return out


def _shift_in(mods: list[Module], what: str) -> Answer:
    shifts: set[int | None] = set()
    cites: list[Cite] = []
    lost: list[Cite] = []
    for mod in mods:
        for fn in _functions(mod.ast_tree):
            if not mentions(fn, "target_layer_ids"):
                continue
            flow = idflow.follow(fn)
            exits = flow.exits_of("dflash")
            if not exits:
                continue
            for e in exits:
                s = {t.shift for t in e.value if t.origin == "dflash"}
                shifts |= s
                cites.extend(mod.cite(t.at) for t in sorted(e.value, key=lambda t: t.at) if t.origin == "dflash")
                cites.append(mod.cite(e.node))
                if None in s:
                    lost += [mod.cite(n) for n in flow.lost] or [mod.cite(e.node)]
    if not cites:
        return Answer("not-read", CERTAIN, f"the {what} runner never reads dflash_config.target_layer_ids", ())
    if None in shifts:
        return undecided(
            f"the {what} runner passes target_layer_ids through code this probe cannot follow", *(lost[:2] + cites[:2])
        )
    known = {s for s in shifts if s is not None}  # (all of them: None is not among them here)
    if len(known) > 1:
        return undecided(
            f"the {what} runner shifts target_layer_ids differently on different paths "
            f"({', '.join(f'{s:+d}' for s in sorted(known))})",
            *cites[:3],
        )
    shift = known.pop()
    return Answer(
        shift,
        CERTAIN,
        f"the {what} runner hands on target_layer_ids {'+ ' + str(shift) if shift else 'unshifted'}",
        tuple(dict.fromkeys(cites))[:3],
    )


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


# --- the target's capture -------------------------------------------------------------------------


def target_files(
    src: Sources, reg: dict, archs: tuple[str, ...]
) -> tuple[list[Module], list[tuple[Module, ast.ClassDef]], str]:
    """The target's model modules (its class, its bases' modules, what they import from the models package)."""
    entries: list[tuple[Module, ast.ClassDef]] = []
    why = ""
    for arch in archs:
        if arch in reg:
            path, cls, _ = reg[arch]
            mod = src.parsed(path)
            if mod is not None and cls in mod.classes:
                entries.append((mod, mod.classes[cls]))
            elif mod is None:
                why = f"{path} (the target's model) was not read"
        else:
            why = why or f"{arch} is not in this release's model registry"
    mods: dict[str, Module] = {}
    if entries:
        for mod, cls in entries:
            for m, _ in src.mro(mod, cls):
                mods[m.path] = m
            for _name, (dotted, _) in mod.imports.items():
                p = src.module_path(dotted)
                if p and p.startswith(MODELS) and p not in mods:
                    pm = src.parsed(p)
                    if pm is not None:
                        mods[pm.path] = pm
    return list(mods.values()), entries, why


def capture_answer(
    src: Sources, mods: list[Module], entries, why: str, models_dir: str, defaults: tuple[str, ...], extra: list[str]
) -> Answer:
    """d: capture index k reads the output of layer k + d, from the capture sites in the target's files."""
    certainty = CERTAIN
    if not entries:
        mods = [m for m in (src.parsed(models_dir + f) for f in defaults) if m is not None]
        certainty = LIKELY
        why = (
            why + "; " if why else "the target's architecture is unknown; "
        ) + "read from the engine's common model files instead"
    helpers = [m for m in (src.parsed(p) for p in extra) if m is not None]
    sites = capture_sites(mods + [h for h in helpers if h.path not in {m.path for m in mods}])
    sites = [s for s in sites if s.cite.path in {m.path for m in mods}]
    if not sites:
        return undecided(
            "no hidden-state capture was found in the target's model files" + (f" ({why})" if why else ""),
            *[m.cite(1) for m in mods[:2]],
        )
    ds = {s.d for s in sites}
    cites = tuple(s.cite for s in sites[:3]) + tuple(s.hop for s in sites[:1] if s.hop)
    if None in ds:
        bad = next(s for s in sites if s.d is None)
        return undecided(f"a capture site this probe cannot follow: {bad.how}", bad.cite)
    if len(ds) > 1:
        return undecided("the target's capture sites disagree on which layer they read", *cites)
    d = ds.pop()
    if "helper's body was not read" in " ".join(s.how for s in sites):
        certainty = LIKELY
    where = "the stream entering layer k" if d == -1 else ("the output of layer k" if d == 0 else f"layer k{d:+d}")
    text = f"capture index k reads {where} ({sites[0].how})"
    return Answer(d, certainty, text + (f"; {why}" if why and certainty != CERTAIN else ""), cites)


def model_shift(src: Sources, entries) -> Answer:
    """What the target's set_aux_hidden_state_layers does to the ids it is given (vLLM stores them as-is)."""
    if not entries:
        return Answer(0, LIKELY, "the target's model class was not read; vLLM's models store the ids as given")
    shifts, cites = set(), []
    for mod, cls in entries:
        found = src.find_method(src.mro(mod, cls), "set_aux_hidden_state_layers")
        if found is None:
            continue
        m, _, fn = found
        params = [a.arg for a in fn.args.args[1:]]
        if not params:
            continue
        flow = idflow.follow(fn, {params[0]: "dflash"})
        for e in flow.exits_of("dflash"):
            shifts |= {t.shift for t in e.value}
            cites.append(m.cite(e.node))
    if not cites:
        return Answer(
            0,
            LIKELY,
            "set_aux_hidden_state_layers was not found on the target's classes; vLLM's models store the ids as given",
        )
    if len(shifts) != 1 or None in shifts:
        return undecided(
            "the target's set_aux_hidden_state_layers changes the ids in a way this probe cannot follow", *cites[:2]
        )
    return Answer(shifts.pop(), CERTAIN, "the target stores the aux layer ids as given", tuple(cites[:2]))


# --- sliding-window drafter layers ----------------------------------------------------------------


@dataclass(frozen=True)
class SwaRules:
    """What one DFlash drafter module does with sliding-window layers."""

    module: str | None
    reads_layer_types: Answer  # True: per-layer windows reach the attention; False: never read
    mixed: Answer  # "refused" (always), "refused-unless-v2", "allowed"
    error: str | None = None  # the engine's own text for the refusal
    causal: Answer | None = None  # "per-layer" (sliding causal, full non-causal) | "config-only" | None

    def to_dict(self) -> dict:
        return {
            "module": self.module,
            "reads_layer_types": self.reads_layer_types.to_dict(),
            "mixed": self.mixed.to_dict(),
            "error": self.error,
            "causal": self.causal.to_dict() if self.causal else None,
        }


def swa_rules(src: Sources, reg: dict, arch: str = "DFlashDraftModel") -> SwaRules:
    entry = reg.get(arch) or reg.get("DFlashDraftModel")
    if entry is None:
        a = undecided(f"{arch} is not registered in this release")
        return SwaRules(None, a, a)
    path = entry[0]
    mod = src.parsed(path)
    if mod is None:
        a = undecided(f"{path} was not read")
        return SwaRules(path, a, a)
    return module_swa(mod, per_layer_kw="per_layer_sliding_window")


def module_swa(mod: Module, per_layer_kw: str) -> SwaRules:
    tree = mod.ast_tree
    reads = [
        n
        for n in ast.walk(tree)
        if (isinstance(n, ast.Constant) and n.value == "layer_types")
        or (isinstance(n, ast.Attribute) and n.attr == "layer_types")
    ]
    window_kw = [n for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg == per_layer_kw]
    if not reads and not any(mentions(tree, w) for w in ("sliding_window", "use_swa", "sliding_attention")):
        read = Answer(
            False,
            CERTAIN,
            f"{mod.path} never reads layer_types or a sliding window: every drafter layer runs full attention",
            (mod.cite(1),),
        )
    elif reads and window_kw:
        read = Answer(
            True,
            CERTAIN,
            f"{mod.path} reads layer_types and passes a per-layer window to the attention",
            (mod.cite(reads[0]), mod.cite(window_kw[0])),
        )
    else:
        read = undecided(
            f"{mod.path} mentions sliding windows, but no per-layer window reaching the attention was found",
            *([mod.cite(reads[0])] if reads else []),
        )
    mixed, error = _mixed_refusal(mod)
    causal = None
    for fn in _functions(tree):
        if "causal" in fn.name and mentions(fn, "layer_types"):
            causal = Answer(
                "per-layer",
                CERTAIN,
                f"{fn.name}: sliding layers causal, full layers not (a config override wins)",
                (mod.cite(fn),),
            )
            break
    return SwaRules(mod.path, read, mixed, error, causal)


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    out = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[child] = node
    return out


def _mixed_refusal(mod: Module) -> tuple[Answer, str | None]:
    parents = _parents(mod.ast_tree)
    for node in ast.walk(mod.ast_tree):
        if not (
            isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and call_name(node.exc) == "NotImplementedError"
        ):
            continue
        text = " ".join(filter(None, (string_of(a) for a in node.exc.args))) or None
        # the conditions guarding it: every enclosing `if` whose body holds the raise
        tests: list[ast.expr] = []
        cur: ast.AST = node
        while cur in parents:
            par = parents[cur]
            if isinstance(par, ast.If) and cur in par.body:
                tests.append(par.test)
            cur = par
        about_mixing = any(_about_mixing(t) for t in tests) or (text and "mixed" in text.lower())
        if not about_mixing:
            continue
        v2 = any(mentions(t, "use_v2_model_runner") for t in tests)
        cite = mod.cite(node)
        guard = mod.cite(tests[0]) if tests else cite
        if v2:
            return Answer(
                "refused-unless-v2",
                CERTAIN,
                "mixed sliding/full drafters raise NotImplementedError unless the V2 model runner is in use",
                (guard, cite),
            ), text
        return Answer(
            "refused",
            CERTAIN,
            "mixed sliding/full drafters raise NotImplementedError whatever the runner",
            (guard, cite),
        ), text
    return Answer(
        "allowed", CERTAIN, f"{mod.path} raises nothing for mixed sliding/full drafters", (mod.cite(1),)
    ), None


def _about_mixing(test: ast.AST) -> bool:
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    return any("sliding" in n for n in names) or mentions(test, "sliding_attention")


# --- the model runner -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RunnerRules:
    env_parse: Answer  # "int": bool(int(value)) — "0"/"1"; any other text fails at startup
    unset: Answer  # "v1": unset means V1; "engine": unset lets the engine decide (use_v2_model_runner)
    rules: Answer  # ordered rules of use_v2_model_runner when the variable is unset: tuple of (condition, runner)
    v2_dflash: Answer  # True: the V2 runner accepts method dflash; False: it rejects it
    v2_error: str | None
    v1_rejects_mixed: Answer
    v1_error: str | None
    default_v2_archs: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "env_parse": self.env_parse.to_dict(),
            "unset": self.unset.to_dict(),
            "rules": self.rules.to_dict(),
            "v2_dflash": self.v2_dflash.to_dict(),
            "v2_error": self.v2_error,
            "v1_rejects_mixed": self.v1_rejects_mixed.to_dict(),
            "v1_error": self.v1_error,
            "default_v2_archs": list(self.default_v2_archs),
        }


def runner_rules(src: Sources) -> RunnerRules:
    envs = src.parsed(ENVS)
    cfg = src.parsed(CONFIG)
    env_parse, unset = _env_rule(envs)
    if cfg is None:
        u = undecided(f"{CONFIG} was not read")
        return RunnerRules(env_parse, unset, u, u, None, u, None)
    rules = _default_rules(cfg)
    v2, v2_err = _v2_allows_dflash(cfg)
    v1, v1_err = _v1_rejects_mixed(cfg)
    archs: tuple[str, ...] = ()
    for node in cfg.ast_tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES" for t in node.targets
        ):
            archs = tuple(
                sorted(
                    {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
                )
            )
    return RunnerRules(env_parse, unset, rules, v2, v2_err, v1, v1_err, archs)


def _env_rule(envs: Module | None) -> tuple[Answer, Answer]:
    if envs is None:
        u = undecided(f"{ENVS} was not read")
        return u, u
    for node in ast.walk(envs.ast_tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=False):
                if k is None or const_str(k) != ENV:
                    continue
                getenv = next((c for c in ast.walk(v) if isinstance(c, ast.Call) and call_name(c) == "getenv"), None)
                parse = (
                    "int"
                    if any(
                        isinstance(c, ast.Call) and call_name(c) in ("int", "maybe_convert_bool") for c in ast.walk(v)
                    )
                    else None
                )
                cite = envs.cite(k)
                pa = (
                    Answer(
                        "int", CERTAIN, f"{ENV} is parsed with int(): '0' or '1'; other text fails at startup", (cite,)
                    )
                    if parse
                    else undecided(f"how {ENV} is parsed was not recognised", cite)
                )
                if getenv is None or len(getenv.args) < 2:
                    return pa, undecided(f"the unset default of {ENV} was not recognised", cite)
                default = getenv.args[1]
                if isinstance(default, ast.Constant) and default.value is None:
                    return pa, Answer(
                        "engine",
                        CERTAIN,
                        f"{ENV} unset: the engine picks the runner (VllmConfig.use_v2_model_runner)",
                        (cite,),
                    )
                if isinstance(default, ast.Constant) and str(default.value) in ("0", "1"):
                    runner = "v2" if str(default.value) == "1" else "v1"
                    return pa, Answer(
                        runner, CERTAIN, f"{ENV} unset means {default.value!r}: the {runner.upper()} runner", (cite,)
                    )
                return pa, undecided(f"the unset default of {ENV} was not recognised", cite)
    u = Answer(None, CERTAIN, f"{ENV} is not read by this release")
    return u, Answer("v1", CERTAIN, f"{ENV} does not exist in this release: the V1 runner", (envs.cite(1),))


def _method(mod: Module, name: str) -> ast.FunctionDef | None:
    for cls in mod.classes.values():
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == name:
                return item
    return None


# conditions of use_v2_model_runner this probe understands: helper name -> what it means
_RULE_CALLS = {
    "_dflash_needs_multi_kv_group": "mixed-dflash",
    "_is_dflash2_draft": "dflash2",
    "_is_default_v2_model_runner_model": "default-v2-model",
    "_get_v2_model_runner_unsupported_features": "v2-unsupported",
}


def _default_rules(cfg: Module) -> Answer:
    """use_v2_model_runner's rules after the explicit variable: ((condition, 'v1'|'v2'), …) in order."""
    fn = _method(cfg, "use_v2_model_runner")
    if fn is None:
        return Answer((), CERTAIN, "no use_v2_model_runner rules: the variable alone picks the runner", (cfg.cite(1),))
    rules: list[tuple[str, str]] = []
    cites: list[Cite] = [cfg.cite(fn)]
    unsupported_var = None
    for s in fn.body:
        if (
            isinstance(s, ast.Assign)
            and isinstance(s.value, ast.Call)
            and call_name(s.value) == "_get_v2_model_runner_unsupported_features"
        ):
            unsupported_var = next((t.id for t in s.targets if isinstance(t, ast.Name)), None)
            continue
        if isinstance(s, ast.If):
            ret = next((r for r in s.body if isinstance(r, ast.Return)), None)
            if ret is None or not isinstance(ret.value, ast.Constant) or not isinstance(ret.value.value, bool):
                if ret is not None and isinstance(ret.value, ast.Name):
                    rules.append(("explicit", "env"))  # `if x is not None: return x`
                continue
            runner = "v2" if ret.value.value else "v1"
            cond = _condition(s.test, unsupported_var)
            rules.append((cond, runner))
            if cond in ("mixed-dflash", "dflash2", "default-v2-model", "v2-unsupported"):
                cites.append(cfg.cite(s))
        elif isinstance(s, ast.Return) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, bool):
            rules.append(("otherwise", "v2" if s.value.value else "v1"))
            cites.append(cfg.cite(s))
    return Answer(
        tuple(rules), CERTAIN, "use_v2_model_runner: " + "; ".join(f"{c} -> {r}" for c, r in rules), tuple(cites[:5])
    )


def _condition(test: ast.AST, unsupported_var: str | None) -> str:
    neg = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if isinstance(test, ast.UnaryOp) and neg else test
    fname = call_name(inner) if isinstance(inner, ast.Call) else None
    if fname is not None and fname in _RULE_CALLS:
        name = _RULE_CALLS[fname]
        return ("not " if neg else "") + name
    if unsupported_var and isinstance(inner, ast.Name) and inner.id == unsupported_var:
        return "v2-unsupported"
    if mentions(test, "HAS_TRITON"):
        return "no-triton"
    if mentions(test, "dspark"):
        return "dspark"
    if mentions(test, "is_diffusion"):
        return "diffusion"
    if mentions(test, "is_rocm"):
        return "rocm"
    return "other: " + ast.unparse(test)[:80]


def _v2_allows_dflash(cfg: Module) -> tuple[Answer, str | None]:
    fn = _method(cfg, "_get_v2_model_runner_unsupported_features") or _method(cfg, "_validate_v2_model_runner")
    if fn is None:
        return undecided("the V2 runner's unsupported-feature list was not found", cfg.cite(1)), None
    allow: list[tuple[tuple[str, ...], ast.AST]] = []
    deny: list[tuple[tuple[str, ...], ast.AST]] = []
    message = None
    # only the clause that reports an unsupported *speculative method* (not e.g. parallel drafting's
    # `method not in ("dflash", "dspark")`): an `if` on `….method (not) in (…)` whose body appends that text
    for node in ast.walk(fn):
        if not isinstance(node, ast.If):
            continue
        texts = [
            string_of(c.args[0])
            for c in ast.walk(ast.Module(body=node.body, type_ignores=[]))
            if isinstance(c, ast.Call) and call_name(c) == "append" and c.args
        ]
        said = next((t for t in texts if t and "speculative method" in t), None)
        if said is None:
            continue
        for cmp_ in ast.walk(node.test):
            if (
                isinstance(cmp_, ast.Compare)
                and len(cmp_.ops) == 1
                and isinstance(cmp_.left, ast.Attribute)
                and cmp_.left.attr == "method"
            ):
                values = str_tuple(cmp_.comparators[0])
                if values is None:
                    continue
                if isinstance(cmp_.ops[0], ast.NotIn):
                    allow.append((values, cmp_))
                elif isinstance(cmp_.ops[0], ast.In):
                    deny.append((values, cmp_))
                message = said
    if not allow and not deny:
        return Answer(True, CERTAIN, "the V2 runner has no speculative-method restriction", (cfg.cite(fn),)), None
    denied = [n for vals, n in deny if "dflash" in vals]
    not_allowed = [n for vals, n in allow if "dflash" not in vals]
    prefix = _raise_prefix(cfg, "_validate_v2_model_runner") or "VLLM_USE_V2_MODEL_RUNNER does not yet support: "
    err = prefix + (message.replace("{…}", "dflash") if message else "speculative method 'dflash'")
    if denied or not_allowed:
        node = (denied or not_allowed)[0]
        return Answer(
            False, CERTAIN, "the V2 runner's speculative-method list excludes 'dflash'", (cfg.cite(node),)
        ), err
    node = (allow or deny)[0][1]
    return Answer(True, CERTAIN, "the V2 runner accepts method 'dflash'", (cfg.cite(node),)), None


def _raise_prefix(cfg: Module, fn_name: str) -> str | None:
    fn = _method(cfg, fn_name)
    if fn is None:
        return None
    found = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            arg = node.exc.args[0]
            left = arg.left if isinstance(arg, ast.BinOp) else arg
            s = string_of(left)
            if s and "support" in s:  # the feature-list message, not e.g. "requires Triton"
                found.append(s.split("{…}")[0])
    return found[0] if found else None


def _v1_rejects_mixed(cfg: Module) -> tuple[Answer, str | None]:
    fn = _method(cfg, "_get_v1_model_runner_unsupported_features")
    if fn is None:
        return Answer(False, CERTAIN, "no V1-runner feature check in config/vllm.py", (cfg.cite(1),)), None
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and any(
            isinstance(c, ast.Call) and call_name(c) == "_dflash_needs_multi_kv_group" for c in ast.walk(node.test)
        ):
            text = next(
                (
                    string_of(c.args[0])
                    for c in ast.walk(node)
                    if isinstance(c, ast.Call) and call_name(c) == "append" and c.args
                ),
                None,
            )
            prefix = _raise_prefix(cfg, "_validate_v1_model_runner") or "Model Runner V1 does not support: "
            err = prefix + (text or "mixed sliding/full dflash drafts")
            return Answer(
                True,
                CERTAIN,
                "the V1 runner rejects mixed sliding/full DFlash drafters at config time",
                (cfg.cite(node),),
            ), err
    return Answer(
        False, CERTAIN, "the V1 runner's feature check does not mention mixed DFlash drafters", (cfg.cite(fn),)
    ), None
