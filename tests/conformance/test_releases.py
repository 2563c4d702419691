"""The source probes on the real releases: vLLM 0.19.0–0.33.0 and SGLang 0.5.15–0.5.23, against expected.toml.

Every release is analysed from its own wheel (only its .py files and METADATA extracted, outside the
repo), and each answer must equal the fact written in expected.toml and cite the line that states it.
Also: every release's engine_support.toml row must agree with its source (the table is re-checked here),
two hand-patched 0.20.1 trees (a +1 fix written two ways) must read as +1 with the table disagreement
reported, and a 0.26.0 install without dist-info must give the same answers with the version from
vllm/_version.py.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from dflash_doctor.engines import CERTAIN, DirectoryTree, SourceTree, analyse
from dflash_doctor.engines.outcome import Deployment, decide
from dflash_doctor.engines.table import compare, modes
from dflash_doctor.evidence.engine_facts import EngineAnalysis
from dflash_doctor.models.engine_support import lookup
from tests.conformance.conftest import download_allowed
from tests.conformance.wheels import WheelUnavailable, tree_for

pytestmark = pytest.mark.conformance

ROWS = tomllib.loads((Path(__file__).parent / "expected.toml").read_text())["release"]
QWEN36 = ("Qwen3_5ForConditionalGeneration",)
MIXED = dict(
    drafter_architectures=("DFlashDraftModel",),
    drafter_method="dflash",
    swa_mix="mixed",
    target_architectures=QWEN36,
    target_hybrid=True,
    env_known=True,
)
ENVS = {"unset": {}, "v2": {"VLLM_USE_V2_MODEL_RUNNER": "1"}, "v1": {"VLLM_USE_V2_MODEL_RUNNER": "0"}}


def _tree(engine: str, version: str) -> Path:
    try:
        return tree_for(engine, version, fetch=download_allowed())
    except WheelUnavailable as exc:
        pytest.skip(f"not on the package registry / cache here: {exc}")


def _cited(answer, at: str) -> bool:
    return any(f"{c.path}:{c.line}" == at for c in answer.cites)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['engine']}-{r['version']}" for r in ROWS])
def test_release(row):
    engine, version = row["engine"], row["version"]
    a = analyse(DirectoryTree(_tree(engine, version)), engine, QWEN36)
    assert a.version.value == version and a.version.source.endswith(".dist-info/METADATA")
    assert a.dflash.certain and list(a.dflash.value) == row["dflash"]
    if row["dflash"]:
        assert _cited(a.dflash, row["dflash_at"]), a.dflash.cites
    if engine == "vllm":
        _vllm_facts(a, row)
    else:
        _sglang_facts(a, row, _tree(engine, version))
    for tag, env in ENVS.items():
        o = decide(a, Deployment(env=env, **MIXED))
        assert [o.value, o.runner or ""] == row[f"outcome_{tag}"], (tag, o.sentence)
        if o.value in ("refused", "absent"):
            assert o.error and o.works
    # the support table row for this release says what the release's source says
    assert compare(a, lookup(engine, version)) == [], [d.describe() for d in compare(a, lookup(engine, version))]
    _aux_facts(a, row)


AUX_PLACEMENTS = (
    "eagle_aux_hidden_state_layer_ids",
    "eagle_config.eagle_aux_hidden_state_layer_ids",
    "dflash_config.target_layer_ids",
    "target_layer_ids",
)


def _aux_facts(a, row):
    """Issue 28: where each runner reads a drafter's aux ids, from the source, equals aux_taps.toml's row for the
    release (the conventions table is re-checked on every release the suite reads) and, where expected.toml
    states it, the reading written there by hand, citing the function."""
    from dflash_doctor.models.aux_taps import release_rows

    table = {r["runner"]: r for r in release_rows(row["engine"], row["version"])}
    for runner, ans in a.aux_reads.items():
        key = runner.lower()
        if f"{key}_aux" in row:
            assert ans.certain and [list(x) for x in ans.value if x[0] in AUX_PLACEMENTS] == row[f"{key}_aux"], ans.why
            assert _cited(ans, row[f"{key}_aux_at"]), ans.cites
        if ans.certain and runner in table:
            got = sorted((p, s) for p, s in ans.value if p in AUX_PLACEMENTS)
            want = sorted((p, s) for p, s in table[runner]["reads"] if p in AUX_PLACEMENTS)
            if row["engine"] == "sglang":  # SGLang's source reading covers the EAGLE-3 placement only
                want = [w for w in want if w[0] == "eagle_config.eagle_aux_hidden_state_layer_ids"]
            assert got == want, (runner, got, want)


def _vllm_facts(a, row):
    if not row["dflash"]:
        assert all(lm.value == "n/a" for lm in a.layer_map.values())
        return
    v1 = a.layer_map["V1"]
    assert (v1.value, v1.certainty) == (row["v1_map"], CERTAIN), v1.why
    assert _cited(v1, row["v1_at"]), v1.cites
    v2 = a.layer_map["V2"]
    assert v2.value == row["v2_map"] and v2.certain, v2.why
    if "v2_map_at" in row:
        assert _cited(v2, row["v2_map_at"]), v2.cites
    rr = a.runner
    assert rr.v2_dflash.value is row["v2_dflash"] and _cited(rr.v2_dflash, row["v2_at"]), rr.v2_dflash.cites
    assert rr.unset.value == row["runner_unset"]
    assert (("mixed-dflash", "v2") in rr.rules.value) is row["mixed_forces_v2"]
    if row["mixed_forces_v2"]:
        assert _cited(rr.rules, row["mixed_forces_v2_at"]), rr.rules.cites
    assert rr.v1_rejects_mixed.value is row["v1_rejects_mixed"]
    if row["v1_rejects_mixed"]:
        assert _cited(rr.v1_rejects_mixed, row["v1_rejects_mixed_at"])
    swa = a.swa_for("DFlashDraftModel")
    assert swa.reads_layer_types.value is row["reads_layer_types"] and swa.reads_layer_types.certain
    assert swa.mixed.value == row["mixed"]
    if "mixed_at" in row:
        assert _cited(swa.mixed, row["mixed_at"]) and swa.error


def _sglang_facts(a, row, root):
    lm = a.layer_map["worker"]
    assert (lm.value, lm.certainty) == (row["qwen36_map"], CERTAIN), lm.why
    assert _cited(lm, row["qwen36_at"]) or _cited(a.target_shift, row["qwen36_at"]), (lm.cites, a.target_shift.cites)
    q3 = analyse(DirectoryTree(root), "sglang", ("Qwen3ForCausalLM",))
    assert (q3.layer_map["worker"].value, q3.layer_map["worker"].certainty) == (row["qwen3_map"], CERTAIN)
    assert _cited(q3.target_shift, row["qwen3_at"]), q3.target_shift.cites
    swa = a.swa_for("DFlashDraftModel")
    assert swa.reads_layer_types.value is row["reads_layer_types"] and swa.reads_layer_types.certain
    if "swa_at" in row:
        assert modes(a)["drafter_swa"] == "honoured"


# --- hand-patched and unusual installs ------------------------------------------------------------------


class Overlay(SourceTree):
    """A real release tree with some files replaced or hidden (a hand patch, a missing dist-info)."""

    def __init__(self, base: DirectoryTree, replace: dict[str, str] | None = None, hide: tuple[str, ...] = ()):
        self.base, self.replace, self.hide = base, replace or {}, hide
        self.name = f"{base.name} (modified)"

    def listing(self):
        return tuple(p for p in self.base.listing() if not any(p.startswith(h) for h in self.hide))

    def read(self, path):
        if any(path.startswith(h) for h in self.hide):
            return None
        return self.replace.get(path, self.base.read(path))


RAW_READ = 'layer_ids = dflash_config.get("target_layer_ids")'
PATCHES = {
    # the fix on its own line after the read (the old line-based probe said "raw" here)
    "own-line": lambda indent: f"{indent}{RAW_READ}\n{indent}layer_ids = [i + 1 for i in layer_ids or []]",
    # the same fix as a loop
    "loop": lambda indent: (
        f"{indent}{RAW_READ}\n{indent}shifted = []\n{indent}for layer_id in layer_ids or []:\n"
        f"{indent}    shifted.append(layer_id + 1)\n{indent}layer_ids = shifted"
    ),
}


def releases(*pairs):
    """Mark the releases a test reads (the smoke subset runs a test only when it holds them all)."""

    def mark(fn):
        fn.releases = pairs
        return fn

    return mark


@pytest.mark.parametrize("way", sorted(PATCHES))
@releases(("vllm", "0.20.1"))
def test_hand_patched_020_reads_plus_one(way):
    base = DirectoryTree(_tree("vllm", "0.20.1"))
    path = "vllm/v1/worker/gpu_model_runner.py"
    lines = base.read(path).splitlines()
    (i,) = [n for n, line in enumerate(lines) if line.strip() == RAW_READ]
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    patched = "\n".join(lines[:i] + [PATCHES[way](indent)] + lines[i + 1 :]) + "\n"
    a = analyse(Overlay(base, {path: patched}), "vllm", QWEN36)
    assert a.layer_map["V1"].value == "plus-one" and a.layer_map["V1"].certain
    (d,) = compare(a, lookup("vllm", "0.20.1"))  # reported with both
    assert (d.field, d.table, d.source) == ("layer_map", "raw", "plus-one")
    o = decide(a, Deployment(env={}, **MIXED))
    assert o.layer_map.value == "plus-one" and o.value == "ignored"  # the patch does not add sliding windows


@releases(("vllm", "0.26.0"))
def test_install_without_dist_info():
    root = _tree("vllm", "0.26.0")
    full = analyse(DirectoryTree(root), "vllm", QWEN36)
    bare = analyse(Overlay(DirectoryTree(root), hide=("vllm-0.26.0.dist-info",)), "vllm", QWEN36)
    assert (bare.version.value, bare.version.source) == ("0.26.0", "vllm/_version.py")
    assert modes(bare) == modes(full)
    assert decide(bare, Deployment(env={}, **MIXED)).value == "honoured"


# --- the collector on a real install ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "engine, version, outcome",
    [("vllm", "0.20.1", "ignored"), ("vllm", "0.26.0", "honoured"), ("sglang", "0.5.22", "honoured")],
)
def test_check_host_reads_a_real_install(tmp_path, engine, version, outcome):
    """The fake deployment with the real release's files installed: the collector's reads (the listing and
    the files every analysis needs, then the target's modules and what they import) reach the same certain
    answers as reading the whole tree."""
    import shutil

    from dflash_doctor.collect.host import HostOptions, collect_host
    from dflash_doctor.hosts.local import LocalHost
    from tests.hosts.fakedeploy import build, scenarios, start_server, stop_server

    root = _tree(engine, version)
    sc = scenarios()["sglang-0.5.22" if engine == "sglang" else "seed"]
    from dataclasses import replace

    dep = build(tmp_path / "deploy", replace(sc, engine_version=version, engine=engine))
    site = next((tmp_path / "deploy" / "venv" / "lib").glob("python3*/site-packages"))
    for child in list(site.iterdir()):
        if child.name.startswith(engine):
            shutil.rmtree(child)
    shutil.copytree(root, site, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".complete"))
    start_server(dep)
    try:
        ev = collect_host(LocalHost(), HostOptions(pid=dep.proc.pid, metrics=False))
    finally:
        stop_server(dep)
    a = ev.get(EngineAnalysis)
    assert a is not None, ev.why_missing(EngineAnalysis)
    full = analyse(DirectoryTree(root), engine, QWEN36)
    assert modes(a) == modes(full) and a.version.value == version
    assert all(v.certain for v in a.layer_map.values()), {k: v.why for k, v in a.layer_map.items()}
    assert decide(a, Deployment(env={}, **MIXED)).value == outcome
