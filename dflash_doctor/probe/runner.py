"""One probe run end to end: load the pair, draft-and-verify every prompt, run the ablations, summarise.

The result is a plain dict (schema "dflash-doctor/probe@1") so it can travel as JSON from a remote
host and become ProbeResult evidence unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ..errors import UsageError
from ..model_ref import model_identity
from .config import load_drafter_config
from .prompts import load_prompts, needs_tokenizer, rows_need_tokenizer

PROBE_SCHEMA = "dflash-doctor/probe@1"
ABLATIONS = ("offset", "swa", "context")
CONTEXT_BUCKETS = ((0, 512), (512, 2048), (2048, 4096), (4096, None))


def hf_taps(target_layer_ids, delta: int, num_layers: int) -> tuple[int, ...] | None:
    """HF hidden-state indices for the drafter's taps under the +1 convention, shifted by delta; None if out of
    range."""
    taps = tuple(i + 1 + delta for i in target_layer_ids)
    return taps if all(0 <= t <= num_layers for t in taps) else None


def bucket_name(lo: int, hi: int | None) -> str:
    return f"context:{lo}-{hi - 1}" if hi is not None else f"context:{lo}+"


def parse_ablate(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    names = tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))
    bad = [n for n in names if n not in ABLATIONS]
    if bad:
        raise UsageError(f"unknown ablation(s) {', '.join(bad)}", hint="--ablate takes offset, swa, context")
    return names


class PairRunner:
    """Holds a loaded target + drafter and runs prompt sets under a given setting."""

    def __init__(
        self,
        target,
        drafter,
        cfg,
        *,
        block: int,
        max_new: int,
        temperature: float = 0.0,
        end_rule: str = "reference",
        stop_ids: frozenset[int] = frozenset(),
        seed: int = 0,
        progress: Callable[[str], None] | None = None,
    ):
        self.target, self.drafter, self.cfg = target, drafter, cfg
        self.block, self.max_new, self.temperature = block, max_new, temperature
        self.end_rule, self.stop_ids, self.seed = end_rule, stop_ids, seed
        self.progress = progress or (lambda msg: None)
        self._greedy: dict[int, object] = {}

    def greedy(self, i: int, prompt):
        from .engine import greedy_generate

        if i not in self._greedy:
            self._greedy[i] = greedy_generate(self.target, list(prompt.ids), self.max_new, self.stop_ids)
        return self._greedy[i]

    def run(self, prompts, taps: tuple[int, ...], swa: bool = True, label: str = "probe") -> dict:
        import torch

        from .engine import speculative_generate, summarise

        lengths: list[int] = []
        contexts: list[int] = []
        mismatches = []
        seconds = 0.0
        generated = 0
        gen = torch.Generator().manual_seed(self.seed)
        for i, p in enumerate(prompts):
            self.progress(f"{label}: prompt {i + 1}/{len(prompts)} ({len(p.ids)} tokens)")
            g = speculative_generate(
                self.target,
                self.drafter,
                list(p.ids),
                max_new=self.max_new,
                block=self.block,
                taps=taps,
                mask_token_id=self.cfg.mask_token_id,
                swa=swa,
                temperature=self.temperature,
                end_rule=self.end_rule,
                stop_ids=self.stop_ids,
                generator=gen,
            )
            lengths += g.step_lengths
            contexts += g.step_contexts
            seconds += g.seconds
            generated += len(g.tokens)
            if self.temperature <= 0:
                ref = self.greedy(i, p).tokens
                if g.tokens != ref:
                    diff = next(
                        (j for j, (a, b) in enumerate(zip(g.tokens, ref, strict=False)) if a != b),
                        min(len(g.tokens), len(ref)),
                    )
                    mismatches.append({"prompt": p.id, "first_difference_at": diff})
        out = summarise(lengths, self.block)
        out["generated"] = generated
        out["seconds"] = seconds
        out["tokens_per_second"] = generated / seconds if seconds > 0 else None
        out["lossless"] = None if self.temperature > 0 else not mismatches
        out["mismatches"] = mismatches
        out["_lengths"] = lengths
        out["_contexts"] = contexts
        return out


def _ablation(name: str, summary: dict | None, note: str | None = None) -> dict:
    if summary is None:
        return {
            "name": name,
            "mean_acceptance_length": None,
            "per_position": [],
            "steps": 0,
            "lossless": None,
            "note": note,
        }
    return {
        "name": name,
        "mean_acceptance_length": summary["mean_acceptance_length"],
        "per_position": summary["per_position"],
        "steps": summary["steps"],
        "lossless": summary.get("lossless"),
        "note": note,
    }


def run_probe(  # noqa: C901 -- the probe's steps in order (load, tap, draft, verify, ablate), each may stop it
    *,
    target: str,
    drafter: str,
    prompts: str = "builtin",
    max_new_tokens: int = 128,
    block_size: int | None = None,
    device: str = "auto",
    dtype: str | None = None,
    temperature: float = 0.0,
    ablate: tuple[str, ...] = (),
    end_rule: str = "reference",
    limit: int | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    prompt_rows: list[dict] | None = None,
) -> dict:
    """prompt_rows (already-read JSONL rows) replace `prompts` when the probe runs on a remote host."""
    import torch

    from .drafter import load_drafter
    from .engine import END_RULES, SAMPLING_RULE, summarise
    from .target import load_target, resolve_device, resolve_dtype

    say = progress or (lambda msg: None)
    if end_rule not in END_RULES:
        raise UsageError(f"unknown end rule {end_rule!r}", hint=", ".join(END_RULES))
    if max_new_tokens < 1:
        raise UsageError("--max-new-tokens must be at least 1")
    if temperature < 0:
        raise UsageError("--temperature must be >= 0")
    cfg = load_drafter_config(drafter)
    dev = resolve_device(device)
    dt = resolve_dtype(dtype)
    t0 = time.perf_counter()
    say(f"loading target {target}")
    tgt = load_target(target, dev, dt)
    tokenizer = None
    if rows_need_tokenizer(prompt_rows) if prompt_rows is not None else needs_tokenizer(prompts):
        from transformers import AutoTokenizer

        tok_files = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")
        if Path(target).is_dir() and not any((Path(target) / f).is_file() for f in tok_files):
            # transformers 5 builds an empty tokenizer from nothing; refuse instead of encoding to []
            raise UsageError(
                f"{prompts} holds text prompts but {target} has no tokenizer files",
                hint="use --prompts FILE.jsonl with raw input_ids",
            )
        try:
            tokenizer = AutoTokenizer.from_pretrained(
                target, trust_remote_code=False, local_files_only=not Path(target).exists()
            )
        except Exception as exc:
            raise UsageError(
                f"cannot load the target's tokenizer: {exc}", hint="use --prompts FILE.jsonl with raw input_ids"
            ) from None
    plist = load_prompts(prompts, tokenizer, limit, rows=prompt_rows)
    vocab = int(tgt.embed.weight.shape[0])
    for p in plist:
        top = max(p.ids)
        if top >= vocab:
            raise UsageError(
                f"prompt {p.id}: token id {top} is outside the target's vocabulary (ids 0..{vocab - 1})",
                hint="were these input_ids made with this target's tokenizer?",
            )
    if cfg.hidden_size != tgt.config.hidden_size:
        raise UsageError(
            f"drafter hidden_size {cfg.hidden_size} != target hidden_size {tgt.config.hidden_size}",
            hint="is this the drafter for this target?",
        )
    if not 0 <= cfg.mask_token_id < tgt.embed.weight.shape[0]:
        raise UsageError(f"mask_token_id {cfg.mask_token_id} is outside the target's embedding table")
    taps = hf_taps(cfg.target_layer_ids, 0, tgt.num_layers)
    if taps is None:
        raise UsageError(f"target_layer_ids {list(cfg.target_layer_ids)} do not fit a {tgt.num_layers}-layer target")
    block = block_size or cfg.block_size
    if not block or block < 1:
        raise UsageError("no block size: the drafter config has none, give --block-size")
    say(f"loading drafter {drafter}")
    drf = load_drafter(drafter, cfg, device=str(tgt.device), dtype=tgt.dtype)
    stop = _stop_ids(tgt)
    runner = PairRunner(
        tgt,
        drf,
        cfg,
        block=block,
        max_new=max_new_tokens,
        temperature=temperature,
        end_rule=end_rule,
        stop_ids=stop,
        seed=seed,
        progress=say,
    )
    main = runner.run(plist, taps, swa=True, label="probe")
    greedy_secs = sum(runner.greedy(i, p).seconds for i, p in enumerate(plist)) if temperature <= 0 else None
    greedy_tokens = sum(len(runner.greedy(i, p).tokens) for i, p in enumerate(plist)) if temperature <= 0 else None
    ablations: list[dict] = []
    if "offset" in ablate:
        for delta in (-1, 0, 1):
            name = f"offset{delta:+d}"
            if delta == 0:
                ablations.append(_ablation(name, main))
                continue
            t = hf_taps(cfg.target_layer_ids, delta, tgt.num_layers)
            if t is None:
                ablations.append(_ablation(name, None, "shifted taps fall outside the target's hidden states"))
            else:
                ablations.append(_ablation(name, runner.run(plist, t, swa=True, label=name)))
    if "swa" in ablate:
        note = None if cfg.has_sliding_layers else "the drafter has no sliding layers: both settings are the same model"
        ablations.append(_ablation("swa-honoured", main, note))
        ablations.append(
            _ablation(
                "swa-ignored",
                runner.run(plist, taps, swa=False, label="swa-ignored") if cfg.has_sliding_layers else main,
                note,
            )
        )
    if "context" in ablate:
        for lo, hi in CONTEXT_BUCKETS:
            sel = [
                n
                for n, c in zip(main["_lengths"], main["_contexts"], strict=False)
                if c >= lo and (hi is None or c < hi)
            ]
            s = summarise(sel, block)
            ablations.append(
                _ablation(
                    bucket_name(lo, hi), s if sel else None, None if sel else "no step had a context of this length"
                )
            )
    result = {
        "schema": PROBE_SCHEMA,
        "target": target,
        "drafter": drafter,
        "pair": _pair(target, drafter, tgt),
        "device": str(tgt.device),
        "dtype": str(tgt.dtype).replace("torch.", ""),
        "block_size": block,
        "max_new_tokens": max_new_tokens,
        "temperature": temperature,
        "decoding": "greedy" if temperature <= 0 else SAMPLING_RULE,
        "end_rule": {"name": end_rule, "description": END_RULES[end_rule]},
        "prompts": {
            "source": prompts,
            "count": len(plist),
            "min_length": min(len(p.ids) for p in plist),
            "max_length": max(len(p.ids) for p in plist),
        },
        "taps": {
            "target_layer_ids": list(cfg.target_layer_ids),
            "hf_hidden_state_indices": list(taps),
            "convention": "+1 (hidden_states[layer_id + 1] = output of decoder layer layer_id)",
        },
        "acceptance": {k: main[k] for k in ("mean_acceptance_length", "per_position", "histogram", "steps")},
        "tokens_per_second": main["tokens_per_second"],
        "target_greedy_tokens_per_second": (greedy_tokens / greedy_secs) if greedy_secs else None,
        "lossless": main["lossless"],
        "mismatches": main["mismatches"],
        "ablations": ablations,
        "drafter_config": cfg.to_dict(),
        "notes": list(cfg.notes),
        "wall_seconds": time.perf_counter() - t0,
        "torch": torch.__version__,
    }
    if result["tokens_per_second"] and result["target_greedy_tokens_per_second"]:
        result["speedup_vs_target_greedy"] = result["tokens_per_second"] / result["target_greedy_tokens_per_second"]
    if temperature > 0:
        result["notes"].append(
            "temperature > 0: acceptance follows the reference's sampling rule; "
            "losslessness is not defined token for token"
        )
    return result


def _pair(target: str, drafter: str, tgt) -> dict:
    """The pair this probe ran, with revisions where known, so a saved result is only used for that pair."""
    t, trev = model_identity(target)
    d, drev = model_identity(drafter)
    rev = getattr(getattr(tgt.model, "config", None), "_commit_hash", None)
    return {
        "target": t,
        "target_revision": trev or (rev if isinstance(rev, str) else None),
        "drafter": d,
        "drafter_revision": drev,
    }


def _stop_ids(tgt) -> frozenset[int]:
    gc = getattr(tgt.model, "generation_config", None)
    eos = getattr(gc, "eos_token_id", None) if gc is not None else None
    if eos is None:
        eos = getattr(tgt.config, "eos_token_id", None)
    if eos is None:
        return frozenset()
    return frozenset([eos] if isinstance(eos, int) else eos)
