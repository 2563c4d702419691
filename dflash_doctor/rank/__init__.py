"""Ranking: the checks' observations scored into causes (scoring.py) and the fix plan built over them
(plan.py). What a cause is, and which observation moves it how much, is data: knowledge/causes.toml."""
