"""The target model as the probe needs it: embeddings, LM head, and a cached forward with hidden states.

Loaded through transformers' AutoModelForCausalLM without trust_remote_code; for multimodal
wrappers (e.g. Qwen3.5/3.6 `...ForConditionalGeneration`) the text backbone is extracted so
only token ids ever go in.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import torch

from ..errors import UsageError
from .kernels import any_length_attention


class Target:
    def __init__(self, model):
        self.model = model
        self.backbone = _text_backbone(model)
        self.embed = model.get_input_embeddings()
        self.head = model.get_output_embeddings()
        if self.embed is None or self.head is None:
            raise UsageError("the target has no input embeddings or LM head that the drafter could share")
        cfg = getattr(model.config, "text_config", None) or model.config
        self.config = cfg
        self.num_layers = int(cfg.num_hidden_layers)
        self.vocab_size = int(cfg.vocab_size)
        self.device = self.embed.weight.device
        self.dtype = self.embed.weight.dtype
        # transformers renamed past_key_values -> cache in 5.x
        params = inspect.signature(self.backbone.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"

    @staticmethod
    def crop(cache, keep: int) -> None:
        """Drop cached positions >= keep (a negative count works across transformers 4.x and 5.x)."""
        extra = cache.get_seq_length() - keep
        if extra > 0:
            cache.crop(-extra)

    def new_cache(self):
        from transformers import DynamicCache

        try:
            return DynamicCache(config=self.config)
        except TypeError:
            return DynamicCache()

    @torch.no_grad()
    def forward(self, ids: torch.Tensor, cache, hidden: bool = True):
        """ids [1, t] -> (logits [t, vocab], hidden-state tuple or None). The cache grows by t."""
        kw = {self._cache_kw: cache} if cache is not None else {}
        with any_length_attention():
            out = self.backbone(
                input_ids=ids.to(self.device), use_cache=cache is not None, output_hidden_states=hidden, **kw
            )
        logits = self.head(out.last_hidden_state)[0]
        return logits.float(), (out.hidden_states if hidden else None)


def _text_backbone(model):
    """The decoder stack that takes input_ids and returns hidden_states (N+1 of them)."""
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "language_model"):
        return inner.language_model
    if hasattr(model, "language_model"):
        return model.language_model
    if inner is not None:
        return inner
    raise UsageError(f"cannot find the text decoder inside {type(model).__name__}")


def resolve_dtype(name: str | None):
    if name in (None, "", "auto"):
        return None
    table = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "float16": torch.float16,
        "fp16": torch.float16,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
    }
    if name not in table:
        raise UsageError(f"unknown --dtype {name!r}", hint="float32, float16 or bfloat16")
    return table[name]


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError("--device cuda but torch sees no CUDA device")
    if name not in ("cpu",) and not name.startswith("cuda"):
        raise UsageError(f"unknown --device {name!r}", hint="cpu, cuda or auto")
    return name


PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")


def refuse_pickle_only(path: str, what: str) -> None:
    """A local checkpoint whose weights are pickle files only: one clear line, and nothing unpickled."""
    p = Path(path)
    if not p.is_dir():
        return
    names = sorted(n.name for n in p.iterdir())
    if any(n.endswith(".safetensors") for n in names):
        return
    pickles = [n for n in names if n.endswith(PICKLE_SUFFIXES)]
    if pickles:
        raise UsageError(
            f"the {what} {path} has pickle weights only ({', '.join(pickles[:3])}"
            f"{', …' if len(pickles) > 3 else ''}); dflash-doctor never unpickles a checkpoint",
            hint="convert it to safetensors where you trust the file (transformers' save_pretrained "
            "writes safetensors by default), then point --" + what + " at the copy",
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def load_target(path: str, device: str, dtype) -> Target:
    import transformers
    from transformers import AutoModelForCausalLM

    refuse_pickle_only(path, "target")
    # Only safetensors are ever read: a checkpoint with pickle weights alone is refused, never unpickled.
    kw: dict[str, Any] = {"trust_remote_code": False, "use_safetensors": True}
    if dtype is not None:
        kw["dtype"] = dtype
    multi_gpu = device == "cuda" and torch.cuda.device_count() > 1
    if multi_gpu:
        kw["device_map"] = "auto"  # accelerate shards large targets over the host's GPUs
    if not Path(path).exists():
        kw["local_files_only"] = True  # a repo id: use the local HF cache only, never download
    try:
        model = AutoModelForCausalLM.from_pretrained(path, **kw)
    except ValueError as exc:
        # multimodal wrappers are not registered for causal LM in every transformers version
        try:
            model = transformers.AutoModelForImageTextToText.from_pretrained(path, **kw)
        except Exception:
            raise UsageError(f"cannot load the target {path}: {_first_line(exc)}") from None
    except OSError as exc:
        raise UsageError(
            f"cannot load the target {path}: {_first_line(exc)}",
            hint="give a local directory or a repo id present in the HF cache, with safetensors weights",
        ) from None
    except Exception as exc:  # whatever else transformers raises on a damaged checkpoint: one line, not its essay
        raise UsageError(f"cannot load the target {path}: {type(exc).__name__}: {_first_line(exc)}") from None
    if not multi_gpu:
        model = model.to(device)  # type: ignore[arg-type]  # (transformers' decorated .to is typed as taking the model first)
    model.eval()
    return Target(model)
