"""Medusa configs: `medusa_num_heads`, `medusa_num_layers` (vLLM's MedusaConfig also accepts `num_heads`
and `num_hidden_layers`), and the base model the heads were trained on, `base_model_name_or_path`."""

from __future__ import annotations

from .base import Reading
from .fields import Fields


def matches(cfg: dict, archs: tuple[str, ...]) -> bool:
    return (
        "medusa_num_heads" in cfg
        or any("medusa" in a.lower() for a in archs)
        or str(cfg.get("model_type", "")).lower() == "medusa"
    )


def read(cfg: dict, f: Fields, archs: tuple[str, ...]) -> Reading:
    r = Reading(family="Medusa heads", method="medusa", shape=cfg)
    r.medusa_heads = f.int("medusa_num_heads") if "medusa_num_heads" in cfg else f.int("num_heads")
    r.medusa_layers = f.int("medusa_num_layers") if "medusa_num_layers" in cfg else None
    base = f.str("base_model_name_or_path")
    if base:
        r.intended_target, r.intended_target_source = base, "base_model_name_or_path"
    if "hidden_size" not in cfg:
        r.notes.append("the Medusa config states no hidden_size or vocab_size: they come from the base model")
    return r
