"""Interpretation: what the evidence means, for the checks and the ranking alike.

readings.py   τ and the per-position curve read with their uncertainty
signature.py  the shape of the per-position curve (root-causes.md's signatures)
method.py     which speculative method ran, as a belief over every source
reference.py  what trained drafters of each method reach (reference.toml)
baselines.py  what a drafter × target pair should reach (baselines.toml), the cost model
advice.py     the k advice from the measured curve
known_issues/ fixed engine bugs: the database (one TOML per engine), its loader and matcher
"""
