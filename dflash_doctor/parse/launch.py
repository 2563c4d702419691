"""Parse a serve command (vLLM, SGLang, llama.cpp's llama-server, TensorRT-LLM's trtllm-serve) into what spec
decode was asked for.

Input is either the text a user pastes (`diagnose --launch`; its wrappers — Markdown, compose or Kubernetes
YAML, `docker run`, vLLM's `non-default args` line — are undone by launch_paste.py) or the argv words of a
running process (`/proc/PID/cmdline`, from `check host`). The speculative config is parsed as JSON the way
the engine would; when it is not valid JSON (usually shell quoting that ate the double quotes or
split the JSON into several words) the exact parse error is kept and a corrected flag is proposed. A config
kept in a file the command names (vLLM's `--config`, trtllm-serve's `--extra_llm_api_options`) is not read:
the launch says where it is (`spec_elsewhere`), and the checks that need it say they could not check.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

from .. import pyast
from ..evidence.payloads import LaunchConfig
from ..redact import REDACTED, is_secret_key, redact_any, redact_text, redact_words
from ..textsafe import command
from .formats.sglang_decode import sglang_k
from .launch_llamacpp import flags as llama_flags
from .launch_llamacpp import is_llama_server
from .launch_llamacpp import speculative as llama_speculative
from .launch_paste import Image, PasteError, paste_words
from .startup import StartupBuilder

_VLLM_SPEC_FLAGS = ("--speculative-config", "--speculative_config")
_SGLANG_SPEC = {
    "--speculative-algorithm": "method",
    "--speculative-draft-model-path": "model",
    "--speculative-draft-model": "model",
    "--speculative-num-draft-tokens": "num_draft_tokens",
    "--speculative-num-steps": "num_steps",
    "--speculative-eagle-topk": "eagle_topk",
}
# SGLang's other --speculative-* flags: argparse takes any unique prefix of a flag (`--speculative-algo NEXTN`),
# so a prefix is resolved against all of them, not only those read.
_SGLANG_OTHER_SPEC = (
    "--speculative-draft-model-revision",
    "--speculative-draft-load-format",
    "--speculative-accept-threshold-single",
    "--speculative-accept-threshold-acc",
    "--speculative-token-map",
    "--speculative-attention-mode",
    "--speculative-moe-runner-backend",
    "--speculative-ngram-min-match-window-size",
    "--speculative-ngram-max-match-window-size",
)
# vLLM's short spellings (its argparse aliases)
_VLLM_SHORT = {
    "-tp": "--tensor-parallel-size",
    "-pp": "--pipeline-parallel-size",
    "-dp": "--data-parallel-size",
    "-q": "--quantization",
}
# Switches (store_true / BooleanOptionalAction): the word after one is the next argument, never its value
# (`vllm serve --trust-remote-code Qwen/Qwen3-8B` names the model positionally).
_SWITCHES = frozenset(
    f"--{p}{name}"
    for name in (
        "trust-remote-code",
        "enforce-eager",
        "enable-prefix-caching",
        "enable-chunked-prefill",
        "disable-log-requests",
        "enable-log-requests",
        "disable-log-stats",
        "enable-auto-tool-choice",
        "disable-custom-all-reduce",
        "disable-frontend-multiprocessing",
        "enable-expert-parallel",
        "async-scheduling",
        "skip-tokenizer-init",
        "enable-lora",
        "enable-sleep-mode",
        "disable-sliding-window",
        "enable-prompt-tokens-details",
        "enable-force-include-usage",
        "disable-radix-cache",
        "disable-cuda-graph",
        "enable-dp-attention",
        "enable-torch-compile",
        "enable-metrics",
        "disable-overlap-schedule",
        "enable-mixed-chunk",
        "enable-ep-moe",
        "enable-p2p-check",
        "disable-fast-image-processor",
    )
    for p in ("", "no-")
)
# Files a command can keep its speculative config in (not read: their paths are the server's)
_CONFIG_FILES = {"vllm": ("config",), "tensorrt-llm": ("extra_llm_api_options", "config")}
# The engine's own startup lines that state the parsed arguments (parse/startup.py reads them)
_STARTUP_ARGS = re.compile(r"non-default args:|args: Namespace\(|server_args=")
_LEGACY_VLLM = {"--speculative-model": "model", "--num-speculative-tokens": "num_speculative_tokens"}
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class LaunchParseError(ValueError):
    pass


def parse_launch_text(text: str) -> LaunchConfig:
    """A pasted launch command, in any of the forms launch_paste.py undoes."""
    from_startup = _from_startup_lines(text) if _STARTUP_ARGS.search(text) else None
    if from_startup is not None:
        return from_startup
    try:
        pasted = paste_words(text)
    except PasteError as exc:
        raise LaunchParseError(str(exc)) from None
    return parse_argv(pasted.words, image=pasted.image)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """Values of secret flags (`--api-key X`, `--hf-token=X`) and secret-looking words become REDACTED."""
    out: list[str] = []
    hide_next = False
    for word in argv:
        if hide_next:
            if word.lower() in ("bearer", "basic", "digest"):  # `Authorization: Bearer X`: X is the secret
                out.append(word)
                continue
            out.append(REDACTED)
            hide_next = False
            continue
        if word.startswith("-"):
            name, eq, _ = word.lstrip("-").partition("=")
            if is_secret_key(name.replace("-", "_")):
                if eq:
                    out.append(word.split("=", 1)[0] + "=" + REDACTED)
                else:
                    out.append(word)
                    hide_next = True
                continue
        if _ENV.match(word) and is_secret_key(word.split("=", 1)[0]):
            out.append(word.split("=", 1)[0] + "=" + REDACTED)
            continue
        # A secret split over words: `Authorization: Bearer X`, `password: X`, `aws_secret_access_key = X`.
        low = word.lower()
        prev = argv[len(out) - 1] if out else ""
        if (
            low in ("bearer", "basic", "digest")
            or (low[-1:] in (":", "=") and is_secret_key(low[:-1].replace("-", "_")))
            or (word in ("=", ":") and is_secret_key(prev.lower().replace("-", "_")))
        ):
            out.append(word)
            hide_next = True
            continue
        out.append(redact_text(word))
    return out


def _engine_of(words: Sequence[str]) -> tuple[str | None, int]:
    """Which engine, and the index of the first word after the entry point."""
    for i, w in enumerate(words):
        base = os.path.basename(w)
        if base == "vllm" and i + 1 < len(words) and words[i + 1] == "serve":
            return "vllm", i + 2
        if w.startswith("vllm.entrypoints"):
            return "vllm", i + 1
        if w.startswith("sglang.launch_server") or (
            base == "sglang" and i + 1 < len(words) and words[i + 1] == "serve"
        ):
            return "sglang", i + 1 if w.startswith("sglang.") else i + 2
        if _is_offline_example(w):
            return "vllm", i + 1
        if is_llama_server(w):
            return "llama.cpp", i + 1
        if base == "trtllm-serve":
            return "tensorrt-llm", i + 2 if i + 1 < len(words) and words[i + 1] == "serve" else i + 1
    return None, 0


def _is_offline_example(word: str) -> bool:
    """vLLM's own offline spec-decode example (examples/offline_inference/spec_decode.py), which users run and
    paste as often as `vllm serve`."""
    return word.replace("\\", "/").endswith("offline_inference/spec_decode.py")


# Its flags (the script's argparse names, either spelling) -> the speculative config they set.
_OFFLINE_EXAMPLE = {
    "method": "method",
    "num_spec_tokens": "num_speculative_tokens",
    "eagle_dir": "model",
    "draft_model": "model",
    "prompt_lookup_max": "prompt_lookup_max",
    "prompt_lookup_min": "prompt_lookup_min",
}


def parse_argv(argv: Sequence[str], image: Image | None = None) -> LaunchConfig:  # noqa: C901 - a branch per flag form
    """The launch a server's words ask for. `image`: the container image a pasted `docker run` or compose
    service named (its tag names the release)."""
    words = redact_words(argv)  # (secrets only the whole command line shows: `curl -u user:PW` among the words)
    env: dict[str, str] = {}
    while words and _ENV.match(words[0]):
        ek, ev = words.pop(0).split("=", 1)
        env[ek] = ev
    if words and os.path.basename(words[0]) == "env":  # `env A=1 vllm serve …`
        words.pop(0)
        while words and _ENV.match(words[0]):
            ek, ev = words.pop(0).split("=", 1)
            env[ek] = ev
    engine, start = _engine_of(words)
    if engine is None and image is not None and image.engine:
        engine = image.engine  # (an image with no entry point of its own, given only flags)
    if engine == "llama.cpp":
        return _llama_server(argv, words[start:], env, image)
    rest = words[start:] if start else words
    args, positional, spec_words, dotted = _flags(rest, engine)
    model = args.get("model") or args.get("model_path")
    if engine in ("vllm", "tensorrt-llm") and not model and positional:
        model = positional.pop(0)
    if isinstance(model, bool):
        model = None
    spec: dict[str, Any] | None = None
    spec_text = error = fix = None
    if spec_words is not None:
        spec_text = " ".join(spec_words)
        spec, error, fix = parse_spec_json(spec_words)
        if spec is not None and dotted:
            spec = {**spec, **dotted}
    elif dotted:  # `--speculative-config.method eagle3 --speculative-config.num_speculative_tokens 4`
        spec, spec_text = dotted, json.dumps(dotted)
    elif any(_is_offline_example(w) for w in words[:start]):
        spec = {
            key: _num(args[name]) for name, key in _OFFLINE_EXAMPLE.items() if args.get(name) not in (None, True)
        } or None
        if spec is not None and isinstance(spec.get("method"), str):
            spec["method"] = spec["method"].lower()
        if not model and isinstance(args.get("model_dir"), str):
            model = args["model_dir"]
    else:
        legacy: dict[str, Any] = {}
        for flag, key in {**_LEGACY_VLLM, **_SGLANG_SPEC}.items():
            v = args.get(flag.lstrip("-").replace("-", "_"))
            if v not in (None, True):
                legacy[key] = v
        if legacy:
            spec = {k: _num(v) for k, v in legacy.items()}
            if engine == "sglang" and isinstance(spec.get("method"), str):
                spec["method"] = spec["method"].lower()
    elsewhere = None
    if spec is None and error is None:
        for name in _CONFIG_FILES.get(engine or "", ()):
            if isinstance(args.get(name), str):
                elsewhere = f"--{name.replace('_', '-') if engine == 'vllm' else name} {args[name]}"
                break
    method = drafter = k = None
    if spec:
        method = str(spec.get("method")).lower() if spec.get("method") is not None else None
        drafter = spec.get("model")
        kk = spec.get("num_speculative_tokens")
        if kk is None and ("num_draft_tokens" in spec or "num_steps" in spec):
            kk = sglang_k(method, spec.get("num_steps"), spec.get("num_draft_tokens"))
        k = kk if isinstance(kk, int) and not isinstance(kk, bool) and kk >= 0 else None
    port = _num(args.get("port"))
    return LaunchConfig(
        engine=engine,
        model=model if isinstance(model, str) else None,
        host=args.get("host") if isinstance(args.get("host"), str) else None,
        port=port if isinstance(port, int) else None,
        speculative=redact_any(spec) if spec is not None else None,
        spec_text=redact_text(spec_text) if spec_text else None,
        spec_error=error,
        spec_fix=fix,
        method=method,
        drafter=drafter if isinstance(drafter, str) else None,
        num_speculative_tokens=k,
        env={k2: (REDACTED if is_secret_key(k2) else redact_text(v)) for k2, v in env.items()},
        args={k2: (REDACTED if is_secret_key(k2) and v is not True else redact_any(v)) for k2, v in args.items()},
        stray=tuple(redact_argv(positional)),
        argv=tuple(redact_argv(argv)),
        spec_elsewhere=redact_text(elsewhere) if elsewhere else None,
        image=redact_text(image.ref) if image is not None else None,
        image_version=image.version if image is not None and image.engine == engine else None,
    )


def _flag_name(word: str, engine: str | None) -> str | None:
    """The long flag a word names (`--x`, a vLLM short alias, a unique SGLang prefix), or None for a value."""
    if word.startswith("--") and len(word) > 2:
        name = word.partition("=")[0]
        if engine == "sglang" and name.startswith("--speculative-") and name not in _SGLANG_SPEC:
            hits = [f for f in (*_SGLANG_SPEC, *_SGLANG_OTHER_SPEC) if f.startswith(name)]
            if len(hits) == 1:
                return hits[0]
        return name
    short = word.partition("=")[0]
    if engine in ("vllm", None) and short in _VLLM_SHORT:
        return _VLLM_SHORT[short]
    return None


def _flags(rest: list[str], engine: str | None) -> tuple[dict[str, Any], list[str], list[str] | None, dict]:
    """({flag: value}, positional words, the --speculative-config value's words, the dotted
    `--speculative-config.KEY VALUE` entries)."""
    args: dict[str, Any] = {}
    positional: list[str] = []
    spec_words: list[str] | None = None
    dotted: dict[str, Any] = {}
    val: str | bool
    i = 0
    while i < len(rest):
        w = rest[i]
        name = _flag_name(w, engine)
        if name is None:
            positional.append(w)
            i += 1
            continue
        _, eq, val = w.partition("=")
        if not eq:
            nxt = rest[i + 1] if i + 1 < len(rest) else None
            if name not in _SWITCHES and nxt is not None and _flag_name(nxt, engine) is None:
                val = nxt
                i += 1
            else:
                val = True
        base, dot, key = name.partition(".")
        if dot and base in _VLLM_SPEC_FLAGS and key:
            _put_dotted(dotted, key, val)
        elif name in _VLLM_SPEC_FLAGS and isinstance(val, str):
            spec_words = [val]
            # An unquoted JSON is split by the shell: gather the words up to the closing brace.
            while (
                val.lstrip().startswith("{")
                and _depth(" ".join(spec_words)) > 0
                and i + 1 < len(rest)
                and not rest[i + 1].startswith("--")
            ):
                i += 1
                spec_words.append(rest[i])
        else:
            args[name.lstrip("-").replace("-", "_")] = val
        i += 1
    return args, positional, spec_words, dotted


def _put_dotted(into: dict[str, Any], key: str, val: str | bool) -> None:
    """vLLM's `--json-arg.a.b VALUE`: the nested key set to the value read as JSON when it is a JSON literal
    (4, true, 0.5, "x"), else as the text."""
    parts = [p for p in key.split(".") if p]
    node = into
    for p in parts[:-1]:
        node = node.setdefault(p, {}) if isinstance(node.get(p, {}), dict) else node
    value: Any = val
    if isinstance(val, str):
        try:
            value = json.loads(val)
        except ValueError:
            value = val
    if parts:
        node[parts[-1].replace("-", "_")] = value


def _from_startup_lines(text: str) -> LaunchConfig | None:
    """The engine's own startup line pasted as the launch (vLLM's `non-default args: {…}` or `Namespace(…)`,
    SGLang's `server_args=…`), read by the log's startup reader: the arguments the server parsed. None when the
    text holds no such line."""
    builder = StartupBuilder()
    for line in text.splitlines():
        builder.feed(line)
    st = builder.build()
    if not st.args:
        return None
    spec = st.args.get("speculative_config")
    if not isinstance(spec, dict):
        facts = {"method": st.method, "model": st.drafter, "num_speculative_tokens": st.num_speculative_tokens}
        spec = {key: v for key, v in facts.items() if v is not None} or None
    host, port = st.args.get("host"), st.args.get("port")
    return LaunchConfig(
        engine=st.engine,
        model=st.model,
        host=host if isinstance(host, str) else None,
        port=port if isinstance(port, int) and not isinstance(port, bool) else None,
        speculative=spec,
        spec_text=json.dumps(spec) if spec else None,
        method=st.method,
        drafter=st.drafter,
        num_speculative_tokens=st.num_speculative_tokens,
        args={key: v for key, v in st.args.items() if key != "speculative_config"},
    )


def _depth(text: str) -> int:
    return text.count("{") - text.count("}")


def _num(v: Any) -> Any:
    if isinstance(v, str) and re.fullmatch(r"-?\d+", v):
        return int(v)
    return v


def parse_spec_json(words: Sequence[str]) -> tuple[dict | None, str | None, str | None]:
    """(config, exact error, corrected flag). The engine reads the value with json.loads."""
    text = words[0]
    split = len(words) > 1
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:  # a 5000-digit number or absurd nesting is not valid either
        if not isinstance(exc, json.JSONDecodeError):
            return None, f"--speculative-config is not usable JSON ({str(exc)[:100]})", None
        error = (
            f"--speculative-config is not valid JSON: {exc.msg}: line {exc.lineno} column {exc.colno} (char {exc.pos})"
        )
        if split:
            error += f"; the shell split it into {len(words)} words"
        repaired = _repair(" ".join(words))
        fix = None
        if repaired is not None:
            fix = command("--speculative-config", json.dumps(redact_any(repaired)))
        if not split and '"' in text:  # the shell kept the quotes: the JSON itself is wrong (a trailing comma, …)
            hint = "the shell passed the JSON whole, so the text itself is not JSON (a trailing comma, Python's " + (
                f"True/None or single quotes): {fix}" if fix else "True/None or single quotes)"
            )
        else:
            hint = "wrap the whole JSON in single quotes so the shell keeps its double quotes" + (
                f": {fix}" if fix else ', e.g. --speculative-config \'{"method": "dflash", …}\''
            )
        return None, f"{error} — {hint}", fix
    if not isinstance(value, dict):
        return None, f"--speculative-config is JSON but not an object (got {type(value).__name__})", None
    return value, None, None


def _repair(text: str) -> dict | None:
    """Recover what the user meant from a JSON that lost its quotes or used Python syntax."""
    try:
        v = pyast.literal_eval(text)  # {'method': 'dflash'} (Python dict syntax); literal_eval never runs code
        if isinstance(v, dict):
            return v
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # {[1]: 2} is a TypeError
        pass
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        return None
    out: dict[str, Any] = {}
    for part in body[1:-1].split(","):
        if not part.strip():
            continue
        key, sep, val = part.partition(":")
        if not sep:
            return None
        key, val = key.strip().strip("'\""), val.strip().strip("'\"")
        if not re.fullmatch(r"[A-Za-z_][\w.-]*", key):
            return None
        try:
            out[key] = json.loads(val) if re.fullmatch(r"-?\d+(\.\d+)?|true|false|null", val) else val
        except ValueError:
            out[key] = val
    return out or None


def _llama_server(argv: Sequence[str], rest: list[str], env: dict[str, str], image: Image | None) -> LaunchConfig:
    """llama.cpp's llama-server: short and long flags of its own (parse/launch_llamacpp.py)."""
    args, stray = llama_flags(rest)
    spec = llama_speculative(args)
    port = _num(args.get("port"))
    model = args.get("model") if isinstance(args.get("model"), str) else args.get("hf_repo")
    k = spec.get("num_speculative_tokens") if spec else None
    drafter = spec.get("model") if spec else None
    return LaunchConfig(
        engine="llama.cpp",
        model=redact_text(model) if isinstance(model, str) else None,
        host=args.get("host") if isinstance(args.get("host"), str) else None,
        port=port if isinstance(port, int) else None,
        speculative=redact_any(spec) if spec is not None else None,
        method=spec["method"] if spec else None,
        drafter=redact_text(drafter) if isinstance(drafter, str) else None,
        num_speculative_tokens=k if isinstance(k, int) else None,
        env={k2: (REDACTED if is_secret_key(k2) else redact_text(v)) for k2, v in env.items()},
        args={k2: (REDACTED if is_secret_key(k2) and v is not True else redact_any(v)) for k2, v in args.items()},
        stray=tuple(redact_argv(stray)),
        argv=tuple(redact_argv(argv)),
        image=redact_text(image.ref) if image is not None else None,
    )
