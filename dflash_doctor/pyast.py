"""Python text parsed into ASTs (engine source, argument reprs in logs, launch commands), one parse at a time.

CPython 3.11 keeps the AST constructor's recursion depth per interpreter, not per thread: two threads
building ASTs at once (a fleet's bundles checked side by side) can fail with "SystemError: AST constructor
recursion depth mismatch" (python/cpython gh-106905). Every parse in the package goes through this lock.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    with _LOCK:
        return ast.parse(source, filename=filename, mode=mode)


def literal_eval(text: str) -> Any:
    """ast.literal_eval of a string (literals only, never code)."""
    return ast.literal_eval(parse(text.lstrip(" \t"), mode="eval"))
