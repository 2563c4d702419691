"""Golden terminal reports: the seed bundle, a layer-offset bundle and an EAGLE-3 log, each at 80 and 200
columns and piped (no wrapping), in both views: the one screen (`*.term-*`, the default) and the full
report (`*.full-*`, `-v`). Regenerate deliberately with UPDATE_GOLDEN=1 and review the diff: a change
here is a change users see."""

import os

import pytest

from dflash_doctor.render import Format, Style, render
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
WIDTHS = {"80": 80, "200": 200, "piped": None}


def _report(case: str):
    from dflash_doctor.collect.inputs import FileInputs, gather_files
    from dflash_doctor.services.doctor import build_report
    from dflash_doctor.services.hostcheck import HostCheck, check_bundle

    if case == "eagle3-geometric":
        return build_report(gather_files(FileInputs(logs=["fixtures/golden/eagle3-geometric.log"])))[0]
    return check_bundle(f"fixtures/hosts/{case}", HostCheck()).report


@pytest.mark.parametrize("view", ["term", "full"])
@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize("case", ["seed", "layer-offset-pre-40727", "eagle3-geometric"])
def test_terminal_report_matches_golden(case, width, view, monkeypatch):
    monkeypatch.chdir(ROOT)
    got = render(_report(case), Format.TERMINAL, style=Style(width=WIDTHS[width], screen=view == "term"))
    path = GOLDEN / f"{case}.{view}-{width}.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1"
    want = path.read_text(encoding="utf-8")
    if got != want:
        import difflib

        pytest.fail(
            "terminal report differs from "
            + path.name
            + ":\n"
            + "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "now"))
        )
    lines = got.splitlines()
    assert not [x for x in lines if x != x.rstrip()], "a line ends in spaces"
    if WIDTHS[width]:  # only a command, never cut, may stand past the edge, alone on its line
        assert all(len(x) <= WIDTHS[width] or x.strip().lstrip("(`").startswith("dflash-doctor ") for x in lines)
