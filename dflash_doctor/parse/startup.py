"""What was launched, read from an engine's startup lines: engine, version, model, spec method,
drafter, k, resolved architectures, and the (redacted) argument dict.

Argument reprs are parsed with `ast` (literal_eval on each value), never `eval`.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from ..evidence.acceptance import StartupFacts
from ..redact import redact_any, redact_text

_VERSION = re.compile(
    r"vLLM API server version\s+(?P<a>[\w.+-]+)"
    r"|vLLM server version\s+(?P<b>[\w.+-]+?),?\s+serving model\s+(?P<bm>\S+)"
    r"|LLM engine \(v(?P<c>[\w.+-]+)\)"
)
# The ASCII logo (0.15+): its rows end in `version X` and `model   NAME`.
_LOGO_VERSION = re.compile(r"[█▄▀]\s*version\s+(?P<v>\d+\.\d+[\w.+-]*)\s*$")
_LOGO_MODEL = re.compile(r"[█▄▀]\s*model\s+(?P<m>\S+)\s*$")
_NON_DEFAULT = re.compile(r"non-default args:\s*(?P<d>\{.*\})\s*$")
_NAMESPACE = re.compile(r"\bargs:\s*Namespace\((?P<a>.*)\)\s*$")
_SERVER_ARGS = re.compile(r"server_args\s*=\s*(?:ServerArgs\((?P<a>.*)\)|(?P<d>\{.*\}))\s*$")
_SPEC_CONFIG = re.compile(r"SpeculativeConfig\((?P<a>[^()]*)\)")
_RESOLVED = re.compile(r"Resolved architecture:\s*(?P<a>\w+)")
_KV = re.compile(r"(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+(?:\.\d+)?|None|True|False)")


def parse_call_kwargs(inner: str) -> dict[str, Any]:
    """`a=1, b='x', …` (a Namespace/ServerArgs repr body) -> dict, literal values only.

    The whole body is parsed as a call's keyword list when it is valid Python; values that are not
    literals (objects in angle brackets, enums) are skipped. Otherwise a key=literal regex picks
    out what it can.
    """
    out: dict[str, Any] = {}
    # object reprs such as <function serve at 0x7f…> are not Python: make them None first
    inner = re.sub(r"<[^<>]*>", "None", inner)
    try:
        node = ast.parse(f"f({inner})", mode="eval")
        call = node.body
        if isinstance(call, ast.Call):
            for kw in call.keywords:
                if kw.arg is None:
                    continue
                try:
                    out[kw.arg] = ast.literal_eval(kw.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    continue
            return out
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        pass
    for key, val in _KV.findall(inner):
        try:
            out.setdefault(key, ast.literal_eval(val))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    return out


def _literal_dict(text: str) -> dict | None:
    try:
        val = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return val if isinstance(val, dict) else None


class StartupBuilder:
    def __init__(self, prev: StartupFacts | None = None):
        prev = prev or StartupFacts()
        self.f = {k: getattr(prev, k) for k in prev.__dataclass_fields__}
        self.f["args"] = dict(prev.args)
        self.f["lines"] = list(prev.lines)
        self.f["architectures"] = list(prev.architectures)

    def _keep(self, line: str) -> None:
        line = redact_text(line.strip())[:2000]
        if line not in self.f["lines"]:
            self.f["lines"].append(line)

    def _spec(self, spec: Any) -> None:
        if isinstance(spec, str):
            try:
                spec = json.loads(spec)
            except ValueError:
                return
        if not isinstance(spec, dict):
            return
        if spec.get("method"):
            self.f["method"] = str(spec["method"])
        if spec.get("model"):
            self.f["drafter"] = str(spec["model"])
        k = spec.get("num_speculative_tokens", spec.get("num_spec_tokens"))
        if isinstance(k, int) and not isinstance(k, bool):
            self.f["num_speculative_tokens"] = k

    def _vllm_args(self, args: dict) -> None:
        args = redact_any(args)
        self.f["args"].update(args)
        self.f["engine"] = self.f["engine"] or "vllm"
        model = args.get("model") or args.get("model_tag")
        if isinstance(model, str):
            self.f["model"] = model
        self._spec(args.get("speculative_config"))
        # <= 0.8.1 flags
        if isinstance(args.get("speculative_model"), str):
            self.f["drafter"] = args["speculative_model"]
        if isinstance(args.get("num_speculative_tokens"), int):
            self.f["num_speculative_tokens"] = args["num_speculative_tokens"]

    def _sglang_args(self, args: dict) -> None:
        args = redact_any(args)
        self.f["args"].update(args)
        self.f["engine"] = "sglang"
        if isinstance(args.get("model_path"), str):
            self.f["model"] = args["model_path"]
        if args.get("speculative_algorithm"):
            self.f["method"] = str(args["speculative_algorithm"]).lower()
        if isinstance(args.get("speculative_draft_model_path"), str):
            self.f["drafter"] = args["speculative_draft_model_path"]
        # SGLang's num_draft_tokens counts the verified slot too; k draft positions = num_steps
        # for chains, num_draft_tokens - 1 otherwise.
        steps, ndt = args.get("speculative_num_steps"), args.get("speculative_num_draft_tokens")
        if isinstance(ndt, int) and ndt > 1:
            self.f["num_speculative_tokens"] = ndt - 1
        elif isinstance(steps, int):
            self.f["num_speculative_tokens"] = steps

    def feed(self, line: str) -> bool:
        """Take what a startup line says; True when it said something."""
        hit = False
        m = _VERSION.search(line)
        if m:
            self.f["engine"] = "vllm"
            self.f["version"] = m["a"] or m["b"] or m["c"]
            if m["bm"]:
                self.f["model"] = m["bm"]
            hit = True
        m = _LOGO_VERSION.search(line)
        if m:
            self.f["engine"], self.f["version"], hit = "vllm", m["v"], True
        m = _LOGO_MODEL.search(line)
        if m:
            self.f["model"], hit = m["m"], True
        m = _NON_DEFAULT.search(line)
        if m:
            d = _literal_dict(m["d"])
            if d is not None:
                self._vllm_args(d)
                hit = True
        m = _NAMESPACE.search(line)
        if m:
            self._vllm_args(parse_call_kwargs(m["a"]))
            hit = True
        m = _SERVER_ARGS.search(line)
        if m:
            d = _literal_dict(m["d"]) if m["d"] else parse_call_kwargs(m["a"])
            if d:
                self._sglang_args(d)
                hit = True
        m = _SPEC_CONFIG.search(line)
        if m:
            self._spec(parse_call_kwargs(m["a"]))
            self.f["engine"] = self.f["engine"] or "vllm"
            hit = True
        m = _RESOLVED.search(line)
        if m:
            self.f["architecture"] = m["a"]
            if m["a"] not in self.f["architectures"]:
                self.f["architectures"].append(m["a"])
            hit = True
        if hit:
            self._keep(line)
        return hit

    def merge(self, other: dict) -> None:
        """Facts found by a parallel worker, in file order: later values win, lists accumulate."""
        for key, val in other.items():
            if key == "args":
                self.f["args"].update(val or {})
            elif key in ("lines", "architectures"):
                for x in val or ():
                    if x not in self.f[key]:
                        self.f[key].append(x)
            elif val is not None:
                self.f[key] = val

    def build(self) -> StartupFacts:
        f = dict(self.f)
        f["lines"] = tuple(f["lines"][-30:])
        f["architectures"] = tuple(f["architectures"])
        return StartupFacts(**f)
