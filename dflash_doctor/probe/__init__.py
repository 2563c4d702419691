"""The live probe: a clean-room DFlash drafter run against its target, with ablations, and layer-offset matching.

torch-free at import: config, prompts, runner, evidence, remote (the CLI loads these before it knows
whether torch is there). drafter, engine, target and layer_offset need the probe extra.
Every implementation choice is listed in CHOICES.md.
"""
