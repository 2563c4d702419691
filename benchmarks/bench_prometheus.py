"""`fleet` over a Prometheus holding 200 engines' 6 h history: wall time and HTTP queries.

Writes the history (vLLM V1 counters of 200 engines on two models, 4 broken, 5 restarted half-way,
one sample a minute) as OpenMetrics, turns it into TSDB blocks with `promtool tsdb create-blocks-from
openmetrics`, starts Prometheus on them (tests/prometheus/promserver.py), then times
  dflash-doctor fleet --prometheus URL --since 6h --step 5m --format json
(the whole command, CLI start included; median of --runs) and reads the queries it made from its
JSON. Targets (issue 18): ≤ 3 s wall, ≤ 10 queries whatever the number of engines.

Run: PYTHONPATH=. python benchmarks/bench_prometheus.py [--engines 200] [--hours 6] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _bytecode import ensure_compiled  # noqa: E402

from tests.prometheus.promserver import PROMTOOL_BIN, prometheus_available, start_prometheus  # noqa: E402
from tests.prometheus.tsdbgen import create_blocks, plan, write_openmetrics  # noqa: E402


def main() -> int:
    ensure_compiled()  # time the package as an install runs it (benchmarks/_bytecode.py)
    ap = argparse.ArgumentParser()
    ap.add_argument("--engines", type=int, default=200)
    ap.add_argument("--hours", type=float, default=6.0)
    ap.add_argument("--interval", type=int, default=60, help="seconds between samples")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the TSDB directory")
    args = ap.parse_args()
    reason = prometheus_available()
    if reason:
        print(f"skipped: {reason}")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="bench-prom-"))
    prom = None
    try:
        end = int(time.time()) // 60 * 60
        start = end - int(args.hours * 3600) - 600
        engines = plan(args.engines)
        t0 = time.perf_counter()
        samples = write_openmetrics(tmp / "fleet.om", engines, start, end, args.interval)
        t1 = time.perf_counter()
        create_blocks(PROMTOOL_BIN, tmp / "fleet.om", tmp / "data")
        t2 = time.perf_counter()
        (tmp / "fleet.om").unlink()
        prom = start_prometheus(tmp, storage=tmp / "data")
        print(
            f"history: {args.engines} engines, {samples:,} samples over {args.hours:g} h "
            f"(written in {t1 - t0:.1f} s, promtool blocks in {t2 - t1:.1f} s)"
        )
        exe = shutil.which("dflash-doctor", path=os.path.dirname(sys.executable))
        cmd = ([exe] if exe else [sys.executable, "-m", "dflash_doctor"]) + [
            "fleet",
            "--prometheus",
            prom.url,
            "--since",
            f"{args.hours:g}h",
            "--step",
            "5m",
            "--until",
            str(end),
            "--format",
            "json",
        ]
        walls, doc = [], None
        for i in range(args.runs + 1):  # the first run warms Prometheus' caches and the page cache
            t = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            wall = time.perf_counter() - t
            if proc.returncode not in (0, 1):
                print(proc.stderr)
                return 1
            doc = json.loads(proc.stdout)
            if i:
                walls.append(wall)
        assert doc is not None
        broken = {e.instance for e in engines if e.broken}
        flagged = {e["labels"]["instance"] for e in doc["engines"] if e["outlier"]}
        restarted = sum(1 for e in doc["engines"] if e["restarts"])
        print(f"command: {' '.join(cmd[:1] + ['fleet'] + cmd[cmd.index('fleet') + 1 :])}")
        print(
            f"engines read: {len(doc['engines'])}; outliers flagged: {len(flagged)} "
            f"(all {len(broken)} broken: {broken <= flagged}; healthy flagged: {len(flagged - broken)}); "
            f"engines with a restart seen: {restarted}"
        )
        print(
            f"wall: median {statistics.median(walls):.2f} s over {len(walls)} runs "
            f"(min {min(walls):.2f}, max {max(walls):.2f}); target ≤ 3 s"
        )
        print(f"HTTP queries: {doc['queries']}; target ≤ 10 whatever the number of engines")
        return 0
    finally:
        if prom is not None:
            prom.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}")


if __name__ == "__main__":
    sys.exit(main())
