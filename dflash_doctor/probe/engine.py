"""Draft-and-verify with the clean-room drafter, exactly as the reference defines acceptance.

One step: block = [last verified token, MASK x (B-1)] -> one drafter pass -> B-1 drafts; the target
scores [last verified token, drafts]; accepted = length of the prefix where drafts == the target's
choice at the previous position; the step's acceptance length is accepted + 1 (the bonus token).
The drafter's context grows only by committed tokens (the last verified token and the accepted
drafts); the bonus token's own states arrive with the next verification.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from .drafter import ContextCache, DFlashDrafter
from .target import Target

END_RULES = {
    "reference": "reference (published snapshot): a full block is drafted at every step, the last one "
    "included, and every step is counted",
    "budget": "budget (newer reference): the last block is cut to the remaining token budget",
}
SAMPLING_RULE = (
    "reference sampling: drafts sampled from the drafter at temperature T, the target's token "
    "sampled at each position at T, drafts accepted while they equal the target's samples"
)


@dataclass
class Generation:
    tokens: list[int]
    step_lengths: list[int] = field(default_factory=list)  # acceptance length per step (1..B)
    step_contexts: list[int] = field(default_factory=list)  # context length at each step
    seconds: float = 0.0
    prefill_seconds: float = 0.0


def _choose(logits: torch.Tensor, temperature: float, gen: torch.Generator | None) -> torch.Tensor:
    if temperature <= 0:
        return logits.argmax(-1)
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    return torch.multinomial(probs.cpu(), 1, generator=gen).squeeze(-1).to(logits.device)


def _finish(tokens: list[int], max_new: int, stop_ids: frozenset[int]) -> list[int]:
    out = tokens[:max_new]
    for i, t in enumerate(out):
        if t in stop_ids:
            return out[: i + 1]
    return out


def _features(hidden_states, taps: tuple[int, ...], start: int, stop: int, device) -> torch.Tensor:
    # with device_map="auto" the taps live on different GPUs: gather them where the drafter is
    return torch.cat([hidden_states[i][:, start:stop].to(device) for i in taps], dim=-1)


class _HostReader:
    """Reads small integer tensors into Python: on CUDA one non-blocking copy into a pinned buffer and one
    stream wait. A pageable transfer (.tolist(), int(), torch.tensor(..., device=) with host data) is a blocking
    copy with a synchronisation of its own, and very costly on some hosts (gVisor)."""

    def __init__(self, size: int, device: torch.device):
        self.cuda = device.type == "cuda"
        self.buffer = torch.empty(size, dtype=torch.long, pin_memory=self.cuda)

    def __call__(self, values: torch.Tensor) -> list[int]:
        if not self.cuda:
            return values.tolist()
        host = self.buffer[: values.numel()]
        host.copy_(values, non_blocking=True)
        torch.cuda.current_stream(values.device).synchronize()
        return host.tolist()


@torch.no_grad()
def greedy_generate(
    target: Target, prompt: list[int], max_new: int, stop_ids: frozenset[int] = frozenset()
) -> Generation:
    """The target's own greedy decoding: the losslessness reference and the speed baseline.

    Each token goes back in as the device tensor the argmax left; the host reads it once per step.
    """
    t0 = time.perf_counter()
    cache = target.new_cache()
    read = _HostReader(1, target.device)
    logits, _ = target.forward(torch.tensor([prompt], device=target.device), cache, hidden=False)
    token = logits[-1].argmax().view(1)
    out = read(token)
    while len(out) < max_new and out[-1] not in stop_ids:
        logits, _ = target.forward(token[None], cache, hidden=False)
        token = logits[-1].argmax().view(1)
        out += read(token)
    _sync(target)
    return Generation(_finish(out, max_new, stop_ids), seconds=time.perf_counter() - t0)


@torch.no_grad()
def speculative_generate(
    target: Target,
    drafter: DFlashDrafter,
    prompt: list[int],
    *,
    max_new: int,
    block: int,
    taps: tuple[int, ...],
    mask_token_id: int,
    swa: bool = True,
    temperature: float = 0.0,
    end_rule: str = "reference",
    stop_ids: frozenset[int] = frozenset(),
    generator: torch.Generator | None = None,
) -> Generation:
    t0 = time.perf_counter()
    dev = target.device
    tcache = target.new_cache()
    read = _HostReader(2 * block, dev)
    logits, hs = target.forward(torch.tensor([prompt], device=dev), tcache)
    last = _choose(logits[-1], temperature, generator).view(1)  # the last verified token, on the device
    out = read(last)
    pending = _features(hs, taps, 0, len(prompt), dev)  # context states not yet in the drafter cache
    dcache = ContextCache()
    gen = Generation(tokens=[])
    mask_embed = target.embed(torch.tensor([mask_token_id], device=dev))
    _sync(target)
    gen.prefill_seconds = time.perf_counter() - t0
    while len(out) < max_new and out[-1] not in stop_ids:
        start = len(prompt) + len(out) - 1  # position of the last verified token
        size = block if end_rule == "reference" else max(1, min(block, max_new - len(out)))
        first = target.embed(last.to(dev))
        emb = torch.cat([first, mask_embed.expand(size - 1, -1)], dim=0)[None].to(drafter.fc.weight.dtype)
        h = drafter(emb, pending.to(emb.device), start=start, cache=dcache, swa=swa)
        draft_logits = target.head(h[0, 1:].to(device=target.head.weight.device, dtype=target.head.weight.dtype))
        drafts = _choose(draft_logits, temperature, generator) if size > 1 else last[:0]
        logits, hs = target.forward(torch.cat([last, drafts])[None], tcache)
        chosen = _choose(logits, temperature, generator)
        # the step's one host read: the drafts and the target's choices together
        values = read(torch.cat([drafts, chosen]))
        drafted, verified = values[: size - 1], values[size - 1 :]
        accepted = 0
        while accepted < len(drafted) and drafted[accepted] == verified[accepted]:
            accepted += 1
        target.crop(tcache, start + accepted + 1)  # keep the last verified token and the accepted drafts
        pending = _features(hs, taps, 0, accepted + 1, dev)
        last = chosen[accepted : accepted + 1]
        gen.step_lengths.append(accepted + 1)
        gen.step_contexts.append(start)
        new = [*drafted[:accepted], verified[accepted]]
        out.extend(new)
        if stop_ids and any(t in stop_ids for t in new):
            break
    _sync(target)
    gen.tokens = _finish(out, max_new, stop_ids)
    gen.seconds = time.perf_counter() - t0
    return gen


def _sync(target: Target) -> None:
    if target.device.type == "cuda":
        torch.cuda.synchronize()


def summarise(lengths: list[int], block: int) -> dict:
    """tau, vLLM-style per-position rates (rate i = share of steps whose first i+1 drafts were accepted), histogram."""
    steps = len(lengths)
    k = block - 1
    if steps == 0:
        return {"mean_acceptance_length": None, "per_position": [], "histogram": {}, "steps": 0}
    per = [sum(1 for n in lengths if n - 1 >= i + 1) / steps for i in range(k)]
    hist = {str(n): sum(1 for x in lengths if x == n) for n in range(1, block + 1)}
    return {"mean_acceptance_length": sum(lengths) / steps, "per_position": per, "histogram": hist, "steps": steps}
