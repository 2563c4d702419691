"""What a model reference names: a repo id or a path, and a revision when an HF cache path carries one.

Used by the report's names and by the probe, whose modules travel to a GPU host on their own
(probe/remote.py ships this module with them): standard library only.
"""

from __future__ import annotations

import re

_HF_CACHE_PATH = re.compile(r"models--(?P<org>[^/\\]+?)--(?P<name>[^/\\]+)[/\\]snapshots[/\\](?P<rev>[0-9a-f]{7,64})")


def model_identity(text: str | None) -> tuple[str | None, str | None]:
    """(repo id or path, revision) of a model reference: an HF cache path names its repo and snapshot."""
    if not text:
        return None, None
    m = _HF_CACHE_PATH.search(str(text))
    if m:
        return f"{m['org']}/{m['name']}", m["rev"]
    t = str(text).rstrip("/")
    if t.endswith("config.json"):
        t = t[: -len("config.json")].rstrip("/")
    return t or None, None
