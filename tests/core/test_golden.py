"""Golden files: the JSON and Markdown renderings of fixed inputs. Regenerate deliberately with
UPDATE_GOLDEN=1 and review the diff: a change here is a change users see."""

import json
import os
import re

import pytest

from dflash_doctor.collect.inputs import FileInputs, gather_files
from dflash_doctor.render import Format, render
from dflash_doctor.services.doctor import build_report
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
CASES = {
    "seed": FileInputs(logs=["fixtures/seed/vllm-0.20.1.log"]),
    "eagle3-geometric": FileInputs(logs=["fixtures/golden/eagle3-geometric.log"]),
}
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00")


def _normalise(text: str) -> str:
    from dflash_doctor import __version__

    return _TIME.sub("<time>", text).replace(__version__, "<version>")


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("fmt,ext", [(Format.JSON, "json"), (Format.MARKDOWN, "md")])
def test_rendering_matches_golden(case, fmt, ext, monkeypatch):
    monkeypatch.chdir(ROOT)
    report, _ = build_report(gather_files(CASES[case]))
    got = _normalise(render(report, fmt))
    path = GOLDEN / f"{case}.{ext}"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1"
    assert got == path.read_text(encoding="utf-8")
    if fmt == Format.JSON:
        json.loads(got)
