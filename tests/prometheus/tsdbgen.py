"""A fleet's history written straight into a Prometheus TSDB (`promtool tsdb create-blocks-from
openmetrics`), so that hours of data need no wait for scrapes. Used by benchmarks/bench_prometheus.py
and by a small test of the same path.

Engines are vLLM V1 (0.9+) series as scraped: job, instance, model_name, engine labels, counters
whose per-position rates follow the engine's curve. Every `broken_every`-th engine of a model has a
first-token-only curve; every `restart_every`-th restarts half-way (counters back to zero).
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

GOOD = (0.85, 0.72, 0.60, 0.50, 0.41, 0.33, 0.27)
CLIFF = (0.15, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0)
MODELS = ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct")


@dataclass(frozen=True)
class GenEngine:
    instance: str
    model: str
    rates: tuple[float, ...]
    drafts_per_s: float
    restart: bool
    stalled: bool = False  # drafts counter flat (spec decoding stopped) while tokens are generated

    @property
    def broken(self) -> bool:
        return self.rates == CLIFF


def plan(n: int, broken_every: int = 50, restart_every: int = 40, seed: int = 7) -> list[GenEngine]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        model = MODELS[i % len(MODELS)]
        broken = i % broken_every == broken_every - 1
        rates = CLIFF if broken else tuple(max(0.0, r * rng.uniform(0.97, 1.03)) for r in GOOD)
        out.append(
            GenEngine(
                f"10.0.{i // 250}.{i % 250 + 1}:8000",
                model,
                rates,
                rng.uniform(20, 60),
                restart=(i % restart_every == restart_every - 2),
            )
        )
    return out


def write_openmetrics(path: Path, engines: list[GenEngine], start: int, end: int, interval: int) -> int:
    """OpenMetrics text for the engines from start to end (unix seconds); returns the sample count."""
    times = list(range(start, end + 1, interval))
    half = start + (end - start) // 2
    samples = 0
    families = [
        ("vllm:spec_decode_num_drafts", lambda d, acc, pp: d, None),
        ("vllm:spec_decode_num_draft_tokens", lambda d, acc, pp: d * 7, None),
        ("vllm:spec_decode_num_accepted_tokens", lambda d, acc, pp: acc, None),
        ("vllm:generation_tokens", lambda d, acc, pp: d + acc, None),
    ]
    with open(path, "w") as fh:
        for name, value, _ in families:
            fh.write(f"# TYPE {name} counter\n")
            for e in engines:
                lab = f'engine="0",instance="{e.instance}",job="vllm",model_name="{e.model}"'
                lines = []
                for t in times:
                    secs = (t - half) if (e.restart and t >= half) else (t - start)
                    d = int(e.drafts_per_s * secs)
                    pp = [int(r * d) for r in e.rates]
                    v = value(d, sum(pp), pp)
                    if e.stalled:
                        v = 100 * (t - start) if name == "vllm:generation_tokens" else value(1000, 3000, pp)
                    lines.append(f"{name}_total{{{lab}}} {v} {t}\n")
                fh.write("".join(lines))
                samples += len(lines)
        name = "vllm:spec_decode_num_accepted_tokens_per_pos"
        fh.write(f"# TYPE {name} counter\n")
        for e in engines:
            for pos, r in enumerate(e.rates):
                lab = f'engine="0",instance="{e.instance}",job="vllm",model_name="{e.model}",position="{pos}"'
                lines = []
                for t in times:
                    secs = (t - half) if (e.restart and t >= half) else (t - start)
                    v = int(r * 1000) if e.stalled else int(r * int(e.drafts_per_s * secs))
                    lines.append(f"{name}_total{{{lab}}} {v} {t}\n")
                fh.write("".join(lines))
                samples += len(lines)
        fh.write("# EOF\n")
    return samples


def create_blocks(promtool: str, openmetrics: Path, data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", str(openmetrics), str(data_dir)],
        check=True,
        capture_output=True,
        timeout=600,
    )
