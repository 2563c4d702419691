"""The one serialiser: payloads (dataclasses, enums, tuples, numpy scalars) to JSON-ready structures.

A dataclass becomes a dict of its fields in declaration order. What a report needs beyond that is
declared on the class, not written out in a `to_dict`:

    confidence: float = field(metadata=serial(digits=3))   # rounded (NaN and ±inf become null anyway)
    check_id: str = field(metadata=serial(name="check"))  # the key the report has always used
    raw_argv: tuple = field(default=(), metadata=serial(omit=True))  # never serialised
    # derived values: JSON key -> (attribute, the field they precede; None: after the last)
    JSON_PROPERTIES: ClassVar = {"sufficient_sample": ("sufficient", "min_drafts")}

A class whose JSON is a document of its own shape (a report with its schema line, a fleet) keeps a
`to_dict`; the serialiser calls it.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any, NamedTuple


class JsonField(NamedTuple):
    name: str | None = None
    digits: int | None = None
    omit: bool = False


def serial(*, name: str | None = None, digits: int | None = None, omit: bool = False) -> dict[str, JsonField]:
    """Field metadata for the serialiser: `field(metadata=serial(digits=4))`."""
    return {"json": JsonField(name, digits, omit)}


_PLAIN = JsonField()


def to_jsonable(value: Any, digits: int | None = None) -> Any:
    """Turn payloads (dataclasses, enums, tuples, numpy scalars) into JSON-ready structures; `digits` rounds
    every float inside `value`."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return value if digits is None else round(value, digits)
    if isinstance(value, enum.Enum):
        return value.value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_jsonable(to_dict())  # again: a to_dict may hold inf/NaN or tuples
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return fields_to_json(value)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v, digits) for v in value]
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        return to_jsonable(item(), digits)
    return str(value)


def fields_to_json(obj: Any) -> dict[str, Any]:
    """A dataclass instance as a dict, following its fields' `serial(...)` metadata and JSON_PROPERTIES."""
    derived: Mapping[str, tuple[str, str | None]] = getattr(type(obj), "JSON_PROPERTIES", {})
    before: dict[str | None, list[tuple[str, str]]] = {}
    for key, (attr, anchor) in derived.items():
        before.setdefault(anchor, []).append((key, attr))
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        for key, attr in before.get(f.name, ()):
            out[key] = to_jsonable(getattr(obj, attr))
        spec = f.metadata.get("json", _PLAIN)
        if not spec.omit:
            out[spec.name or f.name] = to_jsonable(getattr(obj, f.name), spec.digits)
    for key, attr in before.get(None, ()):
        out[key] = to_jsonable(getattr(obj, attr))
    return out
