"""Is a text an inference server's log at all? A file with no metrics line and no startup line is either a
server log whose speculative decoding never ran (a finding: `launch:no-spec-lines`) or something else (/etc/passwd,
a README, a binary): the second is "not an engine log", a one-line error, not a diagnosis.

Read from the head of the file: a line with an engine's own logger header (vLLM's, SGLang's) settles it;
otherwise a log is lines that start with a logger's prefix (a timestamp, a level, a
bracketed logger or process tag, a compose/journald wrapper), and a serving engine's log names what it serves
(engines, models, GPUs, requests, tokens). Both must hold for a text to pass as an engine log.
"""

from __future__ import annotations

import re

from .formats._common import SGLANG_HEADER, VLLM_HEADER
from .metrics_text import looks_like_exposition

HEAD_BYTES = 64 * 1024
# A logger's prefix at the start of a line: ISO or vLLM MM-DD dates, clock times, levels, a bracketed tag
# ([2025-10-22 …], [metrics.py:101], [atom 10:00:00], [TensorRT-LLM][INFO]), a process tag, a container wrapper.
_PREFIX = re.compile(
    r"^\s*(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\d\d-\d\d \d\d:\d\d|\d\d:\d\d:\d\d|(?:INFO|WARNING|WARN|ERROR|DEBUG|TRACE)\b"
    r"|\[[^\]\n]{1,80}\]|\([\w.-]+ pid=\d+\)|[\w.-]+\s+\|\s|[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d|[IWEDF]\d{4} )"
)
# Words a serving engine's log uses (startup, scheduler, metrics lines of vLLM, SGLang, TensorRT-LLM, llama.cpp,
# ATOM, fastllm): any of them in the head.
_ENGINE_WORDS = re.compile(
    r"vllm|sglang|tensorrt|trtllm|llama|ggml|atom|fastllm|speculative|spec_decode|SpecDecoding|draft|"
    r"engine|scheduler|decode|prefill|tokens?/s|throughput|model|cuda|rocm|gpu|kv cache|request|uvicorn",
    re.IGNORECASE,
)
# Share of non-empty head lines that must carry a logger prefix.
MIN_PREFIXED = 0.3


def looks_like_engine_log(head: bytes) -> bool:
    """Whether the head of a file reads as an inference server's log (see the module doc)."""
    if b"\x00" in head[:4096]:
        return False
    text = head.decode("utf-8", errors="replace")
    if text.count("\ufffd") > max(8, len(text) // 50):
        return False  # not text
    lines = [x for x in text.splitlines() if x.strip()]
    if not lines:
        return False
    if any(VLLM_HEADER.search(x) or SGLANG_HEADER.match(x) for x in lines[:200]):
        return True  # an engine's own logger header: vLLM's `INFO 05-14 09:00:00 [file.py:1]`, SGLang's `[date TPn]`
    prefixed = sum(1 for x in lines if _PREFIX.match(x))
    return prefixed >= MIN_PREFIXED * len(lines) and _ENGINE_WORDS.search(text) is not None


def _head(path: str) -> bytes | None:
    """A file's first HEAD_BYTES; None when it cannot be read here (stdin, a compressed stream)."""
    if path == "-" or path.endswith((".gz", ".bz2", ".xz", ".zst")):
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError:
        return None


def sniff_file(path: str) -> bool | None:
    """`looks_like_engine_log` of a file's head; None when it cannot be read here (stdin, a compressed stream)."""
    head = _head(path)
    return None if head is None else looks_like_engine_log(head)


def is_scrape_file(path: str) -> bool:
    """Whether a file given as a log is a pasted /metrics scrape (`metrics_text.looks_like_exposition` of its
    head): it is then read as --metrics."""
    head = _head(path)
    return head is not None and looks_like_exposition(head.decode("utf-8", "replace"))
