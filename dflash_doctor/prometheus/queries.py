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


MAX_DURATION = 3650 * 86400.0  # ten years: longer is a typo (a 400-digit number was inf, then an internal error)


def parse_duration(text: str, flag: str) -> float:
    """'6h', '90m', '30s', '1d' (or plain seconds) as seconds, at most MAX_DURATION."""
    m = _DURATION.match(text or "")
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"{flag} {text[:40]!r} is not a duration", hint=f"e.g. {flag} 6h, 90m or 30s")
    seconds = float(m.group(1)) * _UNIT[m.group(2)]
    if seconds > MAX_DURATION:
        raise UsageError(f"{flag} {text[:40]!r}: longer than ten years", hint=f"e.g. {flag} 6h, 90m or 30s")
    return seconds


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


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPS = ("=~", "!~", "!=", "=")  # longest first
# A value a user left unquoted (`job=vllm`): taken as the string it obviously means.
_BARE = re.compile(r"[^\s,\"'`{}()\[\]\\=!~]+")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"', "'": "'"}
_HEX = {"x": 2, "u": 4, "U": 8}


def _skip(s: str, i: int) -> int:
    """The index after the whitespace at s[i]."""
    while i < len(s) and s[i].isspace():
        i += 1
    return i


def _bad(selector: str | None, why: str) -> UsageError:
    return UsageError(
        f"--selector {selector!r}: {why}", hint='label matchers, e.g. --selector \'{job="vllm",namespace="prod"}\''
    )


def _string(s: str, i: int, selector: str | None) -> tuple[str, int]:
    """The PromQL string literal at s[i] (as Prometheus' lexer reads it: "…" and '…' with Go escapes, `…`
    raw, where a backslash is a backslash) -> (its value, the index after it)."""
    q = s[i]
    if q == "`":
        end = s.find("`", i + 1)
        if end < 0:
            raise _bad(selector, "a quoted value is not closed")
        return s[i + 1 : end], end + 1
    out: list[str] = []
    j = i + 1
    while j < len(s):
        ch = s[j]
        if ch == q:
            return "".join(out), j + 1
        if ch == "\n":
            raise _bad(selector, "a newline inside a quoted value")
        if ch != "\\":
            out.append(ch)
            j += 1
            continue
        esc = s[j + 1 : j + 2]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            j += 2
        elif esc in _HEX and re.fullmatch(f"[0-9A-Fa-f]{{{_HEX[esc]}}}", s[j + 2 : j + 2 + _HEX[esc]]):
            out.append(chr(int(s[j + 2 : j + 2 + _HEX[esc]], 16)))
            j += 2 + _HEX[esc]
        elif re.fullmatch(r"[0-7]{3}", s[j + 1 : j + 4]):
            out.append(chr(int(s[j + 1 : j + 4], 8)))
            j += 4
        else:
            raise _bad(selector, f"unknown escape {s[j : j + 2]!r} in a quoted value")
    raise _bad(selector, "a quoted value is not closed")


def promql_string(value: str) -> str:
    """`value` as a PromQL double-quoted string: backslash, quote and every control character escaped."""
    if re.search("[\ud800-\udfff]", value):
        raise UsageError(f"{value!r} holds a lone surrogate: not text Prometheus can match")
    out = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", lambda m: f"\\u{ord(m.group()):04x}", out) + '"'


def parse_matchers(selector: str | None) -> list[tuple[str, str, str]]:
    """A selector's label matchers as (label, operator, value), read as Prometheus' lexer reads them, so
    nothing in a value (a backslash before a backtick, a quote, a brace) can end it early and add PromQL
    of its own. `{…}` braces are optional; a value left unquoted (`job=vllm`) is taken as a string."""
    s = (selector or "").strip()
    if s.startswith("{"):
        if not s.endswith("}"):
            raise _bad(selector, "no closing brace")
        s = s[1:-1]
    out: list[tuple[str, str, str]] = []
    i = _skip(s, 0)
    while i < len(s):
        if s[i] in "\"'`":
            name, i = _string(s, i, selector)
        elif m := _NAME.match(s, i):
            name, i = m.group(), m.end()
        else:
            raise _bad(selector, f"not a label name at {s[i : i + 20]!r}")
        i = _skip(s, i)
        op = next((o for o in _OPS if s.startswith(o, i)), None)
        if op is None:
            raise _bad(selector, f"{name!r} needs a match operator (=, !=, =~ or !~) and a value")
        i = _skip(s, i + len(op))
        if i < len(s) and s[i] in "\"'`":
            value, i = _string(s, i, selector)
        elif m := _BARE.match(s, i):
            value, i = m.group(), m.end()
        else:
            raise _bad(selector, f"no value after {name}{op}")
        if name == "__name__":
            raise UsageError("--selector must not match __name__: the metric names are chosen by dflash-doctor")
        out.append((name, op, value))
        i = _skip(s, i)
        if i < len(s):
            if s[i] != ",":
                raise _bad(selector, f"expected ',' between matchers at {s[i : i + 20]!r}")
            i = _skip(s, i + 1)
    return out


def matchers_text(matchers: list[tuple[str, str, str]]) -> str:
    """Matchers as PromQL (`job="vllm", ns=~"p.*"`), each value re-quoted by promql_string."""
    return ", ".join(f"{n if _NAME.fullmatch(n) else promql_string(n)}{op}{promql_string(v)}" for n, op, v in matchers)


def selector_matchers(selector: str | None) -> str:
    """The matchers inside a selector's braces, re-written from what they mean ('{job="vllm"}', 'job="vllm"'
    and 'job=vllm' -> 'job="vllm"'): what goes into PromQL is built here, never the user's text."""
    return matchers_text(parse_matchers(selector))


def label_selector(labels: dict[str, str]) -> str:
    """`{k="v", …}` selecting one engine by its label values (values from Prometheus: quoted here)."""
    return "{" + matchers_text([(k, "=", v) for k, v in labels.items() if v]) + "}"


def series_expr(s: Series, matchers: str, by: tuple[str, ...], seconds: float) -> str:
    window = promql_duration(seconds * s.window_factor)
    if s.alt:  # one selector for both names (a server exposes one of them; the sum is over label sets)
        name = f'__name__=~"{re.escape(s.metric)}|{re.escape(s.alt)}"'
        sel = "{" + ", ".join(x for x in (name, matchers) if x) + "}"
    else:
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
