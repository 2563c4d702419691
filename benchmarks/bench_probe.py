"""Probe speed: tokens/s against the target's own greedy decoding, and the per-step time against its floor.

The floor of one draft-and-verify step is one target forward over a block plus one drafter forward;
the probe's per-step time (decode time without prefill, divided by steps) should sit close to it.

    PYTHONPATH=$PWD python benchmarks/bench_probe.py                       # the committed tiny pair, CPU
    PYTHONPATH=$PWD python benchmarks/bench_probe.py --random-1b --device cuda   # random ~1B pair (no downloads)
    PYTHONPATH=$PWD python benchmarks/bench_probe.py --random-small --max-new 32  # the same code path, CPU-sized

Random weights accept almost nothing (τ ≈ 1), so those runs measure step cost, not τ.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dflash_doctor.probe.config import load_drafter_config, parse_drafter_config  # noqa: E402
from dflash_doctor.probe.drafter import ContextCache, DFlashDrafter, load_drafter  # noqa: E402
from dflash_doctor.probe.engine import greedy_generate, speculative_generate  # noqa: E402
from dflash_doctor.probe.prompts import load_prompts  # noqa: E402
from dflash_doctor.probe.runner import hf_taps  # noqa: E402
from dflash_doctor.probe.target import Target, load_target  # noqa: E402


def random_pair(device: str, dtype, hidden=2048, layers=16, vocab=32000, draft_layers=3):
    """A randomly initialised ~1B Qwen3 target and a matching DFlash drafter, built in memory."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    tcfg = Qwen3Config(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=hidden * 3,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 128,
        num_key_value_heads=max(1, hidden // 512),
        head_dim=128,
        max_position_embeddings=8192,
        tie_word_embeddings=False,
    )
    with torch.device(device):
        model = Qwen3ForCausalLM(tcfg).to(dtype).eval()
    dcfg = parse_drafter_config(
        {
            "hidden_size": hidden,
            "num_hidden_layers": draft_layers,
            "num_attention_heads": hidden // 128,
            "num_key_value_heads": max(1, hidden // 512),
            "head_dim": 128,
            "intermediate_size": hidden * 3,
            "vocab_size": vocab,
            "block_size": 16,
            "dflash_config": {"mask_token_id": vocab - 2, "target_layer_ids": [1, layers // 2, layers - 3]},
        }
    )
    drafter = DFlashDrafter(dcfg).to(device=device, dtype=dtype).eval()
    return Target(model), drafter, dcfg


def sync(dev):
    if str(dev).startswith("cuda"):
        torch.cuda.synchronize()


@torch.no_grad()
def floor_step(target, drafter, cfg, taps, prompt, block, reps=20):
    """Median of (one target forward over a block with a warm cache) + (one drafter forward with a warm
    context cache)."""
    dev = target.device
    ids = torch.tensor([prompt], device=dev)
    cache = target.new_cache()
    _, hs = target.forward(ids, cache)
    feats = torch.cat([hs[i] for i in taps], dim=-1)
    dcache = ContextCache()
    blk = torch.tensor([[prompt[-1]] + [cfg.mask_token_id] * (block - 1)], device=dev)
    emb = target.embed(blk)
    drafter(emb, feats[:, :-1], start=len(prompt) - 1, cache=dcache)
    times_t, times_d = [], []
    for _ in range(reps):
        sync(dev)
        t0 = time.perf_counter()
        target.forward(blk, cache)
        sync(dev)
        t1 = time.perf_counter()
        target.crop(cache, len(prompt))
        h = drafter(emb, feats[:, :0], start=len(prompt) - 1, cache=dcache)
        target.head(h[0, 1:])
        sync(dev)
        times_t.append(t1 - t0)
        times_d.append(time.perf_counter() - t1)
    return statistics.median(times_t), statistics.median(times_d)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default=str(ROOT / "fixtures/tiny/target"))
    ap.add_argument("--drafter", default=str(ROOT / "fixtures/tiny/drafter"))
    ap.add_argument("--prompts", default=str(ROOT / "fixtures/tiny/prompts.jsonl"))
    ap.add_argument("--limit", type=int, default=6)
    ap.add_argument("--max-new", type=int, default=64)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--random-1b", action="store_true", help="random ~1B target + 3-layer drafter, bf16")
    ap.add_argument("--random-small", action="store_true", help="random ~60M target + drafter, float32 (CPU check)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.random_1b or args.random_small:
        dtype = torch.bfloat16 if args.random_1b else torch.float32
        size = {} if args.random_1b else {"hidden": 512, "layers": 8, "vocab": 32000, "draft_layers": 2}
        target, drafter, cfg = random_pair(args.device, dtype, **size)
        g = torch.Generator().manual_seed(1)
        prompts = [torch.randint(0, 30000, (n,), generator=g).tolist() for n in (256, 512, 1024, 2048)]
        block = 16
    else:
        target = load_target(args.target, args.device, torch.float32)
        cfg = load_drafter_config(args.drafter)
        drafter = load_drafter(args.drafter, cfg, device=args.device)
        prompts = [list(p.ids) for p in load_prompts(args.prompts, None, args.limit)]
        block = cfg.block_size
    taps = hf_taps(cfg.target_layer_ids, 0, target.num_layers)
    # warm-up (allocator, kernels)
    speculative_generate(
        target, drafter, prompts[0], max_new=8, block=block, taps=taps, mask_token_id=cfg.mask_token_id
    )
    greedy_generate(target, prompts[0], 8)
    spec_t = greedy_t = 0.0
    spec_n = greedy_n = 0
    steps = 0
    decode_t = 0.0
    lengths = []
    for p in prompts:
        s = speculative_generate(
            target, drafter, p, max_new=args.max_new, block=block, taps=taps, mask_token_id=cfg.mask_token_id
        )
        gr = greedy_generate(target, p, args.max_new)
        spec_t += s.seconds
        spec_n += len(s.tokens)
        greedy_t += gr.seconds
        greedy_n += len(gr.tokens)
        steps += len(s.step_lengths)
        decode_t += s.seconds - s.prefill_seconds
        lengths += s.step_lengths
    t_fwd, d_fwd = floor_step(target, drafter, cfg, taps, prompts[len(prompts) // 2], block)
    step = decode_t / steps
    fig = {
        "device": args.device,
        "prompts": len(prompts),
        "block": block,
        "tau": sum(lengths) / len(lengths),
        "probe_tokens_per_s": spec_n / spec_t,
        "target_greedy_tokens_per_s": greedy_n / greedy_t,
        "speedup": (spec_n / spec_t) / (greedy_n / greedy_t),
        "step_ms": step * 1e3,
        "target_block_forward_ms": t_fwd * 1e3,
        "drafter_forward_ms": d_fwd * 1e3,
        "step_over_floor": step / (t_fwd + d_fwd),
        "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if args.device.startswith("cuda"):
        fig["cuda_max_allocated_gib"] = torch.cuda.max_memory_allocated() / 2**30
    print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in fig.items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
