"""A patched install: the release table says vLLM 0.20.1 maps ids raw and ignores sliding windows, but the
installed source read on the host says +1 and honoured. The source must decide, with no contradicting
observation from the table left in the ranking."""

from dflash_doctor.collect.files import FileInputs, gather_files
from dflash_doctor.doctor import build_report
from dflash_doctor.evidence import Kind, Source
from dflash_doctor.payloads import EngineSourceFacts
from dflash_doctor.rank.scoring import observations_of
from tests.conftest import FIXTURES


def _report(source_value):
    ev = gather_files(FileInputs(logs=[str(FIXTURES / "seed" / "vllm-0.20.1.log")],
                                 drafter=str(FIXTURES / "models" / "Qwen3.6-27B-DFlash"), engine="vllm==0.20.1"))
    if source_value is not None:
        ev.add(Kind.ENGINE_SOURCE, "patched vllm source", Source("host", "/opt/vllm"), source_value)
    report, _ = build_report(ev)
    return report, {o.name for o in observations_of(list(report.findings))}


def test_release_table_decides_without_source():
    _, names = _report(None)
    assert {"engine-layer-map:raw", "engine-swa:ignored"} <= names


def test_installed_source_outranks_the_release_table():
    report, names = _report(EngineSourceFacts(engine="vllm", version="0.20.1", location="/opt/vllm",
                                              dflash_present=True, layer_map="plus-one", swa="honoured"))
    assert "engine-layer-map:raw" not in names and "engine-swa:ignored" not in names
    assert {"engine-layer-map:plus-one", "engine-swa:honoured"} <= names
    top = [c.id for c in report.causes[:2]]
    assert "swa-ignored" not in top and "layer-offset" not in top
