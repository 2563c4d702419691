"""The versioned JSON report (schema dflash-doctor/report@1)."""

from __future__ import annotations

import json
import re

# json.dumps escapes C0 controls but, with ensure_ascii=False, passes DEL, C1 controls (\x9b is a
# CSI), bidi overrides and lone surrogates through raw. Escaping them as \uXXXX keeps the data
# identical for a JSON reader while `cat report.json` can no longer drive the terminal, and the
# text stays encodable as UTF-8. They can only occur inside strings, so the substitution is safe.
_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


def dumps_safe(doc) -> str:
    """JSON text for any document we print (reports, fleets, gate results): terminal-inert, UTF-8-safe."""
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render_json(report) -> str:
    return dumps_safe(report.to_dict())
