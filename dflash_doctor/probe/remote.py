"""Run the probe on another host with that host's own Python, torch, GPUs and cached weights.

Nothing is installed or written there: the probe's modules travel over stdin (zlib-compressed JSON of
module sources) and a small bootstrap passed to `python -c` imports them from memory. The prompt rows
travel too (long-context bodies already expanded), and the result comes back on stdout as one marked
JSON line; progress lines arrive on stderr.
"""

from __future__ import annotations

import json
import re
import sys
import zlib
from pathlib import Path

from ..errors import DoctorError, ExitCode
from ..redact import redact_text
from .runner import run_probe

MARKER = "DFLASH-DOCTOR-PROBE-RESULT "
PACKAGE = Path(__file__).resolve().parents[1]
MODULES = (
    "__init__",
    "errors",
    "model_ref",
    "redact",
    "safeio",
    "probe/__init__",
    "probe/config",
    "probe/drafter",
    "probe/engine",
    "probe/kernels",
    "probe/layer_offset",
    "probe/prompts",
    "probe/runner",
    "probe/target",
    "probe/remote",
)

# Kept short and free of quotes that shlex would have to escape heavily; it only installs an importer.
BOOTSTRAP = r"""
import sys, json, zlib, importlib.abc, importlib.util
P = json.loads(zlib.decompress(sys.stdin.buffer.read()).decode())
class Mem(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name in P["modules"]:
            return importlib.util.spec_from_loader(name, self, is_package=P["modules"][name][1])
    def create_module(self, spec):
        return None
    def exec_module(self, mod):
        src, pkg = P["modules"][mod.__name__]
        mod.__file__ = "<dflash-doctor>/" + mod.__name__.replace(".", "/") + ".py"
        if pkg:
            mod.__path__ = []
        exec(compile(src, mod.__file__, "exec"), mod.__dict__)
sys.meta_path.insert(0, Mem())
from dflash_doctor.probe.remote import remote_main
sys.exit(remote_main(P["job"]))
"""


def module_sources() -> dict[str, tuple[str, bool]]:
    mods = {}
    for rel in MODULES:
        f = PACKAGE / f"{rel}.py"
        parts = rel.split("/")
        is_pkg = parts[-1] == "__init__"
        name = ".".join(["dflash_doctor", *parts[:-1]] if is_pkg else ["dflash_doctor", *parts])
        mods[name] = (f.read_text(encoding="utf-8"), is_pkg)
    return mods


def payload(job: dict) -> bytes:
    return zlib.compress(json.dumps({"modules": module_sources(), "job": job}).encode(), 6)


def remote_main(job: dict) -> int:
    """Runs on the host: the probe, then one marked JSON line on stdout."""

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    try:
        result = run_probe(progress=progress, **job)
    except DoctorError as exc:
        print(
            MARKER + json.dumps({"error": exc.message, "hint": exc.hint, "exit_code": int(exc.exit_code)}), flush=True
        )
        return 0
    print(MARKER + json.dumps(result), flush=True)
    return 0


_PROGRESS = re.compile(r"^[^\n]{1,120}: prompt \d+/\d+\b")


def _relay_progress(progress):
    """A stderr listener that passes the probe's own progress lines to `progress`, whole and redacted; anything
    else the host prints (warnings, a traceback) stays in the result and is summarised on failure."""
    pending = bytearray()

    def on_stderr(chunk: bytes) -> None:
        pending.extend(chunk)
        while b"\n" in pending:
            line, _, rest = bytes(pending).partition(b"\n")
            pending[:] = rest
            text = line.decode("utf-8", "replace").strip()
            if _PROGRESS.match(text):
                progress(redact_text(text))

    return on_stderr


def run_remote_probe(host, job: dict, python: str = "python3", timeout: float = 3600.0, progress=None) -> dict:
    """Ship the probe to `host`, run it with the host's `python`, return its result dict.

    `progress(line)` receives the probe's progress lines as they arrive over the connection."""
    on_stderr = _relay_progress(progress) if progress is not None else None
    res = host.run(
        [python, "-c", BOOTSTRAP], timeout=timeout, max_bytes=64 << 20, stdin=payload(job), on_stderr=on_stderr
    )
    line = next((ln for ln in reversed(res.text().splitlines()) if ln.startswith(MARKER)), None)
    if line is None:
        tail = redact_text(
            res.stderr.decode("utf-8", "replace").strip().splitlines()[-1:][0]
            if res.stderr.strip()
            else (res.error or f"exit status {res.rc}")
        )
        hint = None
        if "No module named 'torch'" in tail or "No module named 'transformers'" in tail:
            hint = f"install torch and transformers for {python} on {host.name}, or pass --remote-python"
        raise DoctorError(
            f"the probe on {host.name} returned no result: {tail}", hint=hint, exit_code=ExitCode.NOT_CHECKED
        )
    try:
        body = json.loads(line[len(MARKER) :])
    except (ValueError, RecursionError):  # not JSON, 5000-digit numbers, absurd nesting
        raise DoctorError(f"the probe on {host.name} returned a malformed result (not JSON)") from None
    if isinstance(body, dict) and "error" in body:
        # What the host says is a claim: its exit code is ours to choose (2 or 3, never 0 or 99).
        code = body.get("exit_code")
        code = ExitCode.USAGE if code == int(ExitCode.USAGE) and not isinstance(code, bool) else ExitCode.NOT_CHECKED
        hint = body.get("hint")
        raise DoctorError(
            f"on {host.name}: {str(body['error'])[:2000]}", hint=str(hint)[:2000] if hint else None, exit_code=code
        )
    problem = result_problem(body)
    if problem:
        raise DoctorError(f"the probe on {host.name} returned a malformed result ({problem})")
    body["host"] = host.name
    return body


# What a probe result must hold for the report to be written from it: key -> type(s).
_RESULT: dict[str, type | tuple[type, ...]] = {
    "schema": str,
    "target": str,
    "drafter": str,
    "device": str,
    "dtype": str,
    "block_size": int,
    "max_new_tokens": int,
    "decoding": str,
    "end_rule": dict,
    "prompts": dict,
    "taps": dict,
    "acceptance": dict,
    "lossless": (bool, type(None)),
    "mismatches": list,
    "ablations": list,
}
_NESTED: dict[str, dict[str, type | tuple[type, ...]]] = {
    "end_rule": {"description": str},
    "prompts": {"count": int, "min_length": int, "max_length": int},
    "taps": {"target_layer_ids": list, "hf_hidden_state_indices": list},
    "acceptance": {
        "mean_acceptance_length": (int, float, type(None)),
        "per_position": list,
        "histogram": dict,
        "steps": int,
    },
}


def result_problem(body) -> str | None:
    """Why `body` is not a probe result this version can report, or None."""
    if not isinstance(body, dict):
        return f"a JSON {type(body).__name__}, not an object"
    for key, typ in _RESULT.items():
        if not isinstance(body.get(key), typ) or (typ is int and isinstance(body.get(key), bool)):
            return f"'{key}' is missing or not a {getattr(typ, '__name__', 'value of the right type')}"
    if body["schema"] != "dflash-doctor/probe@1":
        return f"schema {body['schema'][:60]!r}, expected dflash-doctor/probe@1"
    for key, fields in _NESTED.items():
        for sub, typ in fields.items():
            if not isinstance(body[key].get(sub), typ):
                return f"'{key}.{sub}' is missing or of the wrong type"
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in body["acceptance"]["per_position"]):
        return "'acceptance.per_position' holds something other than numbers"
    return None
