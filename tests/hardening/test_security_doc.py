"""SECURITY.md states what the code does today: every module and test file it names exists, and every constant
it names in a module (`module.py` (`NAME`)) is defined there — a document citing a module that was moved
(`parse/prefilter.py`, now `parse/fast/grep.py`) no longer says where a bound is enforced (issue 24)."""

from __future__ import annotations

import importlib
import re

from tests.conftest import ROOT

DOC = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
PKG = ROOT / "dflash_doctor"
# a file named in the document: a module path, or a test file by its path or its bare name
_PATH = re.compile(r"`?((?:[a-z_]+/)*[a-z_]+\.py)`?")
# `module.py` (`NAME`) or `module.py` (`Class.attr`)
_CONST = re.compile(r"`((?:[a-z_]+/)*[a-z_]+)\.py` \(`([A-Za-z_][A-Za-z0-9_.]*)`\)")
# names the document quotes as files but that are not ours (an engine's own version files, vLLM's `[file.py:N]`)
_NOT_OURS = {"_version.py", "version.py", "file.py"}


def _exists(name: str) -> bool:
    return any(
        (base / name).is_file()
        for base in (ROOT, PKG, ROOT / "tests" / "hardening", ROOT / "tests" / "hosts", ROOT / "tests")
    )


def test_every_file_the_document_names_exists():
    named = {m.group(1) for m in _PATH.finditer(DOC)} - _NOT_OURS
    assert len(named) > 30, "the pattern no longer finds the document's file names"
    assert sorted(n for n in named if not _exists(n)) == []


def test_every_constant_the_document_names_is_defined_where_it_says():
    pairs = _CONST.findall(DOC)
    assert len(pairs) >= 5, pairs
    missing = []
    for module, name in pairs:
        obj = importlib.import_module("dflash_doctor." + module.replace("/", "."))
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if obj is None:
            missing.append(f"{module}.py: {name}")
    assert missing == []


def test_the_bounds_the_document_states_are_the_code_s():
    """The figures of the bounded-reads table that are one constant each."""
    from dflash_doctor import registry
    from dflash_doctor.parse import linereader, records
    from dflash_doctor.parse.fast import grep
    from dflash_doctor.prometheus import client
    from dflash_doctor.safeio import MAX_JSON_VALUES

    assert linereader.MAX_LINE == 1 << 20 and "| 1 MiB | `parse/linereader.py` (`MAX_LINE`)" in DOC
    assert grep.GREP_DATA_LIMIT == 4 * (1 << 20) + (8 << 20) and "| 4 × 1 MiB + 8 MiB |" in DOC
    assert records.MAX_COUNT == 10**15 and "| 10^15 | `parse/records.py`" in DOC
    assert registry.MAX_ENTRY_POINTS == 1 << 20 and "(plugin discovery) | 1 MiB |" in DOC
    assert client.MAX_RESPONSE_BYTES == 256 << 20 and MAX_JSON_VALUES == 4_000_000
    assert "| 256 MiB / 4 000 000 / ~1 000 |" in DOC
