"""Drafter and target checkpoints read without loading weights, and the engine-support table."""

from .engine_support import EngineSupport, lookup
from .facts import DrafterFacts, LayerAttention, TargetFacts, drafter_facts, target_facts

__all__ = ["DrafterFacts", "EngineSupport", "LayerAttention", "TargetFacts", "drafter_facts", "lookup", "target_facts"]
