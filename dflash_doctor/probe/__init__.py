"""The live probe: a clean-room DFlash drafter run against its target, with ablations, and layer-offset matching.

Only `config`, `runner` (at import) and `prompts` are torch-free; the rest needs the probe extra.
"""
