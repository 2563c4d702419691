"""`check host` over SSH against plain `ssh host grep -F … | wc -l`, on a 1 GiB log.

Starts a loopback sshd (tests/sshd.py) and a fake seed deployment whose log is 1 GiB in /tmp, then,
warm and interleaved (median of --runs):
  A  dflash-doctor check host ALIAS --pid PID --format json      (the whole diagnosis, CLI included)
  B  ssh -F CFG ALIAS grep -F 'SpecDecoding metrics' LOG | wc -l   (what an operator types)
and prints the A/B wall-time ratio (target ≤ 1.5) and the bytes `check host` received (target ≤ 1 MiB).
Then a fleet: 10 ssh_config aliases of the same loopback server vs 1 (target ≤ 2×), with the small
default log so that per-host latency, not the shared CPU, is what is measured — all ten "hosts"
share this machine's cores, which no real fleet does; the 1 GiB fleet figure is printed too. So that
the fleet figure can be read, it also prints the CPU the whole machine spent on 1 and on 10 hosts (the
floor that sharing puts under the 10-host wall time) and the same ratio for plain `ssh HOST true`.

Run: PYTHONPATH=. python benchmarks/bench_ssh.py [--runs 5] [--size-gib 1] [--keep]
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

from tests.hosts.fakedeploy import build, scenarios, start_server, stop_server, write_big_log  # noqa: E402
from tests.sshd import sshd_available, start_sshd  # noqa: E402


def machine_cpu(argv, env=None) -> float:
    """CPU seconds the whole machine spent (all processes: the client, sshd and what the hosts run)
    while argv ran, from /proc/stat; nan where there is no /proc/stat."""

    def busy() -> float:
        with open("/proc/stat") as fh:
            v = [int(x) for x in fh.readline().split()[1:]]
        return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait

    try:
        c0 = busy()
    except OSError:
        return float("nan")
    subprocess.run(argv, capture_output=True, env=env)
    return busy() - c0


def timed(argv, env=None) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, env=env)
    return time.perf_counter() - t, res


def main() -> int:
    ensure_compiled()  # time the package as an install runs it (benchmarks/_bytecode.py)
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size-gib", type=float, default=1.0)
    ap.add_argument("--keep", action="store_true", help="keep /tmp files")
    a = ap.parse_args()
    reason = sshd_available()
    if reason:
        print(f"skipped: {reason}")
        return 0
    work = Path(tempfile.mkdtemp(prefix="dflash-bench-ssh-", dir="/tmp"))
    sshd = dep = None
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    cli = [sys.executable, "-m", "dflash_doctor"]
    try:
        sshd = start_sshd(work)
        dep = build(work / "deploy", scenarios()["seed"])
        big = dep.log  # the server's own stdout log: found by discovery, or named with --log
        t = time.perf_counter()
        small = work / "small.log"  # the deployment's ordinary 424 KiB log, kept for the fleet latency figure
        big.rename(small)
        write_big_log(big, scenarios()["seed"], int(a.size_gib * (1 << 30)))
        print(f"log: {big} {big.stat().st_size / (1 << 30):.2f} GiB written in {time.perf_counter() - t:.1f} s")
        start_server(dep)
        cfg = str(sshd.ssh_config)
        check = [*cli, "check", "host", "testhost", "--ssh-config", cfg, "--pid", str(dep.proc.pid), "--format", "json"]
        check_log = [*check, "--log", str(big)]
        grep = ["sh", "-c", 'ssh -F "$1" testhost grep -F "\'SpecDecoding metrics\'" "$2" | wc -l', "sh", cfg, str(big)]
        # warm: page cache, ssh, python imports
        timed(grep)
        _, res = timed(check, env)
        doc = json.loads(res.stdout)
        host = next(e["value"] for e in doc["evidence"] if e["kind"] == "host")
        ta, tl, tb = [], [], []
        for _ in range(a.runs):
            d, r = timed(check, env)
            assert r.returncode in (0, 1), r.stderr
            ta.append(d)
            d, r = timed(check_log, env)
            assert r.returncode in (0, 1), r.stderr
            tl.append(d)
            d, r = timed(grep)
            tb.append(d)
            count = int(r.stdout.strip() or 0)
        ma, ml, mb = statistics.median(ta), statistics.median(tl), statistics.median(tb)
        runs = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
        print(f"A  check host, log discovered via /proc (CLI, full diagnosis): median {ma:.2f} s  runs {runs(ta)}")
        print(f"A' check host --log LOG (CLI, full diagnosis):               median {ml:.2f} s  runs {runs(tl)}")
        print(
            f"B  ssh host grep -F 'SpecDecoding metrics' LOG | wc -l ({count} lines): "
            f"median {mb:.2f} s  runs {runs(tb)}"
        )
        print(f"ratio A/B: {ma / mb:.2f}, A'/B: {ml / mb:.2f}  (target <= 1.5)")
        print(
            f"bytes received by check host: {host['bytes_received']} ({host['bytes_received'] / (1 << 20):.3f} MiB; "
            f"target <= 1 MiB), sent {host['bytes_sent']}, commands {host['commands']}, "
            f"log {host.get('log_bytes')} bytes on the host, tau {doc['acceptance']['mean_acceptance_length']:.2f}; "
            f"collection itself {host['seconds']:.2f} s (the rest of A is Python start-up, checks and rendering)"
        )

        # fleet: 10 aliases of the same server vs 1
        aliases = [sshd.add_alias(f"bench-{i:02d}") for i in range(10)]
        for label, extra in (("424 KiB log", ["--log", str(small)]), (f"{a.size_gib:g} GiB log", [])):
            one = [
                *cli,
                "check",
                "host",
                aliases[0],
                "--ssh-config",
                cfg,
                "--pid",
                str(dep.proc.pid),
                "--format",
                "json",
                *extra,
            ]
            ten = [
                *cli,
                "check",
                "host",
                *aliases,
                "--ssh-config",
                cfg,
                "--pid",
                str(dep.proc.pid),
                "--parallel",
                "10",
                "--format",
                "json",
                *extra,
            ]
            t1 = statistics.median(timed(one, env)[0] for _ in range(3))
            t10s = []
            for _ in range(3 if extra else 1):  # the small log (extra = --log) gives the target figure: median of 3
                d, r = timed(ten, env)
                fleet = json.loads(r.stdout)
                assert len(fleet["hosts"]) == 10 and all(h["status"] == "problem" for h in fleet["hosts"]), r.stderr
                t10s.append(d)
            t10 = statistics.median(t10s)
            serial = timed([*ten[: ten.index("--parallel") + 1], "1", *ten[ten.index("--parallel") + 2 :]], env)[0]
            print(
                f"fleet ({label}): 1 host {t1:.2f} s, 10 hosts {t10:.2f} s, ratio {t10 / t1:.2f}  (target <= 2.0); "
                f"10 hosts one at a time (--parallel 1) {serial:.2f} s"
            )
            if extra:
                c1 = machine_cpu(one, env)
                c10 = machine_cpu(ten, env)
                print(
                    f"  CPU of the whole machine (client, sshd and the hosts' commands): 1 host {c1:.2f} s, "
                    f"10 hosts {c10:.2f} s; on {os.cpu_count()} cores 10 hosts need >= {c10 / os.cpu_count():.2f} s "
                    f"of wall time, {c10 / os.cpu_count() / t1:.2f}x one host, before any latency"
                )
        # what plain OpenSSH costs here: ten loopback logins at once against one
        true1 = statistics.median(timed(["ssh", "-F", cfg, aliases[0], "true"])[0] for _ in range(3))
        true10 = statistics.median(
            timed(["sh", "-c", " & ".join(f"ssh -F '{cfg}' {x} true" for x in aliases) + " & wait"])[0]
            for _ in range(3)
        )
        print(
            f"baseline: `ssh HOST true` 1 host {true1:.2f} s, 10 hosts at once {true10:.2f} s, ratio "
            f"{true10 / true1:.2f} (the loopback hosts share this machine's cores)"
        )
        return 0
    finally:
        if dep is not None:
            stop_server(dep)
        if sshd is not None:
            sshd.stop()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
