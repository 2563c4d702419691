"""Log-scan speed: `dflash-doctor logs FILE --format json` against `grep -F -c 'SpecDecoding metrics' FILE`.

Writes a 1 GiB synthetic but realistic vLLM 0.20 log outside the repository, in one of two profiles:

  server  shaped like a real vLLM 0.20 server log: startup lines, then per 10 s stats interval 10-13
          requests' INFO lines as vLLM prints them (`Received request …: params: SamplingParams(…all its
          fields…), lora_request: None.`, `Added request`, the HTTP access line, `Finished request`:
          ~48 ordinary lines, ~1.2 KB a request), the engine's stats line and one SpecDecoding metrics
          line (~70 000 metrics lines a GiB);
  dense   metrics-dense (the profile this benchmark had before): the same structure with short request
          lines, ~164 000 metrics lines a GiB.

It warms both commands, then times them interleaved (default 5 runs each) and prints the median wall
times, their ratio and the peak RSS of the dflash-doctor run (its largest process, scan workers and
grep included). Targets (issue 26): ratio <= 2.0 for both profiles, peak RSS <= 100 MiB.

Run: PYTHONPATH=. python benchmarks/bench_logs.py [--profile server|dense|both] [--size-mib 1024] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _bytecode import ensure_compiled

ROOT = Path(__file__).resolve().parent.parent


def write_log(path: Path, size: int, seed: int = 1, profile: str = "server") -> int:
    """Write about `size` bytes; return the number of metrics lines written."""
    rng = random.Random(seed)
    api, core = "(APIServer pid=1843)", "(EngineCore_DP0 pid=2011)"
    head = [
        f"{api} INFO 05-14 09:11:52 [utils.py:253]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.20.1",
        f"{api} INFO 05-14 09:11:52 [utils.py:253]   █▄█▀ █     █     █     █  model   Qwen/Qwen3.6-27B",
        f"{api} INFO 05-14 09:11:52 [utils.py:189] non-default args: {{'model': 'Qwen/Qwen3.6-27B', "
        "'speculative_config': {'method': 'dflash', 'model': 'z-lab/Qwen3.6-27B-DFlash', "
        "'num_speculative_tokens': 15}}",
        f"{api} INFO 05-14 09:11:55 [model.py:547] Resolved architecture: DFlashDraftModel",
        f"{core} INFO 05-14 09:11:57 [core.py:93] Initializing a V1 LLM engine (v0.20.1) with config: "
        "model='Qwen/Qwen3.6-27B', speculative_config=SpeculativeConfig(method='dflash', "
        "model='z-lab/Qwen3.6-27B-DFlash', num_spec_tokens=15)",
    ]
    metrics = 0
    written = 0
    sec = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(head) + "\n")
        while written < size:
            block = []
            for _ in range(200):  # 200 intervals per block, ~50 lines each
                sec += 10
                ts = f"05-{14 + sec // 86400 % 14:02d} {sec // 3600 % 24:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
                for _ in range(rng.randrange(10, 14)):
                    rid = f"chatcmpl-{rng.getrandbits(64):016x}"
                    ip = f"10.0.{rng.randrange(256)}.{rng.randrange(256)}:{rng.randrange(30000, 60000)}"
                    if profile == "server":  # vllm/entrypoints/logger.py and SamplingParams.__repr__ (0.20)
                        params = (
                            f"SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, "
                            f"repetition_penalty=1.0, temperature=0.7, top_p=0.8, top_k=20, min_p=0.0, "
                            f"seed=None, stop=[], stop_token_ids=[151643, 151645], bad_words=[], "
                            f"thinking_token_budget=None, include_stop_str_in_output=False, ignore_eos=False, "
                            f"max_tokens={rng.randrange(256, 4096)}, min_tokens=0, logprobs=None, "
                            f"prompt_logprobs=None, skip_special_tokens=True, spaces_between_special_tokens=True, "
                            f"structured_outputs=None, extra_args=None)"
                        )
                        block.append(
                            f"{api} INFO {ts} [logger.py:64] Received request {rid}: params: {params}, "
                            f"lora_request: None."
                        )
                    else:
                        block.append(
                            f"{api} INFO {ts} [logger.py:41] Received request {rid}: params: "
                            f"SamplingParams(n=1, temperature=0.7, top_p=0.8, max_tokens={rng.randrange(256, 4096)}), "
                            f"prompt_token_ids: None, lora_request: None."
                        )
                    block.append(f"{api} INFO {ts} [async_llm.py:270] Added request {rid}.")
                    block.append(f'{api} INFO:     {ip} - "POST /v1/chat/completions HTTP/1.1" 200 OK')
                    block.append(f"{api} INFO {ts} [logger.py:77] Finished request {rid}.")
                run = rng.randrange(1, 32)
                block.append(
                    f"{api} INFO {ts} [loggers.py:123] Engine 000: Avg prompt throughput: "
                    f"{rng.uniform(0, 9000):.1f} tokens/s, Avg generation throughput: {rng.uniform(10, 900):.1f} "
                    f"tokens/s, Running: {run} reqs, Waiting: 0 reqs, GPU KV cache usage: "
                    f"{rng.uniform(0, 90):.1f}%, Prefix cache hit rate: {rng.uniform(0, 80):.1f}%"
                )
                drafts = rng.randrange(200, 3000)
                p1 = int(drafts * rng.uniform(0.14, 0.19))
                p2 = int(drafts * rng.uniform(0.01, 0.025))
                c = [p1, p2] + [0] * 13
                acc, dft = sum(c), drafts * 15
                pp = ", ".join(f"{x / drafts:.3f}" for x in c)
                block.append(
                    f"{api} INFO {ts} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
                    f"{1 + acc / drafts:.2f}, Accepted throughput: {acc / 10:.2f} tokens/s, Drafted throughput: "
                    f"{dft / 10:.2f} tokens/s, Accepted: {acc} tokens, Drafted: {dft} tokens, "
                    f"Per-position acceptance rate: {pp}, Avg Draft acceptance rate: {acc / dft * 100:.1f}%"
                )
                metrics += 1
            text = "\n".join(block) + "\n"
            fh.write(text)
            written += len(text.encode("utf-8"))
    return metrics


def timed(argv: list[str], env: dict) -> tuple[float, int, str, float]:
    """Wall seconds, peak RSS in KiB (via wait4: the child and the workers it waited for), stdout,
    and CPU seconds (user + system) — the CPU figure does not depend on what else the machine runs."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return dt, usage.ru_maxrss, out.decode("utf-8", "replace"), usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--profile", choices=("server", "dense", "both"), default="both")
    ap.add_argument("--dir", default="/tmp/dflash-doctor-bench")
    ap.add_argument("--regen", action="store_true")
    ap.add_argument("--serial", action="store_true", help="one scanning process (DFLASH_DOCTOR_WORKERS=1)")
    a = ap.parse_args()
    for profile in ("server", "dense") if a.profile == "both" else (a.profile,):
        bench(Path(a.dir) / f"vllm-1g-{profile}.log", profile, a)
    return 0


def bench(path: Path, profile: str, a) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    size = a.size_mib << 20
    if a.regen or not path.exists() or path.stat().st_size < size:
        t0 = time.perf_counter()
        n = write_log(path, size, profile=profile)
        print(
            f"wrote {path} ({path.stat().st_size / (1 << 20):.0f} MiB, {n} metrics lines) in "
            f"{time.perf_counter() - t0:.1f} s"
        )
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["LC_ALL"] = env.get("LC_ALL", "C.UTF-8")
    if a.serial:
        env["DFLASH_DOCTOR_WORKERS"] = "1"
    ensure_compiled()  # as an install runs: bytecode written (benchmarks/_bytecode.py)
    print(f"== profile {profile}: {path}")
    print(
        f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        + ("; serial scan" if a.serial else "")
    )
    doctor = [sys.executable, "-m", "dflash_doctor", "logs", str(path), "--format", "json"]
    grep = ["grep", "-F", "-c", "SpecDecoding metrics", str(path)]
    # warm both (page cache, imports)
    _, _, gout, _ = timed(grep, env)
    _, _, dout, _ = timed(doctor, env)
    import json

    rep = json.loads(dout)
    intervals = rep["acceptance"]["intervals"] if rep.get("acceptance") else 0
    print(
        f"grep counts {gout.strip()} metrics lines; dflash-doctor parsed {intervals} intervals, "
        f"τ {rep['acceptance']['mean_acceptance_length'] if rep.get('acceptance') else None}"
    )
    g_times, d_times, rss, g_cpu, d_cpu = [], [], [], [], []
    for _ in range(a.runs):
        g, _, _, gc = timed(grep, env)
        d, r, _, dc = timed(doctor, env)
        g_times.append(g)
        d_times.append(d)
        rss.append(r)
        g_cpu.append(gc)
        d_cpu.append(dc)
    gm, dm = statistics.median(g_times), statistics.median(d_times)
    print(f"grep -F -c      median {gm:.3f} s  runs {', '.join(f'{x:.3f}' for x in g_times)}")
    print(f"dflash-doctor   median {dm:.3f} s  runs {', '.join(f'{x:.3f}' for x in d_times)}")
    print(f"ratio (doctor / grep, medians): {dm / gm:.2f}   target <= 2.0")
    gcm, dcm = statistics.median(g_cpu), statistics.median(d_cpu)
    print(
        f"CPU seconds (user+sys, medians): grep {gcm:.3f}, dflash-doctor {dcm:.3f} (all processes), "
        f"ratio {dcm / gcm:.2f}"
    )
    print(
        f"peak RSS dflash-doctor: {max(rss) / 1024:.0f} MiB   target <= 100 MiB "
        "(largest single process of the run, scan workers and grep included)"
    )
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    sys.exit(main())
