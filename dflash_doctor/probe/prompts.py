"""Prompt sets for the probe: the bundled set (written for this project) or a user's JSONL.

A JSONL line holds one of `input_ids` (raw token ids: no tokenizer needed), `messages` (chat, run
through the target's chat template) or `prompt` (text; wrapped as one user message when the
tokenizer has a chat template). Bundled long-context prompts (> 4k tokens) are assembled from the
Python sources shipped inside this package, so they exercise sliding windows without any download.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

DATA = Path(__file__).with_name("data")
MAX_TOKEN_ID = 1 << 31  # no vocabulary comes near; a larger id is damage, not a token
PACKAGE = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Prompt:
    id: str
    ids: tuple[int, ...]
    category: str = ""
    lang: str = ""


def shipped_text(min_chars: int) -> str:
    """Deterministic long text: this package's own source files, in path order, until min_chars."""
    parts: list[str] = []
    total = 0
    for f in sorted(PACKAGE.rglob("*.py")):
        body = f.read_text(encoding="utf-8", errors="replace")
        parts.append(f"# file: {f.relative_to(PACKAGE.parent).as_posix()}\n{body}")
        total += len(parts[-1])
        if total >= min_chars:
            break
    return "\n\n".join(parts)


def read_jsonl(path: Path) -> list[dict]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read prompts {path}: {exc}") from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{n}: not JSON ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:  # 5000-digit numbers, nesting 100 000 deep
            raise UsageError(f"{path}:{n}: not usable JSON ({type(exc).__name__}: {str(exc)[:80]})") from None
        if not isinstance(row, dict) or not any(k in row for k in ("input_ids", "messages", "prompt", "long_context")):
            raise UsageError(f"{path}:{n}: expected an object with input_ids, messages or prompt")
        rows.append(row)
    if not rows:
        raise UsageError(f"{path}: no prompts")
    return rows


def _encode(row: dict, tokenizer, where: str) -> list[int]:
    if "input_ids" in row:
        ids = row["input_ids"]
        if (
            not isinstance(ids, list)
            or not ids
            or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < MAX_TOKEN_ID for i in ids)
        ):
            raise UsageError(f"{where}: input_ids must be a non-empty list of integers from 0 to {MAX_TOKEN_ID - 1}")
        return ids
    if tokenizer is None:
        raise UsageError(
            f"{where}: text prompts need the target's tokenizer, and none could be loaded",
            hint="give raw input_ids in the JSONL, or a target directory with a tokenizer",
        )
    if "long_context" in row:
        messages = [{"role": "user", "content": _long_context(row["long_context"], where)}]
    elif "messages" in row:
        messages = row["messages"]
        if (
            not isinstance(messages, list)
            or not messages
            or not all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages)
        ):
            raise UsageError(f"{where}: messages must be a non-empty list of {{role, content}} objects")
    else:
        messages = [{"role": "user", "content": str(row["prompt"])}]
    ids = _apply_template(tokenizer, messages, where)
    if not ids:
        raise UsageError(f"{where}: the tokenizer produced no token ids")
    return ids


def _apply_template(tokenizer, messages, where: str) -> list[int]:
    if getattr(tokenizer, "chat_template", None):
        try:
            # drafters are trained without thinking traces: ask templates that know the switch to stay off
            out = tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, enable_thinking=False
            )
        except Exception as exc:
            raise UsageError(f"{where}: the chat template failed: {exc}") from None
        if isinstance(out, dict) or hasattr(out, "input_ids"):
            out = out["input_ids"]
        return [int(i) for i in out]
    text = "\n".join(str(m.get("content", "")) for m in messages)
    return [int(i) for i in tokenizer(text)["input_ids"]]


def _long_context(lc, where: str) -> str:
    if (
        not isinstance(lc, dict)
        or not isinstance(lc.get("task"), str)
        or not isinstance(lc.get("min_chars", 24000), int)
        or not 0 < lc.get("min_chars", 24000) <= 1 << 22
    ):
        raise UsageError(f"{where}: long_context must be {{task: text, min_chars: 1..4194304}}")
    return f"{lc['task']}\n\n{shipped_text(lc.get('min_chars', 24000))}"


def load_prompts(spec: str, tokenizer=None, limit: int | None = None, rows: list[dict] | None = None) -> list[Prompt]:
    path = DATA / "prompts.jsonl" if spec == "builtin" else Path(spec)
    if rows is None:
        rows = read_jsonl(path)
    if limit is not None:
        rows = rows[:limit]
    out = []
    for n, row in enumerate(rows, 1):
        where = f"{path.name}:{row.get('id', n)}"
        out.append(
            Prompt(
                str(row.get("id", n)),
                tuple(_encode(row, tokenizer, where)),
                str(row.get("category", "")),
                str(row.get("lang", "")),
            )
        )
    return out


def needs_tokenizer(spec: str) -> bool:
    path = DATA / "prompts.jsonl" if spec == "builtin" else Path(spec)
    return any("input_ids" not in r for r in read_jsonl(path))


def rows_need_tokenizer(rows: list[dict]) -> bool:
    return any("input_ids" not in r for r in rows)


def portable_rows(spec: str, limit: int | None = None) -> list[dict]:
    """The prompt rows with long-context bodies expanded here, so a remote host needs no package files."""
    path = DATA / "prompts.jsonl" if spec == "builtin" else Path(spec)
    rows = read_jsonl(path)[:limit] if limit is not None else read_jsonl(path)
    out = []
    for r in rows:
        if "long_context" in r:
            text = _long_context(r["long_context"], f"{path.name}:{r.get('id', '?')}")
            r = {k: v for k, v in r.items() if k != "long_context"}
            r["prompt"] = text
        out.append(r)
    return out
