"""The README's demo excerpt is a real run of `make demo`'s command (at 100 columns): every line it shows,
in order, is a line of today's output ("…" marks what it leaves out)."""

import re

from tests.conftest import ROOT, run_cli


def test_the_readme_demo_excerpt_matches_a_real_run():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"```\n\$ dflash-doctor check bundle fixtures/hosts/seed +# at 100 columns\n(.*?)```", readme, re.S)
    assert m, "the demo excerpt is gone from the README"
    shown = [x for x in m.group(1).splitlines() if x.strip() != "…"]
    real = run_cli(
        "check", "bundle", str(ROOT / "fixtures" / "hosts" / "seed"), env={"COLUMNS": "100"}
    ).stdout.splitlines()
    at = 0
    for line in shown:
        assert line in real[at:], f"README line not in a real run (after line {at}): {line!r}"
        at = real.index(line, at) + 1
    assert shown == real  # the one-screen report is shown whole
