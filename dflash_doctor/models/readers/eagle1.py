"""EAGLE-1 configs: vLLM's `Eagle*ForCausalLM` architectures, and yuhuili's checkpoints, whose
config.json is a one-layer `LlamaForCausalLM` config (the feature head reads the last hidden state;
`fc` takes 2 × hidden: token embedding and feature)."""

from __future__ import annotations

from .base import Reading
from .fields import Fields

ARCHS = {
    "EagleLlamaForCausalLM",
    "EagleLlama4ForCausalLM",
    "EagleMiniCPMForCausalLM",
    "EagleMistralForCausalLM",
    "EagleCohereForCausalLM",
    "EagleMistralLarge3ForCausalLM",
    "EagleDeepSeekMTPModel",
}


def matches(cfg: dict, archs: tuple[str, ...]) -> bool:
    if any(a in ARCHS for a in archs):
        return True
    return archs == ("LlamaForCausalLM",) and cfg.get("num_hidden_layers") == 1 and "draft_vocab_size" not in cfg


def read(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    yuhuili = archs == ("LlamaForCausalLM",)
    r = Reading(
        family="yuhuili EAGLE-1 (one-layer LlamaForCausalLM)" if yuhuili else "EAGLE-1", method="eagle", shape=cfg
    )
    if yuhuili:
        r.notes.append(
            "a one-layer LlamaForCausalLM config is EAGLE-1's layout; fc.weight [hidden, 2·hidden] in the "
            "weights confirms it"
        )
    return r
