"""The privacy filter shared by live collection and bundles: the relevant environment only (secrets by
name, never their values), argv and text with secrets redacted, a weights file's header and nothing else."""

from __future__ import annotations

import json
import re

from ...parse.launch import redact_argv
from ...redact import REDACTED, is_secret_key, redact_text
from .protocol import encode_batch, parse_batch
from .scripts import MODELS, READ_MANY, SURVEY

# Environment variables that change spec-decode behaviour or say where models live.
RELEVANT_ENV = (
    "VLLM_USE_V2_MODEL_RUNNER",
    "VLLM_LOG_STATS_INTERVAL",
    "VLLM_ATTENTION_BACKEND",
    "VLLM_USE_V1",
    "VLLM_LOGGING_LEVEL",
    "VLLM_CONFIGURE_LOGGING",
    "HF_HOME",
    "HF_HUB_CACHE",
    "HUGGINGFACE_HUB_CACHE",
    "TRANSFORMERS_CACHE",
    "HF_HUB_OFFLINE",
    "CUDA_VISIBLE_DEVICES",
    "SGLANG_ENABLE_SPEC_V2",
)

_PROC_FILE = re.compile(r"^/proc/\d+/(cmdline|environ)$")


def filter_environ(raw: bytes) -> tuple[dict[str, str], tuple[str, ...]]:
    env, secrets = {}, []
    for item in raw.split(b"\0"):
        k, sep, v = item.decode("utf-8", "replace").partition("=")
        if not sep:
            continue
        if is_secret_key(k):
            secrets.append(k)
        elif k in RELEVANT_ENV or k in ("HOME", "PYTHONPATH", "PATH"):
            env[k] = redact_text(v)
    return env, tuple(sorted(secrets))


def safetensors_header_only(data: bytes) -> bytes:
    """What a bundle keeps of a weights file: its header (8-byte length + JSON text) and nothing else;
    bytes that do not open like a safetensors header (a link to a key file, say) are not kept at all."""
    if len(data) < 9 or data[8:9] != b"{":
        return b""
    n = int.from_bytes(data[:8], "little")
    if n > 100_000_000:
        return b""
    head = data[: 8 + n]
    try:
        head[8:].decode("utf-8")
    except UnicodeDecodeError:
        if len(head) == 8 + n:
            return b""  # a whole header that is not text is not a header
    return head


def _sanitize_file(path: str, data: bytes) -> bytes:
    m = _PROC_FILE.match(path)
    if m and m.group(1) == "environ":
        env, secrets = filter_environ(data)
        items = [f"{k}={v}" for k, v in env.items()] + [f"{k}={REDACTED}" for k in secrets]
        return "\0".join(items).encode() + (b"\0" if items else b"")
    if m and m.group(1) == "cmdline":
        words = data.decode("utf-8", "replace").rstrip("\0").split("\0")
        return "\0".join(redact_argv(words)).encode() + b"\0"
    if path.endswith(".safetensors"):
        return safetensors_header_only(data)
    return redact_text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def sanitize(op: str, key: str, data: bytes) -> bytes:
    """What a bundle may keep: relevant environment only, argv and text with secrets redacted."""
    if op == "read_file":
        return _sanitize_file(key, data)
    if op == "run":
        try:
            argv = json.loads(key)
        except ValueError:
            argv = []
        if len(argv) > 2 and argv[0] == "sh" and argv[2] in (READ_MANY, SURVEY, MODELS):
            b = parse_batch(data)
            b.files = {p: (_sanitize_file(p, v) if isinstance(v, bytes) else v) for p, v in b.files.items()}
            return encode_batch(b)
    return redact_text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
