"""Drafter and target checkpoints read without loading weights, and the engine-support table.

What they produce (DrafterFacts, TargetFacts, EngineSupport) is evidence: evidence/model_facts.py and
evidence/engine_facts.py."""

from .engine_support import lookup
from .facts import drafter_facts, target_facts

__all__ = ["drafter_facts", "lookup", "target_facts"]
