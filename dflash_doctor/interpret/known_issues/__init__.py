"""Known engine bugs that lower speculative-decoding acceptance: data (one TOML file per engine in this
folder), a validating loader and a matcher that tells how surely a deployment is affected.

Each entry names the engine, the affected releases and runner, the methods, the conditions on the
deployment, the symptoms, the release that fixed it (read from that release's own source, tag or
release notes, and said how in `verified`), the fix's public link and the cause id it implies.
"""

from .conditions import FACTS, METHODS, Deployment, FactSpec, normalise_engine, parse_fact_value
from .load import KnownIssue, KnownIssues, default_known_issues, parse_engine_file, parse_known_issues
from .match import Match, MatchQuality, RuledOut, evaluate, explain, match_deployment

__all__ = [
    "FACTS",
    "METHODS",
    "Deployment",
    "FactSpec",
    "KnownIssue",
    "KnownIssues",
    "Match",
    "MatchQuality",
    "RuledOut",
    "default_known_issues",
    "evaluate",
    "explain",
    "match_deployment",
    "normalise_engine",
    "parse_engine_file",
    "parse_fact_value",
    "parse_known_issues",
]
