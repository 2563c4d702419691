"""inspect-model speed: median wall time of the seed pair (config + card + weight headers + checks),
in-process and as a CLI subprocess. Prints its figures.

Run: PYTHONPATH=. python benchmarks/inspect_model.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _bytecode import ensure_compiled

ROOT = Path(__file__).resolve().parent.parent
M = ROOT / "fixtures" / "models"


def main(n: int = 7) -> None:
    ensure_compiled()  # time the package as an install runs it (benchmarks/_bytecode.py)
    sys.path.insert(0, str(ROOT))
    from dflash_doctor.services.inspection import inspect

    args = (str(M / "Qwen3.6-27B-DFlash"), str(M / "Qwen3.6-27B"), "vllm==0.20.1", 15)
    inspect(*args)  # warm imports
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        inspect(*args)
        times.append(time.perf_counter() - t0)
    print(f"inspect() seed pair, in-process: median {statistics.median(times) * 1000:.1f} ms over {n} runs")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    cli = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "dflash_doctor",
                "inspect-model",
                args[0],
                "--target",
                args[1],
                "--engine",
                args[2],
                "--format",
                "json",
            ],
            env=env,
            capture_output=True,
            check=False,
        )
        cli.append(time.perf_counter() - t0)
    print(f"dflash-doctor inspect-model seed pair, CLI: median {statistics.median(cli):.2f} s over 3 runs")


if __name__ == "__main__":
    main()
