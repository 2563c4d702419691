"""Where an installed engine reads a drafter's aux layer ids (engines/auxreads.py), on runner functions written
here in the shapes the releases use — with a hand patch the table cannot know, and decoys that must not count —
and what engine-aux-taps then says from that source instead of the release table."""

from __future__ import annotations

import textwrap

from dflash_doctor.engines import FetchedTree
from dflash_doctor.engines.auxreads import function_reads, vllm_reads
from dflash_doctor.engines.pysource import Sources
from dflash_doctor.models import aux_taps

V1 = "vllm/v1/worker/gpu_model_runner.py"
V2 = "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py"

RELEASE_V1 = """
class GPUModelRunner:
    def _get_eagle3_aux_layers_from_config(self):
        hf_config = self.speculative_config.draft_model_config.hf_config
        layer_ids = getattr(hf_config, "eagle_aux_hidden_state_layer_ids", None)
        if not layer_ids:
            dflash_config = getattr(hf_config, "dflash_config", None)
            eagle_config = getattr(hf_config, "eagle_config", None)
            if dflash_config and isinstance(dflash_config, dict):
                layer_ids = [i + 1 for i in (dflash_config.get("target_layer_ids") or [])]
            if eagle_config and isinstance(eagle_config, dict):
                layer_ids = eagle_config.get("eagle_aux_hidden_state_layer_ids")
        if layer_ids and isinstance(layer_ids, (list, tuple)):
            return tuple(layer_ids)
        return None
"""

# a hand patch: the nested ids shifted into the capture convention (and a +1 on a length that must not count)
PATCHED_V1 = RELEASE_V1.replace(
    'layer_ids = eagle_config.get("eagle_aux_hidden_state_layer_ids")',
    'nested = eagle_config.get("eagle_aux_hidden_state_layer_ids") or []\n'
    "                n = len(nested) + 1\n"
    "                layer_ids = [i + 1 for i in nested]",
)

RELEASE_V2 = """
def get_eagle3_aux_layers_from_config(spec_config):
    hf_config = spec_config.draft_model_config.hf_config
    layer_ids = getattr(hf_config, "eagle_aux_hidden_state_layer_ids", None)
    if not layer_ids:
        dflash_config = getattr(hf_config, "dflash_config", None)
        if dflash_config and isinstance(dflash_config, dict):
            layer_ids = [i + 1 for i in (dflash_config.get("target_layer_ids") or [])]
    if not layer_ids:
        target_layer_ids = getattr(hf_config, "target_layer_ids", None)
        if target_layer_ids:
            layer_ids = [i + 1 for i in target_layer_ids]
    if not layer_ids:
        for config_name in ("dflash_config", "eagle_config"):
            drafter_config = getattr(hf_config, config_name, None)
            if drafter_config and isinstance(drafter_config, dict):
                layer_ids = drafter_config.get("layer_ids")
                if layer_ids:
                    break
    if layer_ids and isinstance(layer_ids, (list, tuple)):
        return tuple(layer_ids)
    return None
"""


def _src(files: dict[str, str]) -> Sources:
    return Sources(FetchedTree(list(files), {k: textwrap.dedent(v) for k, v in files.items()}, name="synthetic"))


def test_reads_are_named_by_where_the_key_is_read():
    reads = vllm_reads(_src({V1: RELEASE_V1, V2: RELEASE_V2}), V1)
    assert reads["V1"].value == (
        ("dflash_config.target_layer_ids", 1),
        ("eagle_aux_hidden_state_layer_ids", 0),
        ("eagle_config.eagle_aux_hidden_state_layer_ids", 0),
    )
    assert reads["V2"].value == (
        ("dflash_config.layer_ids", 0),
        ("dflash_config.target_layer_ids", 1),
        ("eagle_aux_hidden_state_layer_ids", 0),
        ("eagle_config.layer_ids", 0),
        ("target_layer_ids", 1),
    )
    assert reads["V1"].cites[0].line == 3  # the function


def test_a_hand_patch_is_read_as_written():
    src = _src({V1: PATCHED_V1})
    mod = src.parsed(V1)
    fn = next(iter(mod.classes.values())).body[0]
    assert dict(function_reads(mod, fn).value)["eagle_config.eagle_aux_hidden_state_layer_ids"] == 1


def _drafter(ids):
    from types import SimpleNamespace

    return SimpleNamespace(
        ids_written=tuple(ids),
        target_layer_ids=tuple(ids),
        layer_ids_source="eagle_config.eagle_aux_hidden_state_layer_ids",
        method="eagle3",
        num_hidden_layers=1,
    )


def test_the_installed_source_outranks_the_table():
    """vLLM 0.26.0's table row taps nested ids one early on V1; an install patched to add 1 taps them as trained."""
    from types import SimpleNamespace

    from dflash_doctor.engines.answers import CERTAIN, Answer

    d = _drafter((1, 29, 57))
    (v1,) = [s for s in aux_taps.served(d, "vllm", "0.26.0", 61) if s.runner == "V1"]
    assert v1.taps.outputs == (0, 28, 56)
    src = _src({V1: PATCHED_V1})
    mod = src.parsed(V1)
    fn = next(iter(mod.classes.values())).body[0]
    analysis = SimpleNamespace(aux_reads={"V1": function_reads(mod, fn), "V2": Answer((), CERTAIN, "none")})
    rows = aux_taps.rows_from_source(analysis, "vllm", "0.26.0")
    (v1,) = [s for s in aux_taps.served(d, "vllm", "0.26.0", 61, rows=rows) if s.runner == "V1"]
    assert v1.taps.outputs == (1, 29, 57) and "installed source" in v1.taps.cite
