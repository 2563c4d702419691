"""Tiny GGUF target/drafter pairs for the llama.cpp lab, made here (nothing from a hub) and cached.

A Qwen3 of 2 layers, hidden 256, vocab 1024, weights N(0, 0.08) from a seed, with a byte-level BPE tokenizer
trained on a corpus generated here; drafters: the same weights, a noisy copy (+0.1·std Gaussian noise per tensor)
and another seed. Each is converted to GGUF (f32) by the llama.cpp release's own `convert_hf_to_gguf.py`, run
through `_convert.py` (next to this file), which names the pre-tokenizer: the converter knows pre-tokenizers by
the hash of a test string's tokens and refuses a tokenizer trained here; ours splits like Qwen2's (byte-level,
GPT-2 style), so `qwen2` is what it is. The vendored file is not edited.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import subprocess
import sys
from pathlib import Path

from .engine import cache_dir, source_dir

HIDDEN, LAYERS, VOCAB = 256, 2, 1024
DRAFTERS = ("same", "noisy", "other")
_TEXT = (
    "the a of and to in is was for on with as by at from that this it be are were can will model token draft "
    "target speculative decoding accept reject verify cache layer head batch server request prompt answer "
    "quick brown fox jumps over lazy dog river mountain city light night morning garden window paper music"
)
_WORDS = _TEXT.split()


def _corpus(n: int = 4000, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(4, 14))]
        if rng.random() < 0.3:
            words.append(str(rng.randint(0, 9999)))
        lines.append(" ".join(words).capitalize() + rng.choice(".!?,"))
    return lines


def _tokenizer(out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB - len(special),
        special_tokens=[],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    fast.add_special_tokens({"additional_special_tokens": special[1:]})
    fast.save_pretrained(out)


def _config():
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        intermediate_size=512,
        num_hidden_layers=LAYERS,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=2048,
        initializer_range=0.08,
        tie_word_embeddings=False,
        eos_token_id=0,
        bos_token_id=0,
        torch_dtype="float32",
    )


def _model(seed: int):
    import torch
    from transformers import Qwen3ForCausalLM

    torch.manual_seed(seed)
    return Qwen3ForCausalLM(_config()).eval()


def _noisy(model, scale: float, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            std = float(p.std()) if p.numel() > 1 else 0.0
            if std > 0:
                p.add_(torch.randn(p.shape, generator=g) * (scale * std))
    return model


def _convert(hf: Path, gguf: Path) -> None:
    script = Path(__file__).with_name("_convert.py")
    cmd = [sys.executable, str(script), str(source_dir()), str(hf), "--outfile", str(gguf), "--outtype", "f32"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0 or not gguf.is_file():
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"convert_hf_to_gguf.py failed for {hf.name}: {' | '.join(tail)}")


def make_models() -> dict[str, Path]:
    """{"target": …, "same": …, "noisy": …, "other": …} GGUF paths, made once into the cache."""
    root = cache_dir() / "models"
    root.mkdir(parents=True, exist_ok=True)
    names = ("target", *DRAFTERS)
    paths = {n: root / f"{n}.gguf" for n in names}
    with open(root / "make.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(p.is_file() for p in paths.values()) and (root / "done.json").is_file():
            return paths
        tok = root / "tokenizer"
        _tokenizer(tok)
        models = {
            "target": _model(0),
            "same": _model(0),
            "noisy": _noisy(_model(0), 0.1, seed=11),
            "other": _model(1),
        }
        for name, model in models.items():
            hf = root / f"hf-{name}"
            model.save_pretrained(hf, safe_serialization=True)
            for f in tok.iterdir():
                (hf / f.name).write_bytes(f.read_bytes())
            _convert(hf, paths[name])
        (root / "done.json").write_text(json.dumps({n: str(p) for n, p in paths.items()}))
    return paths


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(json.dumps({k: str(v) for k, v in make_models().items()}, indent=1))
