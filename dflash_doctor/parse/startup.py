"""What was launched, read from an engine's startup lines: engine, version, model, spec method,
drafter, k, resolved architectures, and the (redacted) argument dict.

A startup line counts only in its engine's form: its message starts with the line's own words (`vLLM API
server version`, `non-default args:`, `server_args=`, `Initializing a V1 LLM engine (v…) with config:`, the
logo's rows) right after the engine's logger header, with nothing but the capture's framing before that
(formats/_common.py `prefix_ok`). The same words inside another message — a prompt a request logger
echoes, a JSON string — are not the engine's startup line, and never set a fact. A version is a release
number (at most 40 characters), never an arbitrary run of digits.

Argument reprs are parsed with `ast` (literal_eval on each value), never `eval`.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from .. import pyast
from ..evidence.acceptance import StartupFacts
from ..redact import redact_any, redact_text
from .formats._common import SGLANG_HEADER, VLLM_HEADER, frame_of, prefix_facts, prefix_ok
from .formats.sglang_decode import sglang_k

_REL = r"\d{1,6}(?:\.\d{1,6}){0,3}(?:[+.-]?[A-Za-z0-9]{1,20}){0,2}"  # a release number, 40 characters at most
_VERSION = re.compile(
    r"vLLM API server version\s+(?P<a>" + _REL + r")(?![\w.+-])"
    r"|vLLM server version\s+(?P<b>" + _REL + r"),?\s+serving model\s+(?P<bm>\S+)"
    r"|Initializing (?:a V1 |an )?LLM engine \(v(?P<c>" + _REL + r")\)"
)
# The ASCII logo (0.15+): its rows end in `version X` and `model   NAME`.
_LOGO_VERSION = re.compile(r"[█▄▀][█▄▀\s]*version\s+(?P<v>\d{1,6}\.\d{1,6}[\w.+-]{0,30})\s*$")
_LOGO_MODEL = re.compile(r"[█▄▀][█▄▀\s]*model\s+(?P<m>\S+)\s*$")
_NON_DEFAULT = re.compile(r"non-default args:\s*(?P<d>\{.*\})\s*$")
_NAMESPACE = re.compile(r"\bargs:\s*Namespace\((?P<a>.*)\)\s*$")
_SERVER_ARGS = re.compile(r"server_args\s*=\s*(?:ServerArgs\((?P<a>.*)\)|(?P<d>\{.*\}))\s*$")
_SPEC_CONFIG = re.compile(r"SpeculativeConfig\((?P<a>[^()]*)\)")
_FACTS = ("version", "method", "num_speculative_tokens")  # what a forged startup line would change
_INITIALIZING = re.compile(r"Initializing (?:a V1 |an )?LLM engine \(v")
# An engine's startup line starts its message right after one of these logger headers (or after the framing
# alone, in a line without one).
_HEADER = re.compile(f"{VLLM_HEADER.pattern}|{SGLANG_HEADER.pattern}")
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
        node = pyast.parse(f"f({inner})", mode="eval")
        assert isinstance(node, ast.Expression)  # mode="eval" parses to an Expression
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
            out.setdefault(key, pyast.literal_eval(val))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    return out


def _literal_dict(text: str) -> dict | None:
    try:
        val = pyast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return val if isinstance(val, dict) else None


def _same(key: str, a: Any, b: Any) -> bool:
    """Two statements of one fact that agree (a method as the user wrote it and as the engine resolved it)."""
    if key != "method":
        return a == b
    return _method(str(a)) == _method(str(b))


def _method(name: str) -> str:
    name = name.strip().lower().replace("-", "")
    return "mtp" if name in ("nextn", "mtp") or name.endswith("_mtp") else name


def _own(line: str, at: int) -> bool:
    """Whether a startup message starting at line[at] is the engine's own line (see the module doc)."""
    return prefix_ok(line[:at], _HEADER)


def _starts_message(line: str, m: re.Match | None) -> re.Match | None:
    return m if m is not None and _own(line, m.start()) else None


class StartupBuilder:
    def __init__(self, prev: StartupFacts | None = None):
        prev = prev or StartupFacts()
        self.f = {k: getattr(prev, k) for k in prev.__dataclass_fields__}
        self.f["args"] = dict(prev.args)
        self.f["lines"] = list(prev.lines)
        self.f["architectures"] = list(prev.architectures)
        self.frames: set[str] = set()  # the captures' frames the startup lines came in (formats/_common.frame_of)
        self.conflicts: list[str] = []  # facts one process's startup lines state twice, differently
        self._stated: dict[tuple, Any] = {}  # (process tag, fact) -> the value its startup lines stated

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
        k = sglang_k(
            args.get("speculative_algorithm"),
            args.get("speculative_num_steps"),
            args.get("speculative_num_draft_tokens"),
        )
        if k is not None:
            self.f["num_speculative_tokens"] = k

    def feed(self, line: str) -> bool:
        """Take what a startup line in its engine's form says; True when it said something."""
        before = {k: self.f[k] for k in _FACTS}
        for k in _FACTS:  # (what this line states, apart from what earlier lines did)
            self.f[k] = None
        hit = self._version(line) | self._logo(line) | self._args(line)
        stated = {k: self.f[k] for k in _FACTS if self.f[k] is not None}
        for k in _FACTS:
            if self.f[k] is None:
                self.f[k] = before[k]
        m = _starts_message(line, _RESOLVED.search(line))
        if m:
            self.f["architecture"] = m["a"]
            if m["a"] not in self.f["architectures"]:
                self.f["architectures"].append(m["a"])
            hit = True
        if hit:
            self._keep(line)
            at = min((x.start() for x in (_VERSION.search(line), _HEADER.search(line)) if x), default=len(line))
            frame = frame_of(line[:at])
            if frame:
                self.frames.add(frame)
            self._check_stated(prefix_facts(line[:at])[1], stated)
        return hit

    def _check_stated(self, tag, stated: dict) -> None:
        """A fact one process (a tagged one: its pid, pod or unit) states twice with two values is a conflict
        (a forged startup line beside the real one); an untagged log's second start is a restart."""
        if tag is None:
            return
        for key, value in stated.items():
            old = self._stated.setdefault((tag, key), value)
            if _same(key, old, value):
                continue
            text = f"{key.replace('num_speculative_tokens', 'k')} {old} and {value} in the startup lines of {tag}"
            if text not in self.conflicts and len(self.conflicts) < 10:
                self.conflicts.append(text)

    def _version(self, line: str) -> bool:
        m = _starts_message(line, _VERSION.search(line))
        if not m:
            return False
        self.f["engine"] = "vllm"
        self.f["version"] = m["a"] or m["b"] or m["c"]
        if m["bm"]:
            self.f["model"] = m["bm"]
        if m["c"]:  # `Initializing … LLM engine (vX) with config: …, speculative_config=SpeculativeConfig(…)`
            spec = _SPEC_CONFIG.search(line, m.end())
            if spec:
                self._spec(parse_call_kwargs(spec["a"]))
        return True

    def _logo(self, line: str) -> bool:
        """The logo's rows: the logo's block characters alone between the header and `version`/`model`."""
        hit = False
        for rx, key in ((_LOGO_VERSION, "v"), (_LOGO_MODEL, "m")):
            m = rx.search(line)
            if not m:
                continue
            head = line[: m.start()].rstrip()
            start = len(head.rstrip("█▄▀ "))
            if not _own(line, start + (len(line[start : m.start()]) - len(line[start : m.start()].lstrip()))):
                continue
            if key == "v":
                self.f["engine"], self.f["version"] = "vllm", m["v"]
            else:
                self.f["model"] = m["m"]
            hit = True
        return hit

    def _args(self, line: str) -> bool:
        hit = False
        m = _starts_message(line, _NON_DEFAULT.search(line))
        if m:
            d = _literal_dict(m["d"])
            if d is not None:
                self._vllm_args(d)
                hit = True
        m = _starts_message(line, _NAMESPACE.search(line))
        if m:
            self._vllm_args(parse_call_kwargs(m["a"]))
            hit = True
        m = _starts_message(line, _SERVER_ARGS.search(line))
        if m:
            d = _literal_dict(m["d"]) if m["d"] else parse_call_kwargs(m["a"])
            if d:
                self._sglang_args(d)
                hit = True
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
