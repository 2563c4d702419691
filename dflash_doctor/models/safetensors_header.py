"""Safetensors headers without loading a tensor: 8-byte little-endian length, then a JSON header.

Only the header is read (capped), so a hostile or corrupt file cannot make us allocate gigabytes.
The data section's expected length follows from the largest `data_offsets` end; a file shorter
than that is an interrupted download. Pickle-based weights (`.bin`, `.pt`) are listed, never opened.
"""

from __future__ import annotations

import json
import posixpath
import struct
from typing import Any

from ..evidence.model_facts import ShardFacts, TensorInfo, WeightFacts
from .file_access import FileAccess, describe_os_error

# Real drafter/target shard headers are tens to hundreds of KiB; 64 MiB is generous and bounded.
MAX_HEADER_BYTES = 64 << 20
MAX_INDEX_BYTES = 16 << 20
MAX_TENSORS = 200_000

DTYPE_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "U16": 2,
    "U32": 4,
    "U64": 8,
    "F8_E8M0": 1,
    "F4": 1,
}


class HeaderError(Exception):
    """The file is not a usable safetensors file (one-line reason)."""


def parse_header(blob: bytes) -> dict[str, Any]:
    """Parse a header JSON blob into a dict, rejecting non-objects and non-JSON."""
    try:
        obj = json.loads(blob.decode("utf-8"))
    except UnicodeDecodeError:
        raise HeaderError("header is not UTF-8 text (not a safetensors file?)") from None
    except json.JSONDecodeError as exc:
        raise HeaderError(f"header is not JSON ({exc.msg} at byte {exc.pos})") from None
    except (ValueError, RecursionError) as exc:  # a 5000-digit number, nesting 100k deep
        raise HeaderError(f"header is not usable JSON ({str(exc)[:80]})") from None
    if not isinstance(obj, dict):
        raise HeaderError(f"header is a JSON {type(obj).__name__}, not an object")
    return obj


def read_shard(files: FileAccess, path: str) -> tuple[ShardFacts, dict[str, TensorInfo]]:
    name = posixpath.basename(path)
    try:
        actual = files.size(path)
        head = files.read(path, 8)
    except OSError as exc:
        return ShardFacts(name, error=f"cannot read: {describe_os_error(exc)}"), {}
    if len(head) < 8:
        return ShardFacts(
            name,
            actual_bytes=actual,
            truncated=True,
            error=f"file is {len(head)} bytes, shorter than the 8-byte header length",
        ), {}
    (n,) = struct.unpack("<Q", head)
    if n > MAX_HEADER_BYTES:
        return ShardFacts(
            name,
            header_bytes=n,
            actual_bytes=actual,
            error=f"header claims {n:,} bytes (limit {MAX_HEADER_BYTES:,}): corrupt or not safetensors",
        ), {}
    if 8 + n > actual:
        return ShardFacts(
            name,
            header_bytes=n,
            actual_bytes=actual,
            truncated=True,
            error=f"file is {actual:,} bytes but its header alone claims {n:,}: truncated download",
        ), {}
    try:
        blob = files.read(path, 8 + n)[8:]
        header = parse_header(blob)
    except OSError as exc:
        return ShardFacts(name, header_bytes=n, actual_bytes=actual, error=f"cannot read: {describe_os_error(exc)}"), {}
    except HeaderError as exc:
        return ShardFacts(name, header_bytes=n, actual_bytes=actual, error=str(exc)), {}
    tensors: dict[str, TensorInfo] = {}
    data_end = 0
    bad: list[str] = []
    for key, meta in header.items():
        if key == "__metadata__":
            continue
        if len(tensors) >= MAX_TENSORS:
            bad.append(f"more than {MAX_TENSORS} tensors; the rest were not read")
            break
        info = _tensor_info(meta)
        if info is None:
            bad.append(f"tensor {key[:80]!r} has a malformed entry")
            continue
        tensors[key] = info
        data_end = max(data_end, int(meta["data_offsets"][1]))
    expected = 8 + n + data_end
    truncated = actual < expected
    header_only = truncated and actual == 8 + n
    error = "; ".join(bad[:3]) or None
    if header_only:
        error = (
            f"header only: no tensor data (the header declares {data_end:,} bytes); shapes were checked, "
            f"the weights themselves are absent"
        ) + (f"; {error}" if error else "")
    elif truncated:
        error = (
            f"data section is {actual - 8 - n:,} bytes but the header declares {data_end:,}: truncated download"
        ) + (f"; {error}" if error else "")
    return ShardFacts(
        name,
        header_bytes=n,
        expected_bytes=expected,
        actual_bytes=actual,
        tensors=len(tensors),
        truncated=truncated,
        header_only=header_only,
        error=error,
    ), tensors


def _tensor_info(meta: Any) -> TensorInfo | None:
    if not isinstance(meta, dict):
        return None
    dtype, shape, offs = meta.get("dtype"), meta.get("shape"), meta.get("data_offsets")
    if not isinstance(dtype, str) or not isinstance(shape, list) or not isinstance(offs, list) or len(offs) != 2:
        return None
    if not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 40 for d in shape):
        return None
    if not all(isinstance(o, int) and not isinstance(o, bool) and 0 <= o < 1 << 50 for o in offs) or offs[1] < offs[0]:
        return None
    return TensorInfo(dtype, tuple(shape))


def read_weights(files: FileAccess, directory: str, names: list[str]) -> WeightFacts:
    """Headers of every safetensors shard in a checkpoint directory (listing already taken)."""
    pickles = tuple(n for n in names if n.endswith((".bin", ".pt", ".pth", ".pkl")))
    index_name = next((n for n in names if n.endswith(".safetensors.index.json")), None)
    problems: list[str] = []
    shard_names: list[str]
    if index_name:
        shard_names = _index_shards(files, posixpath.join(directory, index_name), problems)
        missing = [s for s in shard_names if s not in names]
        for s in missing:
            problems.append(f"{s} is listed in {index_name} but not present")
        shard_names = [s for s in shard_names if s in names]
        if not shard_names and not missing and not problems:
            shard_names = sorted(n for n in names if n.endswith(".safetensors"))
    else:
        shard_names = sorted(n for n in names if n.endswith(".safetensors"))
    if not shard_names and not problems:
        if pickles:
            return WeightFacts(
                "pickle",
                unread=pickles,
                problems=(
                    f"only pickle weights ({', '.join(pickles[:3])}); never unpickled, "
                    "so weight shapes were not checked",
                ),
            )
        return WeightFacts("none", problems=("no weight files beside the config",))
    shards: list[ShardFacts] = []
    tensors: dict[str, TensorInfo] = {}
    for s in shard_names:
        facts, ts = read_shard(files, posixpath.join(directory, s))
        shards.append(facts)
        tensors.update(ts)
        if facts.error:
            problems.append(f"{s}: {facts.error}")
    return WeightFacts(
        "safetensors",
        files=tuple(shards),
        tensors=tensors,
        index_file=index_name,
        problems=tuple(problems),
        unread=pickles,
    )


def _index_shards(files: FileAccess, path: str, problems: list[str]) -> list[str]:
    name = posixpath.basename(path)
    try:
        raw = files.read(path, MAX_INDEX_BYTES + 1)
    except OSError as exc:
        problems.append(f"{name}: cannot read: {describe_os_error(exc)}")
        return []
    if len(raw) > MAX_INDEX_BYTES:
        problems.append(f"{name}: larger than {MAX_INDEX_BYTES:,} bytes; not read")
        return []
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, absurd numbers or nesting
        problems.append(f"{name}: not valid JSON")
        return []
    wm = obj.get("weight_map") if isinstance(obj, dict) else None
    if not isinstance(wm, dict):
        problems.append(f"{name}: has no weight_map object")
        return []
    shards = sorted({v for v in wm.values() if isinstance(v, str) and "/" not in v and v not in ("", ".", "..")})
    return shards
