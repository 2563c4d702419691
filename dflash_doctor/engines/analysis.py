"""One engine install, analysed: every answer the DFlash checks need, each with its file:line and certainty.

    tree = DirectoryTree("/opt/venv/lib/python3.11/site-packages")      # or FetchedTree from a host
    result = analyse(tree, target_architectures=("Qwen3_5ForConditionalGeneration",))
    result.layer_map["V1"].value  -> "plus-one" | "raw" | …      result.swa_for("DFlashDraftModel").mixed …

Nothing from the engine is imported or executed: its files are parsed with `ast`.
"""

from __future__ import annotations

from ..evidence.engine_facts import EngineAnalysis
from . import sglang as sg
from . import vllm as vl
from .answers import CERTAIN, LIKELY, Answer, VersionReading, undecided
from .auxreads import SG_FILES, sglang_reads, vllm_reads
from .capture import capture_sites
from .pysource import Module, Sources
from .tree import SourceTree
from .version import read_version, version_files

ENGINES = ("vllm", "sglang")


def detect_engine(listing: tuple[str, ...] | list[str]) -> str | None:
    tops = {p.split("/", 1)[0] for p in listing}
    found = [e for e in ENGINES if e in tops]
    return found[0] if len(found) == 1 else None


def first_files(engine: str, listing: tuple[str, ...] | list[str]) -> list[str]:
    """Round 1: the files holding the version."""
    return version_files(engine, tuple(listing))


def static_files(engine: str) -> list[str]:
    """Files every analysis of `engine` reads, whatever the target (relative to the package dir): a
    collector can fetch them with the listing, before it knows the target's architecture."""
    if engine == "vllm":
        models = vl.MODELS[len("vllm/") :]
        return (
            [p[len("vllm/") :] for p in (vl.CONFIG, vl.SPEC, vl.ENVS, vl.V1_RUNNER, vl.REGISTRY, vl.INTERFACES)]
            + [
                "v1/worker/gpu/spec_decode/eagle/eagle3_utils.py",
                models + "qwen3_dflash.py",
                models + "qwen3_dflash2.py",
            ]
            + [models + f for f in vl.DEFAULT_TARGETS]
        )

    models = sg.MODELS[len("sglang/") :]
    return [p[len("sglang/") :] for p in (sg.SPEC_INFO, sg.DFLASH_MODEL, sg.DFLASH_UTILS, *SG_FILES)] + [
        models + f for f in sg.DEFAULT_TARGETS
    ]


def wanted_files(
    engine: str, listing: tuple[str, ...] | list[str], target_architectures: tuple[str, ...] = ()
) -> list[str]:
    """Round 2: the files the analysis reads (runner, config, registry, DFlash model, the target's module)."""
    listing = tuple(listing)
    files = version_files(engine, listing)
    files += vl.wanted(listing, target_architectures) if engine == "vllm" else sg.wanted(listing, target_architectures)
    return list(dict.fromkeys(files))


def follow_up(engine: str, tree: SourceTree, target_architectures: tuple[str, ...] = ()) -> list[str]:
    """Round 3 (optional): the model modules the target's module (or, target unknown, the common model
    files) imports that were not fetched yet: where its base classes and language model live."""
    src = Sources(tree)
    models = vl.MODELS if engine == "vllm" else sg.MODELS
    roots: list[str] = []
    if engine == "vllm":
        reg, _ = vl.registry(src)
        roots += [reg[a][0] for a in target_architectures if a in reg]
    for arch in target_architectures:
        roots += [models + f"{stem}.py" for stem in vl.module_guesses(arch)]
    if not target_architectures:
        defaults = vl.DEFAULT_TARGETS if engine == "vllm" else sg.DEFAULT_TARGETS
        roots += [models + f for f in defaults]
    want: list[str] = []
    for p in dict.fromkeys(roots):
        if not tree.has(p):
            continue
        if tree.read(p) is None:
            want.append(p)
            continue
        mod = src.parsed(p)
        if mod is None:
            continue
        for dotted, _ in mod.imports.values():
            q = src.module_path(dotted)
            if q and q.startswith(models) and tree.read(q) is None:
                want.append(q)
    return list(dict.fromkeys(want))


def analyse(
    tree: SourceTree,
    engine: str | None = None,
    target_architectures: tuple[str, ...] = (),
    log_version: str | None = None,
) -> EngineAnalysis:
    engine = engine or detect_engine(tree.listing()) or "vllm"
    src = Sources(tree)
    version = read_version(engine, tree, log_version)
    archs = tuple(target_architectures)
    return _vllm(src, version, archs) if engine == "vllm" else _sglang(src, version, archs)


def _layer_map(shift: Answer, target: Answer, capture: Answer) -> Answer:
    parts = (shift, target, capture)
    if shift.value == "not-read":
        return Answer("n/a", CERTAIN, shift.why, shift.cites)
    bad = next((p for p in parts if not p.decided), None)
    if bad is not None:
        return undecided(bad.why, *bad.cites)
    offset = shift.value + target.value + capture.value
    certainty = CERTAIN if all(p.certain for p in parts) else LIKELY
    cites = shift.cites[:2] + target.cites[:1] + capture.cites[:2]
    if offset == 0:
        return Answer(
            "plus-one",
            certainty,
            f"{shift.why}; {capture.why}: each tap reads the layer the drafter was trained on",
            cites,
        )
    if offset == -1:
        return Answer("raw", certainty, f"{shift.why}; {capture.why}: every tap reads one layer early", cites)
    return Answer(
        f"offset {offset:+d}", certainty, f"{shift.why}; {capture.why}: taps read {offset:+d} layers off", cites
    )


def _vllm(src: Sources, version: VersionReading, archs: tuple[str, ...]) -> EngineAnalysis:
    reg, _ = vl.registry(src)
    dflash = vl.methods(src, reg)
    shifts = vl.runner_shifts(src)
    mods, entries, why = vl.target_files(src, reg, archs)
    capture = vl.capture_answer(src, mods, entries, why, vl.MODELS, vl.DEFAULT_TARGETS, [vl.INTERFACES])
    tshift = vl.model_shift(src, entries)
    runner = vl.runner_rules(src) if dflash.value or not dflash.decided else vl.runner_rules(src)
    layer_map = {r: _layer_map(s, tshift, capture) for r, s in shifts.items()}
    if runner.v2_dflash.value is False and "V2" in layer_map:
        layer_map["V2"] = Answer(
            "n/a", CERTAIN, "the V2 runner rejects method 'dflash' in this release", runner.v2_dflash.cites
        )
    swa = {a: vl.swa_rules(src, reg, a) for a in (dflash.value or ())} if dflash.value else {}
    if dflash.value == ():
        layer_map = {r: Answer("n/a", CERTAIN, "no DFlash in this release", dflash.cites) for r in layer_map}

    reads = vllm_reads(src, vl.V1_RUNNER)
    return EngineAnalysis(
        "vllm",
        version,
        dflash,
        layer_map,
        shifts,
        tshift,
        capture,
        swa,
        runner,
        archs,
        tuple(sorted(src.missing)),
        src.tree.name,
        aux_reads=reads,
    )


def _sglang(src: Sources, version: VersionReading, archs: tuple[str, ...]) -> EngineAnalysis:
    dflash = sg.methods(src)
    rshift = sg.runner_shift(src)
    entries, why = sg.target_entries(src, archs) if archs else ([], "the target's architecture is unknown")
    certainty_note = None
    if not entries:
        entries = sg.default_entries(src)
        certainty_note = (why or "target unknown") + "; read from the engine's common model files instead"
    tshift, holders = sg.target_chain(src, entries)
    # the capture loop: in the classes that end up holding the capture list (and their bases)
    only = None
    mods = {m.path: m for m, _ in entries}
    if holders:
        only = set()
        for hm, hc in holders:
            for m, c in src.mro(hm, hc):
                only.add((m.path, c.name))
                mods[m.path] = m
    for m, c in entries:
        for mm, _ in src.mro(m, c):
            mods[mm.path] = mm
    # decoder layers that receive a capture hook may live in modules the target imports (qwen3_vl -> qwen3, qwen2)
    extra: dict[str, Module | None] = {}
    for m in list(mods.values()):
        for dotted, _ in m.imports.values():
            p = src.module_path(dotted)
            if p and p.startswith(sg.MODELS) and p not in mods and src.tree.read(p) is not None:
                extra[p] = src.parsed(p)

    allmods = list(mods.values()) + [e for e in extra.values() if e is not None]
    sites = capture_sites(allmods, only_classes=only)
    sites = [s for s in sites if s.cite.path in mods]
    capture = _sites_answer(sites, certainty_note)
    if tshift.decided and certainty_note:
        tshift = Answer(tshift.value, LIKELY, f"{tshift.why} ({certainty_note})", tshift.cites)
    lm = _layer_map(rshift, tshift, capture)
    swa_rules = sg.swa_rules(src)
    swa = {a: swa_rules for a in (dflash.value or ())} if dflash.value else {}
    layer_map = {
        "worker": lm if dflash.value != () else Answer("n/a", CERTAIN, "no DFlash in this release", dflash.cites)
    }

    reads = {"worker": sglang_reads(src, entries)}
    return EngineAnalysis(
        "sglang",
        version,
        dflash,
        layer_map,
        {"worker": rshift},
        tshift,
        capture,
        swa,
        None,
        archs,
        tuple(sorted(src.missing)),
        src.tree.name,
        aux_reads=reads,
    )


def _sites_answer(sites, note: str | None) -> Answer:
    if not sites:
        return undecided("no hidden-state capture was found in the target's model files")
    ds = {s.d for s in sites}
    if None in ds:
        bad = next(s for s in sites if s.d is None)
        return undecided(f"a capture site this probe cannot follow: {bad.how}", bad.cite)
    if len(ds) > 1:
        return undecided("the target's capture sites disagree on which layer they read", *[s.cite for s in sites[:3]])
    d = ds.pop()
    where = "the stream entering layer k" if d == -1 else ("the output of layer k" if d == 0 else f"layer k{d:+d}")
    cites = tuple(s.cite for s in sites[:2]) + tuple(s.hop for s in sites[:1] if s.hop)
    return Answer(
        d,
        LIKELY if note else CERTAIN,
        f"capture index k reads {where} ({sites[0].how})" + (f"; {note}" if note else ""),
        cites,
    )
