"""The engine-support table: the rows the seed scenario and later releases depend on."""

from __future__ import annotations

import pytest

from dflash_doctor.models.engine_support import load_table, lookup


@pytest.mark.parametrize(
    "version, dflash, layer_map, swa",
    [
        ("0.19.1", False, None, None),
        ("0.20.0", True, "raw", "ignored"),
        ("0.20.1", True, "raw", "ignored"),
        ("0.20.1+cu129", True, "raw", "ignored"),
        ("0.21.0", True, "raw", "ignored"),
        ("0.22.0", True, "plus-one", "ignored"),
        ("0.24.2", True, "plus-one", "ignored"),
        ("0.25.0", True, "plus-one", "uniform-only"),
        ("0.26.0", True, "plus-one", "v2-runner"),
        ("0.28.1", True, "plus-one", "v2-runner"),
        ("0.31.0", True, "plus-one", "v2-runner"),
    ],
)
def test_vllm_rows(version, dflash, layer_map, swa):
    row = lookup("vllm", version)
    assert (row.dflash, row.layer_map, row.drafter_swa) == (dflash, layer_map, swa)


def test_rows_verified_from_wheels_say_so():
    assert "0.20.1" in lookup("vllm", "0.20.1").verified
    assert "_get_eagle3_aux_layers_from_config" in lookup("vllm", "0.20.1").source
    assert all(r.verified for r in load_table()), "every row was re-checked against its wheels"


def test_unknown_engine_or_version_is_not_guessed():
    assert lookup("vllm", None) is None
    assert lookup("tgi", "2.0.0") is None
    assert lookup("vllm", "nightly") is None


def test_ranges_do_not_overlap():
    from dflash_doctor.versions import release_of

    for engine in {r.engine for r in load_table()}:
        rows = sorted((release_of(r.min), release_of(r.max)) for r in load_table() if r.engine == engine)
        for (_, hi1), (lo2, _) in zip(rows, rows[1:], strict=False):
            assert hi1 < lo2


@pytest.mark.parametrize(
    "version, mix, v2, outcome",
    [
        ("0.20.1", "mixed", None, "ignored"),
        ("0.25.0", "mixed", None, "refused"),
        ("0.25.0", "all", None, "honoured"),
        ("0.26.0", "mixed", "1", "honoured"),
        ("0.26.0", "mixed", "0", "refused"),
        ("0.26.0", "mixed", None, "honoured"),  # 0.26 forces V2 for mixed drafters when the variable is unset
        ("0.29.0", "mixed", None, "honoured"),
        ("0.29.0", "mixed", "0", "refused"),
        ("0.20.1", "none", None, "not-applicable"),
        ("0.21.0", "none", "1", "refused"),  # its V2 runner has no 'dflash'
    ],
)
def test_table_outcome(version, mix, v2, outcome):
    from dflash_doctor.engines.outcome import Deployment, decide
    from dflash_doctor.engines.table import from_row

    env = {} if v2 is None else {"VLLM_USE_V2_MODEL_RUNNER": v2}
    o = decide(
        from_row(lookup("vllm", version)),
        Deployment(drafter_architectures=("DFlashDraftModel",), swa_mix=mix, env=env, env_known=True),
    )
    assert o.value == outcome, o.sentence


def test_sglang_has_dflash_from_0_5_11_and_sliding_windows_from_0_5_14():
    assert lookup("sglang", "0.5.10").dflash is False
    assert (lookup("sglang", "0.5.11").dflash, lookup("sglang", "0.5.11").drafter_swa) == (True, "ignored")
    row = lookup("sglang", "0.5.23")
    assert (row.dflash, row.layer_map, row.drafter_swa) == (True, "plus-one", "honoured") and "0.5.23" in row.verified
    assert lookup("sglang", "0.5.15").drafter_swa == "honoured"


def test_a_bad_row_is_one_line_naming_its_place():
    from dflash_doctor import schema

    doc = {"row": [{"engine": "vllm", "min": "0.20.0", "max": "0.21.0", "dflash": True, "layer_map": "sideways"}]}
    with pytest.raises(schema.SchemaError, match=r"^engine_support.toml: row\[0\].layer_map: invalid enum value"):
        schema.convert(doc, schema.EngineSupportTable, "engine_support.toml")
