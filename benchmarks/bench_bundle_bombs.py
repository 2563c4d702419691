"""Bundle bombs: what `check bundle` costs on archives built to exhaust memory or time (issue 19, item 7).

Builds each bomb in a temporary directory, runs `python -m dflash_doctor check bundle BOMB` once per
bomb, and prints the wall time, the child's peak RSS and its one-line answer:

* members   — a ~4 MB .tar.gz of 1.5 M empty members (tarfile keeps a TarInfo per member)
* long-name — a ~1 MB .tar.gz whose GNU long-name header claims 1 GiB (tarfile reads it whole)
* json      — a directory bundle whose 48 MB calls.jsonl is one list of 16 M empty lists

    python benchmarks/bench_bundle_bombs.py [--only members,long-name,json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time

from _bytecode import ensure_compiled


def members_bomb(path: str, n: int = 1_500_000) -> None:
    info = tarfile.TarInfo("x/empty")
    info.mtime = 0
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    with gzip.open(path, "wb", compresslevel=6) as gz:
        for _ in range(n):
            gz.write(header)
        gz.write(b"\0" * 1024)


def long_name_bomb(path: str, claimed: int = 1 << 30) -> None:
    long_name = tarfile.TarInfo("././@LongLink")
    long_name.type, long_name.size, long_name.mtime = tarfile.GNUTYPE_LONGNAME, claimed, 0
    member = tarfile.TarInfo("x")
    member.mtime = 0
    zeros = b"\0" * (1 << 20)
    with gzip.open(path, "wb", compresslevel=9) as gz:
        gz.write(long_name.tobuf(format=tarfile.USTAR_FORMAT))
        for _ in range(claimed >> 20):
            gz.write(zeros)
        gz.write(member.tobuf(format=tarfile.USTAR_FORMAT))  # the member the long name belongs to
        gz.write(b"\0" * 1024)


def json_bomb(path: str, n: int = 16_000_000) -> None:
    os.makedirs(path)
    with open(os.path.join(path, "manifest.json"), "w") as fh:
        json.dump({"format": "dflash-doctor/bundle@1", "host": "bomb"}, fh)
    with open(os.path.join(path, "calls.jsonl"), "w") as fh:
        fh.write('{"op":"list_dir","path":"/x","names":[' + ",".join(["[]"] * n) + "]}\n")


BOMBS = {
    "members": ("members.tar.gz", members_bomb),
    "long-name": ("long-name.tar.gz", long_name_bomb),
    "json": ("json-bundle", json_bomb),
}


def measure(path: str) -> tuple[float, float, str]:
    """(wall s, peak RSS MiB of the child, last line of its stderr) of one `check bundle` run."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
        "(r.stderr.strip().splitlines() or [''])[-1][:160], sep='\\t')"
    )
    out = (
        subprocess.run(
            [sys.executable, "-c", code, sys.executable, "-m", "dflash_doctor", "check", "bundle", path],
            capture_output=True,
            text=True,
            env=env,
        )
        .stdout.strip()
        .split("\t")
    )
    return float(out[0]), int(out[1]) / 1024, out[2] if len(out) > 2 else ""


def main() -> None:
    ensure_compiled()  # time the package as an install runs it (benchmarks/_bytecode.py)
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(BOMBS))
    ap.add_argument("--keep", help="build the bombs in this directory and leave them there")
    args = ap.parse_args()
    d = args.keep or tempfile.mkdtemp(prefix="bombs-")
    os.makedirs(d, exist_ok=True)
    for name in args.only.split(","):
        fname, build = BOMBS[name]
        path = os.path.join(d, fname)
        if not os.path.exists(path):
            t0 = time.perf_counter()
            build(path)
            size = (
                os.path.getsize(path)
                if os.path.isfile(path)
                else sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
            )
            print(f"built {name}: {size / 1e6:.1f} MB in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        wall, rss, said = measure(path)
        print(f"{name:<10} {wall:6.2f} s  peak RSS {rss:7.0f} MiB  {said}")
    if not args.keep:
        import shutil

        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
