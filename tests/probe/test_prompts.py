"""The bundled prompt set and the JSONL prompt reader (no torch)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from dflash_doctor.errors import UsageError
from dflash_doctor.probe.prompts import DATA, load_prompts, read_jsonl, shipped_text


class CharTokenizer:
    """Stands in for a real tokenizer: one id per character, no chat template."""

    chat_template = None

    def __call__(self, text):
        return {"input_ids": [ord(c) % 1000 for c in text]}


def test_builtin_set_covers_domains_languages_and_long_context():
    rows = read_jsonl(DATA / "prompts.jsonl")
    assert len(rows) >= 40
    cats = Counter(r["category"] for r in rows)
    assert {"math", "code", "chat", "long"} <= set(cats)
    assert len({r["lang"] for r in rows}) >= 2
    assert len({r["id"] for r in rows}) == len(rows)


def test_long_prompts_are_built_from_shipped_text_and_exceed_4k_tokens():
    prompts = load_prompts("builtin", CharTokenizer())
    long = [p for p in prompts if p.category == "long"]
    assert long
    # >= 24 000 characters of Python source: well over 4k tokens for any BPE tokenizer (~3-4 chars/token)
    assert all(len(p.ids) >= 24000 for p in long)
    assert "def " in shipped_text(24000)
    assert shipped_text(24000) == shipped_text(24000)  # deterministic


def test_raw_input_ids_need_no_tokenizer(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "a", "input_ids": [1, 2, 3]}) + "\n\n" + json.dumps({"input_ids": [4]}) + "\n")
    ps = load_prompts(str(f))
    assert [p.ids for p in ps] == [(1, 2, 3), (4,)]


def test_text_prompts_without_tokenizer_are_refused(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"prompt": "hello"}) + "\n")
    with pytest.raises(UsageError, match="tokenizer"):
        load_prompts(str(f))


@pytest.mark.parametrize(
    "line",
    ["{not json", "[1, 2]", '{"text": "x"}', '{"input_ids": []}', '{"input_ids": [1, -2]}', '{"input_ids": ["a"]}'],
)
def test_bad_jsonl_lines_are_usage_errors(tmp_path, line):
    f = tmp_path / "p.jsonl"
    f.write_text(line + "\n")
    with pytest.raises(UsageError):
        load_prompts(str(f))
