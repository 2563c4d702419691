"""The one serialiser: payloads (dataclasses, enums, tuples, numpy scalars) to JSON-ready structures."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any


def to_jsonable(value: Any) -> Any:
    """Turn payloads (dataclasses, enums, tuples, numpy scalars) into JSON-ready structures."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return value
    if isinstance(value, enum.Enum):
        return value.value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_jsonable(to_dict())  # again: a to_dict may hold inf/NaN or tuples (RopeFacts did)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        return to_jsonable(item())
    return str(value)
