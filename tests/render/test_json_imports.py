"""`--format json` writes the report without the terminal layout: rich (~15 ms of imports) is not loaded."""

import json
import subprocess
import sys

from tests.conftest import FIXTURES, ROOT

PROBE = """
import atexit, json, runpy, sys
sys.argv = ["dflash-doctor", "logs", LOG, "--format", "json"]
WATCH = ("rich", "rich.", "dflash_doctor.render.")
atexit.register(
    lambda: sys.stderr.write("\\nLOADED=" + json.dumps(sorted(m for m in sys.modules if m.startswith(WATCH))) + "\\n")
)
try:
    runpy.run_module("dflash_doctor", run_name="__main__")
except SystemExit:
    pass
"""


def test_logs_json_loads_no_terminal_renderer():
    code = PROBE.replace("LOG", repr(str(FIXTURES / "seed/vllm-0.20.1.log")))
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert json.loads(proc.stdout)["schema"].startswith("dflash-doctor/report@")
    loaded = json.loads(proc.stderr.rsplit("LOADED=", 1)[1])
    assert "rich" not in loaded and "dflash_doctor.render.terminal" not in loaded, loaded
    assert "dflash_doctor.render.report_json" in loaded
