"""Secret redaction. Every renderer passes its output through `redact_text`; collectors redact
structured values (argument dicts, environments) with `redact_mapping` as they gather them."""

from __future__ import annotations

import re
from typing import Any, Mapping

REDACTED = "***REDACTED***"

# Keys whose values are secrets wherever they appear (args dicts, env, JSON configs, CLI flags).
_SECRET_KEY = re.compile(
    r"(?i)(api[_-]?key|hf[_-]?token|huggingface[_-]?hub[_-]?token|access[_-]?token|auth[_-]?token|"
    r"token|secret|password|passwd|credential|private[_-]?key|aws_secret_access_key|authorization)"
)

# A key whose value is a secret. Matches start only where a key can start ((?<![\w.-])) and the key is at
# most 64 + a few characters, so a long run of word characters costs linear time with a small constant
# (a 16 KB base64 line took 13 s before; a 4 MB one now takes ~0.1 s per pattern).
_KEY = r"(?<![\w.-])[\w.-]{0,64}(?:(?:api|access|private|secret|auth)[_-]?key|token|secret|password|passwd|credentials?)(?![\w-])"
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # 'api_key': ['k1', 'k2'] -> every element, not only the first (also a JSON list over several lines).
    (re.compile(r"(?i)(?P<pre>" + _KEY + r"""['"]?\s*[:=]\s*)\[[^\]]{0,4000}\]"""), r"\g<pre>['" + REDACTED + "']"),
    # password: "several words" -> the whole quoted value (also with JSON-escaped quotes: \"…\").
    (re.compile(r"(?i)(?P<pre>" + _KEY + r"""['"]?\s*[:=]\s*)(?P<q>\\?['"])(?:\\.|[^'"\\\n]){1,4000}?(?P=q)"""),
     r"\g<pre>\g<q>" + REDACTED + r"\g<q>"),
    # key=value / key: value / 'key': 'value' / --key value / --key=value.
    # "token" must be singular and end the key: max_num_batched_tokens=8192 or num_spec_tokens=15 are counts.
    (re.compile(
        r"""(?ix)
        (?P<pre>(?:(?<![\w.-])--[\w.-]{0,64}(?:(?:api|access|private|secret|auth)[_-]?key|token|secret|password|passwd|credentials?)(?![\w-])(?:\s*=\s*|\s+)
                 |""" + _KEY + r"""['"]?\s*[:=]\s*)
           (?:\[\s*)?['"]?)
        (?P<val>[^\s'",}\])]{3,})"""),
     r"\g<pre>" + REDACTED),
    # Authorization: Basic/Digest <credentials> (Bearer is handled below, wherever it appears).
    (re.compile(r"""(?i)(authorization['"]?\s*[:=]\s*['"]?(?:basic|digest|token)\s+)[A-Za-z0-9._~+/=-]{6,}"""),
     r"\1" + REDACTED),
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1" + REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}\b"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), REDACTED),
    (re.compile(r"\bxox[abpr]-[A-Za-z0-9-]{10,}\b"), REDACTED),
    # user:password@ in URLs
    (re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,30}://[^/\s:@]{1,256}:)[^@\s/]{1,256}@"), r"\1" + REDACTED + "@"),
]


_KEY_NAME = re.compile(r"[\w.-]+")
_PLAIN_LITERALS = {"null", "none", "true", "false"}


def _secret_name(pre: str) -> bool:
    names = _KEY_NAME.findall(pre)
    return is_secret_key(names[0].lstrip("-").replace("-", "_")) if names else False


def _list_value(m: re.Match) -> str:
    # Keep the list's own quote style so a JSON document stays JSON.
    if not _secret_name(m.group("pre")):
        return m.group(0)
    q = '"' if '"' in m.group(0)[len(m.group("pre")):] else "'"
    return f"{m.group('pre')}[{q}{REDACTED}{q}]"


def _quoted_value(m: re.Match) -> str:
    if not _secret_name(m.group("pre")):
        return m.group(0)
    return f"{m.group('pre')}{m.group('q')}{REDACTED}{m.group('q')}"


def _key_value(m: re.Match) -> str:
    # `"num_speculative_tokens": null` or `max_tokens=1024` are not secrets, and replacing a JSON
    # null or number with an unquoted marker would break the JSON document being rendered.
    if not _secret_name(m.group("pre")) or m.group("val").lower() in _PLAIN_LITERALS:
        return m.group(0)
    return m.group("pre") + REDACTED


_CALLBACKS = (_list_value, _quoted_value, _key_value)  # the first three entries of _PATTERNS

# The three key-based patterns cost ~0.4 s per MB each when run over a whole text: at every word start
# they try 64 characters of key. None can match unless one of these words is present (a lower-cased
# `in` test is ~100x cheaper), and each match holds a key word that ends a run of word characters, so
# they run only in windows around those (see _windowed_sub). Every other pattern needs a literal (its
# gate) first.
_KEY_WORDS = ("key", "token", "secret", "passw", "credential")
_KEY_ENDINGS = ("key", "token", "secret", "password", "passwd", "credential", "credentials")
_WORD_RUN = re.compile(r"[\w-]*")
# From the end of a key word to where its value starts: an optional quote, the separator, a list's `[`
# and all the whitespace around them (a key pattern's pre-value part always takes all of it, since a
# value starts with a non-space). A value then ends before the next newline (quoted values and plain
# runs never hold a raw newline), or at the first `]` of a list.
_SEP = re.compile(r"""['"]?\s*(?:[:=]|\s)?\s*(?:\[\s*)?""")
_BEFORE_KEY = 200  # a match starts at most `--` + 64 key characters before its key word (22 characters at most)
_LIST_MAX = 4003  # `[`, 4000 characters, `]`
_GATES: tuple[tuple[str, ...] | None, ...] = (
    None, None, None, ("authorization",), ("bearer",), ("hf_",), ("sk-",), ("akia", "asia"),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ("xoxa-", "xoxb-", "xoxp-", "xoxr-"), ("://",))


def _key_ends(text: str) -> list[int] | None:
    """Where a key word can end: the end of each run of word characters that holds one of _KEY_WORDS
    and ends like a key (a key pattern's key word is followed by neither a word character nor '-').
    None when lower-casing changes the text's length (positions would not carry over)."""
    low = text.lower()
    if len(low) != len(text):
        return None
    ends = set()
    for w in _KEY_WORDS:
        p = low.find(w)
        while p >= 0:
            ke = _WORD_RUN.match(text, p).end()
            if low.endswith(_KEY_ENDINGS, 0, ke):
                ends.add(ke)
            p = low.find(w, max(ke, p + 1))
    return sorted(ends)


def _windowed_sub(pattern: re.Pattern[str], repl, text: str) -> str:
    """`pattern.sub(repl, text)` for a key pattern, run only where a match can be: windows around the
    key words, merged where they touch, searched in place (so look-behinds see the text before)."""
    ends = _key_ends(text)
    if ends is None:
        return pattern.sub(repl, text)
    windows: list[list[int]] = []
    for ke in ends:
        s = max(0, ke - _BEFORE_KEY)
        v = _SEP.match(text, ke).end()
        nl = text.find("\n", v)
        e = max(len(text) if nl < 0 else nl, text.find("]", v, v + _LIST_MAX)) + 2
        if windows and s <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], e)
        else:
            windows.append([s, e])
    if not windows:
        return text
    out, last = [], 0
    for s, e in windows:
        for mm in pattern.finditer(text, max(s, last), min(e, len(text))):
            out.append(text[last:mm.start()])
            out.append(repl(mm))
            last = mm.end()
    out.append(text[last:])
    return "".join(out)


def redact_text(text: str) -> str:
    low = text.lower()
    keys = any(w in low for w in _KEY_WORDS)
    for i, (pattern, repl) in enumerate(_PATTERNS):
        gate = _GATES[i]
        if gate is None:
            if keys:
                text = _windowed_sub(pattern, _CALLBACKS[i], text)
        elif any(g in low for g in gate):  # a replacement adds no gate literal: `low` stays a superset
            text = pattern.sub(repl, text)
    return text


def is_secret_key(key: str) -> bool:
    k = key.lower()
    if k in {"num_speculative_tokens", "max_num_batched_tokens", "max_tokens", "tokenizer", "tokenizer_mode",
             "skip_tokenizer_init", "max_model_len", "tokens", "speculative_num_draft_tokens"}:
        return False
    if k.endswith("_tokens") or "tokenizer" in k:
        return False
    return bool(_SECRET_KEY.search(k))


def redact_value(key: str, value: Any) -> Any:
    if is_secret_key(key) and value not in (None, "", False):
        return REDACTED
    return redact_any(value)


def redact_mapping(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: redact_value(str(k), v) for k, v in mapping.items()}


def redact_any(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return redact_mapping(value)
    if isinstance(value, (list, tuple)):
        return type(value)(redact_any(v) for v in value)
    return value
