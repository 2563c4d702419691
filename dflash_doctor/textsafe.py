"""Untrusted text (log lines, config values, remote output) must never control the terminal.

`plain` strips ANSI/OSC escape sequences, redacts secrets, and shows C0/C1 controls and bidi
overrides as escapes; renderers then hand the result to rich as `Text` (never as markup), so `[red]`
in a log line prints as `[red]`. Redaction comes before any escaping, wrapping or truncation, which
could otherwise cut a secret into pieces the redactor no longer recognises.
"""

from __future__ import annotations

import re

_ANSI = re.compile(
    r"""
    \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?   # OSC ... BEL / ST
  | \x1b[P^_X][^\x1b]*(?:\x1b\\)?         # DCS / PM / APC / SOS strings
  | \x1b\[[0-?]*[ -/]*[@-~]              # CSI
  | \x1b[@-Z\\-_]                        # two-byte escapes
  | \x9b[0-?]*[ -/]*[@-~]                # 8-bit CSI
    """,
    re.VERBOSE,
)
# C0 controls except tab/newline, DEL, C1 controls, bidi embeddings/overrides/isolates.
# Lone surrogates (a JSON "\ud800" in a config) too: they cannot be written to a UTF-8 stream at all;
# and U+FFFE/U+FFFF, which no XML document (JUnit) may contain.
_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\ud800-\udfff\ufffe\uffff]"
)


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def plain(text: object, max_len: int | None = None) -> str:
    """Make untrusted text inert for a terminal and safe to show: no escapes, no control or bidi
    characters, no secrets."""
    from .redact import redact_text  # here, not at import: its rules cost ~10 ms to compile, and --help needs none

    s = text if isinstance(text, str) else str(text)
    s = _CONTROLS.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
        redact_text(_ANSI.sub("", s)),
    )
    if max_len is not None and len(s) > max_len:
        s = s[: max_len - 1] + "…"
    return s


# Markdown's inline metacharacters, and & (an entity such as &#x202e; renders as the character it names).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def markdown_text(text: object) -> str:
    """Untrusted text (a Prometheus label, a log-derived string) as inert Markdown on one line: no HTML
    (`<img …>`), no link (`](javascript:…)`), no emphasis (`**b**`), no code span, no table cell split."""
    return _MD_SPECIAL.sub(r"\\\1", plain(text).replace("\r", " ").replace("\n", " "))


class Placeholder(str):
    """A word of a suggested command that the user replaces (TARGET, ssh://USER@HOST[:PORT], DIR|REPO_ID):
    written by us, shown as it is."""


def command(*words: object) -> str:
    """A command for a user to paste into a shell: every word but our own placeholders `shlex.quote`d, so
    no value taken from evidence (a Prometheus label, a model name out of a log, a path, a host) can run
    anything when pasted (`m'$(touch x)'x` stays one literal word). Every printed command is built here."""
    import shlex

    return " ".join(w if isinstance(w, Placeholder) else shlex.quote(str(w)) for w in words)
