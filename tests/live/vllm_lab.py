"""vLLM (CPU build) deployments for the live suite: start `vllm serve` on the tiny models, drive requests.

srv = start_vllm(engine_py, models, drafter="noisy", k=4, log_dir=tmp)   # ready, or exited (read srv.log)
drive(srv, PROMPTS_PLAIN, n=12, temperature=0)
srv.stop()
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .lab import Server, free_port, http_get, http_post_json

STATS_INTERVAL_S = 2
START_TIMEOUT_S = 420.0

# Prompts whose continuations repeat nothing of the prompt (nothing for an n-gram lookup to find) and
# prompts that do repeat themselves.
PROMPTS_PLAIN = [
    "river mountain seven",
    "window green think hundred",
    "chair blue walk",
    "cache server read four",
    "token answer eight city",
    "verify step nine",
]
PROMPTS_REPEAT = [
    "one two three one two three one two three one two three one two",
    "red blue red blue red blue red blue red blue red",
    "the model the model the model the model the",
]


def engine_env(stats_interval: int = STATS_INTERVAL_S, extra: dict | None = None) -> dict:
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("PYTHON", "VIRTUAL_ENV")):
            env.pop(k)
    env |= {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "VLLM_LOG_STATS_INTERVAL": str(stats_interval),
        "OMP_NUM_THREADS": "1",
    }
    return env | (extra or {})


def vllm_argv(
    engine_py: Path, models: Path, spec: dict | None, port: int, extra: list[str] = (), head: list[str] | None = None
) -> list[str]:
    """`vllm serve TARGET …`, or `head` and then the options (`head` ends with the target's option)."""
    argv = [
        *(head or [str(engine_py.parent / "vllm"), "serve"]),
        str(models / "target"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--enforce-eager",
        "--max-model-len",
        "512",
        "--max-num-seqs",
        "4",
        "--served-model-name",
        "tiny",
    ]
    if spec is not None:
        argv += ["--speculative-config", json.dumps(spec, separators=(",", ":"))]
    return argv + list(extra)


def start_vllm(
    engine_py: Path,
    models: Path,
    log_dir: Path,
    *,
    spec: dict | None,
    name: str,
    stats_interval: int = STATS_INTERVAL_S,
    extra: list[str] = (),
    timeout: float = START_TIMEOUT_S,
    head: list[str] | None = None,
) -> Server:
    port = free_port()
    argv = vllm_argv(engine_py, models, spec, port, extra, head)

    def ready() -> bool:
        return http_get(f"http://127.0.0.1:{port}/health", timeout=2) is not None

    def dead(text: str) -> bool:
        # the API server stays up a moment after its engine failed to start
        return "Engine core initialization failed" in text or "Traceback (most recent call last)" in text[-20000:]

    srv = Server.start(
        argv,
        port=port,
        log=log_dir / f"{name}.log",
        env=engine_env(stats_interval),
        ready=ready,
        dead=dead,
        timeout=timeout,
        cwd=log_dir,
    )
    srv.notes["spec"] = spec
    return srv


def is_up(srv: Server) -> bool:
    return srv.proc.poll() is None and http_get(f"{srv.base}/health", timeout=2) is not None


def drive(srv: Server, prompts: list[str], n: int, temperature: float | None = 0.0, max_tokens: int = 48) -> int:
    """Send `n` completions (prompts cycled); temperature None leaves it to the server's default. Returns the
    number of completion tokens."""
    total = 0
    for i in range(n):
        body: dict = {"model": "tiny", "prompt": prompts[i % len(prompts)], "max_tokens": max_tokens}
        body["ignore_eos"] = True
        if temperature is not None:
            body["temperature"] = temperature
        out = http_post_json(f"{srv.base}/v1/completions", body, timeout=180)
        total += int(out.get("usage", {}).get("completion_tokens", 0))
    return total


def wait_stats_line(srv: Server, after: int, timeout: float = 30.0) -> bool:
    """Wait for a SpecDecoding metrics line past byte offset `after` of the log."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if "SpecDecoding metrics" in srv.log_text()[after:]:
            return True
        time.sleep(0.5)
    return False


def scrape(srv: Server) -> str:
    return http_get(f"{srv.base}/metrics", timeout=10) or ""


def counter(scrape_text: str, name: str) -> float:
    total = 0.0
    for line in scrape_text.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            head = line.split(" ")[0]
            if head == name or head.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
    return total
