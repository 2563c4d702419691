"""Start-up speed: median wall time of `dflash-doctor --version` against `python -c "import typer, rich"`.

Runs the two commands interleaved (A B A B …) so machine drift hits both alike; prints each median and
the ratio of medians. Target (issue 2): ratio <= 1.5.

    python benchmarks/bench_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

from _bytecode import ensure_compiled


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    exe = shutil.which("dflash-doctor", path=os.path.dirname(sys.executable)) or shutil.which("dflash-doctor")
    tool = [exe, "--version"] if exe else [sys.executable, "-m", "dflash_doctor", "--version"]
    base = [sys.executable, "-c", "import typer, rich"]
    ensure_compiled()  # as an install runs: bytecode written (benchmarks/_bytecode.py)
    for cmd in (tool, base):  # warm the page cache
        wall(cmd)
    a, b = [], []
    for _ in range(max(10, args.runs)):
        a.append(wall(tool))
        b.append(wall(base))
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"command A: {' '.join(tool)}")
    print(f"command B: {' '.join(base)}")
    print(f"runs: {len(a)} each, interleaved")
    print(f"median A: {ma * 1000:.1f} ms (min {min(a) * 1000:.1f}, max {max(a) * 1000:.1f})")
    print(f"median B: {mb * 1000:.1f} ms (min {min(b) * 1000:.1f}, max {max(b) * 1000:.1f})")
    print(f"ratio A/B (medians): {ma / mb:.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
