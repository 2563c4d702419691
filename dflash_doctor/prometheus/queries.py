"""PromQL for the fleet: every series of every engine in a handful of queries, never one per engine.

Each query aggregates by the grouping labels (`sum by (instance, model_name) (…)`), and the series of
one query are joined with `or`, each marked by a `dflash_q` label (label_replace): one HTTP request
returns drafts, accepted tokens, the per-position counts and the gauges of every engine at once.
"""

from __future__ import annotations

import re

from ..errors import UsageError
from .metrics import Series

TAG = "dflash_q"
_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, None: 1}


def parse_duration(text: str, flag: str) -> float:
    """'6h', '90m', '30s', '1d' (or plain seconds) as seconds."""
    m = _DURATION.match(text or "")
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"{flag} {text!r} is not a duration", hint=f"e.g. {flag} 6h, 90m or 30s")
    return float(m.group(1)) * _UNIT[m.group(2)]


def promql_duration(seconds: float) -> str:
    """Seconds as a PromQL range: whole units where they fit (Prometheus 2.x has no fractional ranges)."""
    s = max(1, int(round(seconds)))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s % size == 0:
            return f"{s // size}{unit}"
    return f"{s}s"


def parse_labels(text: str, flag: str) -> tuple[str, ...]:
    """'instance' or 'pod,model_name' -> label names (validated: they go into PromQL)."""
    names = tuple(x.strip() for x in (text or "").split(",") if x.strip())
    for n in names:
        if not _LABEL.match(n) or n.startswith("__"):
            raise UsageError(
                f"{flag}: {n!r} is not a Prometheus label name", hint=f"e.g. {flag} instance or pod,model_name"
            )
    if not names:
        raise UsageError(f"{flag} needs at least one label name", hint=f"e.g. {flag} instance")
    return names


def selector_matchers(selector: str | None) -> str:
    """The matchers inside a selector's braces ('{job="vllm"}' or 'job="vllm"' -> 'job="vllm"').

    The text goes into PromQL as given (Prometheus itself rejects a malformed matcher, as a usage
    error); here only the shape is checked, so a stray brace cannot close the selector early.
    """
    s = (selector or "").strip()
    if not s:
        return ""
    if s.startswith("{"):
        if not s.endswith("}"):
            raise UsageError(f"--selector {selector!r}: no closing brace", hint="e.g. --selector '{job=\"vllm\"}'")
        s = s[1:-1].strip()
    depth_ok = _outside_quotes(s)
    if not depth_ok:
        raise UsageError(
            f"--selector {selector!r} is not a list of label matchers",
            hint='e.g. --selector \'{job="vllm",namespace="prod"}\'',
        )
    if re.search(r"__name__", s):
        raise UsageError("--selector must not match __name__: the metric names are chosen by dflash-doctor")
    return s


def _outside_quotes(s: str) -> bool:
    """No braces, brackets or parentheses outside quoted values, and quotes balanced."""
    quote = None
    esc = False
    for ch in s:
        if quote:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                quote = None
        elif ch in "\"'`":
            quote = ch
        elif ch in "{}()[]":
            return False
    return quote is None


def series_expr(s: Series, matchers: str, by: tuple[str, ...], seconds: float) -> str:
    window = promql_duration(seconds * s.window_factor)
    sel = f"{s.metric}{{{matchers}}}" if matchers else s.metric
    group = ", ".join(by + (("position",) if s.per_position else ()))
    if s.how == "increase":
        inner = f"increase({sel}[{window}])"
    elif s.how == "resets":
        inner = f"resets({sel}[{window}])"
    elif s.how == "avg":
        inner = f"avg_over_time({sel}[{window}])"
    else:  # last: the newest value within the window
        inner = f"last_over_time({sel}[{window}])"
    # gauges: the largest over the ranks of one engine (SGLang reports from its first rank only)
    agg = "max" if s.how in ("avg", "last") else "sum"
    return f'label_replace({agg} by ({group}) ({inner}), "{TAG}", "{s.tag}", "", "")'


def combined(series: tuple[Series, ...], matchers: str, by: tuple[str, ...], seconds: float) -> str:
    """One expression returning every series, each marked with its tag; ranges of `seconds`."""
    return "\nor ".join(series_expr(s, matchers, by, seconds) for s in series)
