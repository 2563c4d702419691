"""A launch command as users paste it, turned into the words the server's process received.

Users rarely paste a bare `vllm serve …`. They paste it inside a Markdown fence or a quote, as the
`command:`/`args:` lists of a docker-compose service or a Kubernetes container, as a `docker run` whose
image supplies the entry point (vLLM's own startup line pasted as the launch is read by parse/startup.py:
launch.py). Each form is undone here, and the container image (whose tag names the engine's release) is kept
beside the words.

Only data is read: YAML through `yaml.safe_load` (no tags, no objects), shell words through `shlex`.
"""

from __future__ import annotations

import re
import shlex
import textwrap
from collections import deque
from dataclasses import dataclass
from typing import Any


class PasteError(ValueError):
    pass


@dataclass(frozen=True)
class Image:
    """A container image named by the paste, and what it implies."""

    ref: str  # as written (registry/repository:tag)
    engine: str | None  # the engine the image ships, when it is one we know
    version: str | None  # the engine release its tag names (`v0.11.0`, `v0.5.2-cu126`), else None
    entry: tuple[str, ...] = ()  # the image's own entry point, as words (`vllm serve`, `llama-server`)


@dataclass(frozen=True)
class Pasted:
    words: list[str]
    image: Image | None = None


# Images by repository (the part before the tag, registry included or not) -> engine and entry point.
# The vLLM images run `vllm serve` (older ones the api_server module; both read the same flags), the
# llama.cpp server images run llama-server; SGLang's and TensorRT-LLM's images have no server entry point.
_IMAGES = (
    (
        re.compile(r"(?:^|/)vllm-openai(?:-rocm|-cpu)?$|(?:^|/)vllm/vllm-(?:openai|tpu|cpu)\w*$|^rocm/vllm(?:-dev)?$"),
        "vllm",
    ),
    (re.compile(r"(?:^|/)sglang$"), "sglang"),
    (re.compile(r"(?:^|/)llama\.cpp$"), "llama.cpp"),
    (re.compile(r"(?:^|/)tensorrt-llm(?:/[\w.-]+)?$"), "tensorrt-llm"),
)
_ENTRY = {"vllm": ("vllm", "serve"), "llama.cpp": ("llama-server",)}
_TAG_VERSION = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?(?:(?:rc|post|\.post|\.dev)\d+)?)(?:$|[-+_])")
_RUNNERS = ("docker", "podman", "nerdctl")
# `docker run` options that take a value as the next word (those not listed are switches: -d, --rm, -it, …)
_RUN_VALUE_OPTS = frozenset(
    (
        "-e",
        "--env",
        "--env-file",
        "-v",
        "--volume",
        "-p",
        "--publish",
        "--name",
        "--gpus",
        "--runtime",
        "--ipc",
        "--shm-size",
        "--network",
        "--net",
        "-w",
        "--workdir",
        "--entrypoint",
        "--mount",
        "--device",
        "--ulimit",
        "-u",
        "--user",
        "-l",
        "--label",
        "--platform",
        "--cpus",
        "--memory",
        "-m",
        "--cap-add",
        "--cap-drop",
        "--security-opt",
        "--hostname",
        "-h",
        "--add-host",
        "--log-driver",
        "--log-opt",
        "--restart",
        "--pull",
        "--cpuset-cpus",
        "--group-add",
        "--pid",
        "--uts",
        "--userns",
        "--tmpfs",
        "--health-cmd",
        "--expose",
        "--dns",
        "--storage-opt",
    )
)
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_YAML_KEYS = re.compile(r"^\s*(?:-\s+)?(?:command|args|entrypoint)\s*:", re.M)


def image_of(ref: str) -> Image:
    repo, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
    repo = repo.split("@", 1)[0]
    engine = next((eng for rx, eng in _IMAGES if rx.search(repo)), None)
    m = _TAG_VERSION.match(tag) if engine in ("vllm", "sglang", "tensorrt-llm") else None
    return Image(ref, engine, m.group(1) if m else None, _ENTRY.get(engine or "", ()))


def paste_words(text: str) -> Pasted:
    """The server's words from a pasted launch (PasteError: a form recognised but not readable, with why)."""
    text = _unwrap(text)
    got = _yaml_words(text) if text.strip().startswith("[") or _YAML_KEYS.search(text) else None
    got = got or _shell(text)
    return Pasted(_shell_c(got.words), got.image)


def _unwrap(text: str) -> str:
    """Markdown around the command: fence lines dropped, `> ` quote markers taken off."""
    lines = [ln for ln in text.splitlines() if not _FENCE.match(ln)]
    if lines and all(ln.lstrip().startswith(">") for ln in lines if ln.strip()):
        lines = [re.sub(r"^\s*>\s?", "", ln) for ln in lines]
    return "\n".join(lines)


def split_shell(text: str) -> list[str]:
    """Shell words of a pasted command (line continuations joined; `$ ` prompts dropped)."""
    text = re.sub(r"\\\r?\n", " ", text.strip())
    text = re.sub(r"^\s*[$#]\s+", "", text)
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError as exc:
        raise PasteError(f"the command is not valid shell syntax ({exc}): check its quotes") from None


_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
_REDIRECT = re.compile(r"^\d*(?:>>?|<)(?:&\d+)?$|^\d*(?:>>?|<)\S")


def _command_words(words: list[str]) -> list[str]:
    """The command that runs the server when the paste chains several (`cd x && vllm serve … > log 2>&1 &`):
    the segment naming an engine, or the first; its redirections dropped."""
    segments: list[list[str]] = [[]]
    for w in words:
        if w in _SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(w)
    engine = re.compile(
        r"(?:^|/)(?:vllm|sglang\.launch_server|sglang|llama-server|trtllm-serve)$|^vllm\.entrypoints|^sglang\."
    )
    seg = next((s for s in segments if any(engine.search(w) for w in s)), segments[0])
    out: list[str] = []
    skip = False
    for w in seg:
        if skip:
            skip = False
            continue
        m = _REDIRECT.match(w)
        if m:
            skip = not re.search(r"[<>](?:&\d+)?\S", w) and not w.endswith(("&1", "&2"))  # `> file`: its file next
            continue
        out.append(w)
    return out


def _shell(text: str) -> Pasted:
    words = _command_words(split_shell(text))
    for i, w in enumerate(words):
        if w.rsplit("/", 1)[-1] in _RUNNERS and i + 1 < len(words) and words[i + 1] in ("run", "create"):
            return _docker_run(words[i + 2 :])
        if w.rsplit("/", 1)[-1] in _RUNNERS and words[i + 1 : i + 3] == ["container", "run"]:
            return _docker_run(words[i + 3 :])
    return Pasted(words)


def _docker_run(words: list[str]) -> Pasted:
    """`docker run [OPTIONS] IMAGE [COMMAND…]`: the container's words, its `-e` variables in front (as the
    process's environment), the image's entry point when the command gives none."""
    env: list[str] = []
    entry: list[str] | None = None
    i = 0
    while i < len(words):
        w = words[i]
        if not w.startswith("-") or w == "-":
            break
        name, eq, val = w.partition("=")
        # (short switches combine, `-itp 8000:8000`: the last letter decides whether a value follows)
        short = re.fullmatch(r"-[a-zA-Z]+", name) is not None
        if name in _RUN_VALUE_OPTS or (short and f"-{name[-1]}" in _RUN_VALUE_OPTS):
            if not eq:
                i += 1
                val = words[i] if i < len(words) else ""
            if (name == "--env" or short and name.endswith("e")) and "=" in val:
                env.append(val)
            elif name == "--entrypoint":
                entry = split_shell(val) if val else []
        i += 1
    if i >= len(words):
        raise PasteError("the docker run command names no image")
    image = image_of(words[i])
    rest = words[i + 1 :]
    if entry is not None:
        rest = entry + rest
    elif image.entry and not _names_entry(rest):
        rest = list(image.entry) + rest
    return Pasted(env + rest, image=image)


_PROGRAM = re.compile(r"^(?:vllm|python[\d.]*|sglang|llama-server|trtllm-serve|bash|sh|env|uv|uvx|torchrun)$")


def _names_entry(words: list[str]) -> bool:
    """Whether the container's command starts with a program (`vllm serve`, `python3 -m …`, `/app/llama-server`)
    rather than the image entry point's arguments (flags, or `vllm serve`'s positional model)."""
    return bool(words) and (words[0].startswith("/") or bool(_PROGRAM.match(words[0])))


def _shell_c(words: list[str]) -> list[str]:
    """`bash -c "vllm serve …"` (a compose command's usual form): the words of the string it runs."""
    for i, w in enumerate(words[:-2]):
        if w.rsplit("/", 1)[-1] in ("bash", "sh") and re.fullmatch(r"-[a-z]*c", words[i + 1]):
            return words[:i] + split_shell(words[i + 2])
    return words


def _yaml_words(text: str) -> Pasted | None:
    """A compose service's or a Kubernetes container's command from YAML (or a bare list); None when the text is
    not YAML of that shape (it is then read as a shell command)."""
    import yaml

    try:
        doc = yaml.safe_load(textwrap.dedent(text))
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        if _YAML_KEYS.search(text) and not re.search(
            r"^\s*(?:\$ )?(?:vllm|python|sglang|llama-server|docker)", text, re.M
        ):
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise PasteError(
                f"the launch looks like a compose or Kubernetes spec but is not valid YAML ({first})"
            ) from None
        return None
    if isinstance(doc, list) and all(isinstance(x, (str, int, float)) for x in doc):
        return Pasted([str(x) for x in doc])
    spec = _find_container(doc)
    if spec is None:
        return None
    image = image_of(str(spec["image"])) if isinstance(spec.get("image"), str) else None
    kube = "args" in spec or "containers" in text
    entry = _as_words(spec.get("command" if kube else "entrypoint"))
    cmd = _as_words(spec.get("args" if kube else "command"))
    env = _env_words(spec.get("environment", spec.get("env")))
    if entry is None and image is not None and image.entry and not _names_entry(cmd or []):
        entry = list(image.entry)
    return Pasted(env + (entry or []) + (cmd or []), image=image)


def _find_container(doc: Any) -> dict | None:
    """The first mapping holding a command (compose service, Kubernetes container), breadth-first over at most
    10 000 nodes, each once (YAML aliases make a small text a huge or cyclic graph)."""
    queue: deque[Any] = deque([doc])
    seen: set[int] = set()
    while queue and len(seen) < 10_000:
        node = queue.popleft()
        if id(node) in seen or not isinstance(node, (dict, list)):
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            if any(k in node for k in ("command", "args", "entrypoint")) and not isinstance(node.get("command"), dict):
                return node
            queue.extend(node.values())
        else:
            queue.extend(node)
    return None


def _as_words(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return split_shell(value)
    if isinstance(value, list):
        return [str(x) if not isinstance(x, bool) else str(x).lower() for x in value if x is not None]
    return None


def _env_words(value: Any) -> list[str]:
    """compose `environment:` (a list of KEY=VALUE or a mapping), Kubernetes `env:` ({name, value} items)."""
    out: list[str] = []
    if isinstance(value, dict):
        out = [f"{k}={v}" for k, v in value.items() if isinstance(k, str) and v is not None]
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str) and "=" in item:
                out.append(item)
            elif isinstance(item, dict) and isinstance(item.get("name"), str) and "value" in item:
                out.append(f"{item['name']}={item['value']}")
    return [w for w in out if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
