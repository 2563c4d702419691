"""A patched install: the release table says vLLM 0.20.1 maps ids raw and ignores sliding windows, but the
installed source read on the host says otherwise. The source must decide, with no contradicting
observation from the table left in the ranking, and the disagreement is shown with both."""

from dflash_doctor.collect.inputs import FileInputs, gather_files
from dflash_doctor.engines import DirectoryTree, analyse
from dflash_doctor.evidence import Source
from dflash_doctor.rank.scoring import observations_of
from dflash_doctor.services.doctor import build_report
from tests.conftest import FIXTURES
from tests.engines.synth import build_vllm


def _report(analysis):
    ev = gather_files(
        FileInputs(
            logs=[str(FIXTURES / "seed" / "vllm-0.20.1.log")],
            drafter=str(FIXTURES / "models" / "Qwen3.6-27B-DFlash"),
            engine="vllm==0.20.1",
        )
    )
    if analysis is not None:
        ev.add("patched vllm source", Source("host", "/opt/vllm"), analysis)
    report, _ = build_report(ev)
    return report, {o.name for o in observations_of(list(report.findings))}


def test_release_table_decides_without_source():
    _, names = _report(None)
    assert {"engine-layer-map:raw", "engine-swa:ignored"} <= names


def test_installed_source_outranks_the_release_table(tmp_path):
    # 0.20.1 with the +1 patched in by hand, and a drafter module that honours windows per layer
    root = build_vllm(tmp_path, "0.20.1", runner_map="patched-line", swa="honoured")
    report, names = _report(analyse(DirectoryTree(root), target_architectures=("Qwen3_5ForConditionalGeneration",)))
    assert "engine-layer-map:raw" not in names and "engine-swa:ignored" not in names
    assert {"engine-layer-map:plus-one", "engine-swa:honoured"} <= names
    src = next(f for f in report.findings if f.check_id == "engine-source-layer-map")
    assert any("the engine-support table" in d and "'raw'" in d and "'plus-one'" in d for d in src.details)
    table = next(f for f in report.findings if f.check_id == "engine-layer-map")
    assert "disagrees" in table.message and not table.observations
    top = [c.id for c in report.causes[:2]]
    assert "swa-ignored" not in top and "layer-offset" not in top
