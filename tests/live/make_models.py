"""Tiny Qwen3 targets and drafters made here (nothing from a hub), run by the ENGINE's python:

    <engine python> tests/live/make_models.py OUTDIR

Writes under OUTDIR (each a checkpoint folder with config.json, model.safetensors and the tokenizer):
  target/        2 layers, hidden 256, vocab 1024, weights N(0, 0.08), seed 0
  same/          the target's own weights (a drafter that agrees with it on every token)
  other/         the same shape, another seed (drafts that are garbage for this target)
  noisy/         the target + Gaussian noise of 0.1 x each tensor's std (agrees often at first, less later)
  head3/         an EAGLE-3 head (LlamaForCausalLMEagle3) whose aux layer ids (4, 8, 12) do not exist in a
                 2-layer target
  swa-draft/     a DFlash drafter (DFlashDraftModel) whose layers are one sliding-window, one full attention
The tokenizer is a byte-level BPE trained on text written here. Folder names avoid the words vLLM re-reads
as a method (dflash, eagle-, eagle3, dspark).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

VOCAB = 1024
HIDDEN = 256
LAYERS = 2
HEADS = 4
KV_HEADS = 2
HEAD_DIM = 64
INTER = 512


def corpus() -> list[str]:
    words = [
        "the",
        "a",
        "speculative",
        "decoding",
        "drafter",
        "target",
        "token",
        "accept",
        "reject",
        "verify",
        "step",
        "model",
        "layer",
        "cache",
        "server",
        "request",
        "prompt",
        "answer",
        "number",
        "list",
        "city",
        "river",
        "mountain",
        "table",
        "chair",
        "window",
        "green",
        "blue",
        "red",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "hundred",
        "thousand",
        "run",
        "walk",
        "read",
        "write",
        "think",
    ]
    lines = []
    for i in range(4000):
        n = 6 + i % 11
        lines.append(" ".join(words[(i * 7 + j * j * 3 + j) % len(words)] for j in range(n)) + f" {i}.")
    return lines


def make_tokenizer(out: Path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus(), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>", bos_token=None
    )
    fast.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    fast.save_pretrained(out)
    return fast


def qwen3_config(eos: int):
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        intermediate_size=INTER,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=HEAD_DIM,
        max_position_embeddings=2048,
        tie_word_embeddings=False,
        bos_token_id=eos,
        eos_token_id=eos,
        torch_dtype="float32",
    )


def random_model(config, seed: int):
    import torch
    from transformers import Qwen3ForCausalLM

    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            else:
                p.normal_(0.0, 0.08)
    return model


def save(model, tokenizer, out: Path) -> None:
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    # no generation_config.json: the server's default sampling is then its own (temperature from requests)
    (out / "generation_config.json").unlink(missing_ok=True)


def noisy_copy(model, scale: float, seed: int):
    import copy

    import torch

    torch.manual_seed(seed)
    noisy = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in noisy.named_parameters():
            if not name.endswith("norm.weight"):
                p.add_(torch.randn_like(p) * p.std() * scale)
    return noisy


def write_safetensors(tensors: dict, out: Path) -> None:
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in tensors.items()}, str(out / "model.safetensors"))


def eagle3_head(out: Path, tokenizer, eos: int) -> None:
    """A random one-layer EAGLE-3 head for the tiny target, tapping layers 4, 8, 12 (a 2-layer target has 0, 1)."""
    import torch

    torch.manual_seed(3)
    out.mkdir(parents=True, exist_ok=True)
    cfg = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": HIDDEN,
        "intermediate_size": INTER,
        "num_hidden_layers": 1,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM,
        "vocab_size": VOCAB,
        "draft_vocab_size": VOCAB,
        "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "bos_token_id": eos,
        "eos_token_id": eos,
        "torch_dtype": "float32",
        "eagle_aux_hidden_state_layer_ids": [4, 8, 12],
    }
    (out / "config.json").write_text(json.dumps(cfg, indent=1))

    def r(*shape):
        return torch.randn(*shape) * 0.08

    kv = KV_HEADS * HEAD_DIM
    t = {
        "fc.weight": r(HIDDEN, 3 * HIDDEN),
        "midlayer.input_layernorm.weight": torch.ones(HIDDEN),
        "midlayer.hidden_norm.weight": torch.ones(HIDDEN),
        "midlayer.post_attention_layernorm.weight": torch.ones(HIDDEN),
        "midlayer.self_attn.q_proj.weight": r(HEADS * HEAD_DIM, 2 * HIDDEN),
        "midlayer.self_attn.k_proj.weight": r(kv, 2 * HIDDEN),
        "midlayer.self_attn.v_proj.weight": r(kv, 2 * HIDDEN),
        "midlayer.self_attn.o_proj.weight": r(HIDDEN, HEADS * HEAD_DIM),
        "midlayer.mlp.gate_proj.weight": r(INTER, HIDDEN),
        "midlayer.mlp.up_proj.weight": r(INTER, HIDDEN),
        "midlayer.mlp.down_proj.weight": r(HIDDEN, INTER),
        "norm.weight": torch.ones(HIDDEN),
        "lm_head.weight": r(VOCAB, HIDDEN),
    }
    write_safetensors(t, out)
    tokenizer.save_pretrained(out)


def swa_drafter(out: Path, tokenizer, eos: int) -> None:
    """A DFlash drafter whose two layers are one sliding-window and one full attention."""
    import torch

    torch.manual_seed(4)
    out.mkdir(parents=True, exist_ok=True)
    cfg = {
        "architectures": ["DFlashDraftModel"],
        "model_type": "qwen3",
        "hidden_size": HIDDEN,
        "intermediate_size": INTER,
        "num_hidden_layers": 2,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM,
        "vocab_size": VOCAB,
        "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "bos_token_id": eos,
        "eos_token_id": eos,
        "torch_dtype": "float32",
        "block_size": 4,
        "use_sliding_window": True,
        "sliding_window": 64,
        "layer_types": ["sliding_attention", "full_attention"],
        "dflash_config": {"target_layer_ids": [0, 1], "mask_token_id": eos},
    }
    (out / "config.json").write_text(json.dumps(cfg, indent=1))

    def r(*shape):
        return torch.randn(*shape) * 0.08

    kv = KV_HEADS * HEAD_DIM
    t = {
        "fc.weight": r(HIDDEN, 2 * HIDDEN),
        "hidden_norm.weight": torch.ones(HIDDEN),
        "norm.weight": torch.ones(HIDDEN),
    }
    for i in range(2):
        p = f"layers.{i}."
        t |= {
            p + "input_layernorm.weight": torch.ones(HIDDEN),
            p + "post_attention_layernorm.weight": torch.ones(HIDDEN),
            p + "self_attn.q_proj.weight": r(HEADS * HEAD_DIM, HIDDEN),
            p + "self_attn.k_proj.weight": r(kv, HIDDEN),
            p + "self_attn.v_proj.weight": r(kv, HIDDEN),
            p + "self_attn.o_proj.weight": r(HIDDEN, HEADS * HEAD_DIM),
            p + "self_attn.q_norm.weight": torch.ones(HEAD_DIM),
            p + "self_attn.k_norm.weight": torch.ones(HEAD_DIM),
            p + "mlp.gate_proj.weight": r(INTER, HIDDEN),
            p + "mlp.up_proj.weight": r(INTER, HIDDEN),
            p + "mlp.down_proj.weight": r(HIDDEN, INTER),
        }
    write_safetensors(t, out)
    tokenizer.save_pretrained(out)


def main(outdir: str) -> None:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = make_tokenizer(out / "tokenizer")
    eos = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = qwen3_config(eos)
    target = random_model(config, seed=0)
    save(target, tokenizer, out / "target")
    save(target, tokenizer, out / "same")
    save(random_model(config, seed=1), tokenizer, out / "other")
    save(noisy_copy(target, 0.1, seed=2), tokenizer, out / "noisy")
    eagle3_head(out / "head3", tokenizer, eos)
    swa_drafter(out / "swa-draft", tokenizer, eos)
    (out / ".complete").write_text("ok\n")


if __name__ == "__main__":
    main(sys.argv[1])
