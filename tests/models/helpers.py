"""Builders for the model tests: checkpoint dirs in tmp, safetensors headers, an HF cache layout."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path


def write_config(d: Path, cfg: object, name: str = "config.json") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(cfg if isinstance(cfg, str) else json.dumps(cfg))
    return p


def safetensors_bytes(tensors: dict[str, tuple[str, list[int]]], data: bool = True, cut: int = 0) -> bytes:
    size = {"F32": 4, "BF16": 2, "I64": 8, "BOOL": 1}
    meta, off = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = size[dtype]
        for s in shape:
            n *= s
        meta[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    js = json.dumps(meta).encode()
    body = bytes(off) if data else b""
    if cut:
        body = body[:-cut]
    return struct.pack("<Q", len(js)) + js + body


def hf_cache_repo(cache: Path, repo_id: str, files: dict[str, bytes], revision: str = "0" * 40) -> Path:
    """Lay out `repo_id` the way huggingface_hub stores downloads: blobs, refs/main, snapshot links."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(revision)
    snap = repo / "snapshots" / revision
    snap.mkdir(parents=True, exist_ok=True)
    (repo / "blobs").mkdir(exist_ok=True)
    for name, content in files.items():
        digest = hashlib.sha256(content).hexdigest()
        (repo / "blobs" / digest).write_bytes(content)
        (snap / name).symlink_to(Path("../../blobs") / digest)
    return snap
