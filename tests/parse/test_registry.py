"""The format registry (parse/formats/) and the fast route's grep routes (parse/fast/routes.py): they refuse
a format the scanners could not find fast or at all, every searcher takes its literals from them, and the
scanning modules import each other one way."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from dflash_doctor.parse import formats as F
from dflash_doctor.parse.fast import routes as R
from dflash_doctor.parse.formats import FormatRegistryError, validate
from dflash_doctor.parse.formats._common import Format

PARSE = Path(__file__).resolve().parents[2] / "dflash_doctor" / "parse"


_ROUTE_FIELDS = {"grep", "grep_pass", "markers", "slow", "edges", "server"}


def _fmt(**kw) -> Format:
    base = dict(id="new-engine", engine="x", label="x", meaning="x", literals=("XYZ metrics: Xccept",))
    base.update({k: v for k, v in kw.items() if k not in _ROUTE_FIELDS})
    return Format(parse=lambda line: None, **base)


def _validate_with(**kw) -> None:
    """The registry's and the routes' checks over the known formats and a new one (routed by kw)."""
    new = _fmt(**kw)
    route = dict(grep=("XYZ metrics",))
    route.update({k: v for k, v in kw.items() if k in _ROUTE_FIELDS})
    validate(list(F.FORMATS) + [new])
    R.validate(list(F.FORMATS) + [new], dict(R.ROUTES, **{new.id: R.Route(**route)}))


@pytest.mark.parametrize(
    "kw,why",
    [
        (dict(grep=("mean acceptance length",)), "starts with 'm', a byte common in log text"),
        (dict(grep=("9 drafts",)), "starts with '9'"),
        (dict(grep=(" Accepted",)), "starts with ' '"),
        (dict(grep=(), edges=False), "no grep literal and not edges"),
        (dict(literals=("Drafted tokens",)), "would never see its lines"),
        (dict(grep_pass="mine"), "needs markers"),
        # the streamed route reads lines by `Xccept: `; the grep route would find only those holding `XYZ metrics`
        (dict(literals=("Xccept: ",), grep=("XYZ metrics",)), "holds none of its grep literals"),
        (dict(literals=("Xccept: ", "XYZ metrics: Xccept"), grep=("XYZ metrics",)), "holds none of its grep literals"),
        # a common first byte is refused in the main pass even with a reason, and in a pass of its own without one
        (dict(literals=("draft Xccept",), grep=("draft Xccept",), slow="no other way"), "starts with 'd'"),
        (
            dict(literals=("draft Xccept",), grep=("draft Xccept",), grep_pass="mine", markers=("mine",)),
            "starts with 'd'",
        ),
    ],
)
def test_the_registry_refuses_what_a_scanner_could_not_find(kw, why):
    with pytest.raises(FormatRegistryError, match=why.split(",")[0].replace("(", r"\(").replace(")", r"\)")):
        _validate_with(**kw)


def test_a_third_first_byte_in_a_grep_pass_is_refused():
    """GNU grep skips ahead with memchr2 on at most two first bytes (measured: 0.36 s with S and D, 0.59-0.70 s
    with a third, even a rare one); the main pass uses S and D."""
    with pytest.raises(FormatRegistryError, match="3 distinct bytes"):
        _validate_with(literals=("Xyzzy metrics: Xccept",), grep=("Xyzzy metrics",))
    _validate_with(literals=("Draft stats: Xccept",), grep=("Draft stats",))  # one of the pass's bytes


def test_every_grep_pass_and_the_host_filter_follow_the_rule():
    slow = {lit for r in R.ROUTES.values() if r.slow for lit in r.grep}
    for name, (lits, _) in R.GREP_PASSES.items():
        assert len({x[0] for x in lits}) <= 2, name
        common = [x for x in lits if x[0].islower() or x[0].isdigit() or x[0].isspace()]
        assert not common or name != R.MAIN_PASS and set(common) <= slow, name
    assert len({x[0] for x in R.SERVER_LITERALS}) <= 2
    assert not any(x[0].islower() or x[0].isdigit() or x[0].isspace() for x in R.SERVER_LITERALS)


def test_a_pass_of_its_own_may_use_a_slow_literal_when_it_says_why():
    _validate_with(
        literals=("draft Xccept",),
        grep=("draft Xccept",),
        grep_pass="mine",
        markers=("mine",),
        slow="no fast part in every line",
    )


def test_a_pass_s_own_literals_select_it():
    """A file holding one of a pass's lines needs the pass, whatever markers were cut off or never printed."""
    for name, (lits, marks) in R.GREP_PASSES.items():
        assert set(lits) <= set(marks), name


def test_every_searcher_takes_its_literals_from_the_registry():
    from dflash_doctor.parse import logscan, stream
    from dflash_doctor.parse.fast import grep

    assert logscan.SPEC_LINE_LITERALS == R.SERVER_LITERALS
    assert tuple(x.encode() for x in F.SCAN_EXTRA) == stream._EXTRA
    assert F.CANDIDATE.encode() == stream._CAND
    src = (PARSE / "fast" / "grep.py").read_text()
    assert "GREP_PASSES[" in src and "LITERALS = (" not in src  # no literal list of its own
    assert grep._HINTS  # block formats' grep literals (their windows)
    import dflash_doctor.collect.host as host

    assert set(host.SPEC_LINE_LITERALS) == set(R.SERVER_LITERALS)


def test_every_route_names_a_format_of_the_registry():
    assert set(R.ROUTES) <= set(F.BY_ID)


def test_every_format_module_documents_what_its_numbers_mean():
    import importlib

    for f in F.FORMATS:
        mod = importlib.import_module(f.parse.__module__)
        doc = (mod.__doc__ or "").lower()
        assert f.meaning and f.label, f.id
        assert "bonus" in doc, f"{f.id}: say whether the bonus token is included"
        assert any(w in doc for w in ("drafts-weighted", "per-request", "per request")), f"{f.id}: weighting"
        assert any(
            w in doc
            for w in (
                "cumulative",
                "per interval",
                "per iteration",
                "whole run",
                "one request",
                "one finished request",
                "unrecognised",
            )
        ), f"{f.id}: time span"


def test_a_new_format_is_one_module():
    """The registry discovers the modules of parse/formats/ (no list to edit): a module without FORMAT fails."""
    names = {p.stem for p in (PARSE / "formats").glob("*.py") if not p.stem.startswith("_")}
    assert names == {f.parse.__module__.rsplit(".", 1)[1] for f in F.FORMATS}


def _node(path: Path) -> str:
    """A parse module's name in the import graph: `stream`, `fast.grep`; the formats package is one node."""
    parts = path.relative_to(PARSE).with_suffix("").parts
    if parts[0] == "formats":
        return "formats"
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, nodes: set[str]) -> set[str]:
    """The parse modules a module imports, at any depth of the file (lazy imports included)."""
    here = path.relative_to(PARSE).parts[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.ImportFrom) and node.level >= 1):
            continue
        if node.level - 1 > len(here):
            continue  # (above parse/)
        base = list(here[: len(here) - (node.level - 1)]) + ([*node.module.split(".")] if node.module else [])
        for target in [".".join(base + [a.name]) for a in node.names] + [".".join(base)]:
            target = "formats" if target.split(".")[0] == "formats" else target
            if target in nodes and target != _node(path):
                out.add(target)
                break
    return out


def test_no_import_cycle_between_the_scanning_modules():
    files = [p for p in PARSE.rglob("*.py") if "formats" not in p.relative_to(PARSE).parts[:-1]]
    nodes = {_node(p) for p in files} | {"formats"}
    graph = {_node(p): _imports(p, nodes) for p in files}
    seen, stack = set(), []

    def visit(node):
        if node in stack:
            raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(node) :] + [node]))
        if node in seen:
            return
        stack.append(node)
        for dep in graph.get(node, ()):
            visit(dep)
        stack.pop()
        seen.add(node)

    for mod in graph:
        visit(mod)
    assert "fast.grep" in graph["fast.large"] and "fast.lines" in graph["stream"]  # (the graph sees the subpackage)
    # the fast route uses no private name of another parse module
    for path in (PARSE / "fast").glob("*.py"):
        private = [
            n.attr
            for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Attribute)
            and n.attr.startswith("_")
            and isinstance(n.value, ast.Name)
            and n.value.id in ("S", "logscan", "stream", "result", "workers", "grep", "F")
        ]
        assert not private, (path.name, private)


def test_rows_are_named_tuples_with_fields_defined_once():
    from dflash_doctor.parse import frame, records

    assert records.Row._fields == records.FIELDS
    assert frame.FIELDS is records.FIELDS
    for p in PARSE.rglob("*.py"):
        text = p.read_text()
        assert "FIELDS = (" not in text or p.name == "records.py", p
        assert "r[14]" not in text and "r[3]" not in text, p


def test_format_descriptions_are_frozen():
    f = F.FORMATS[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.priority = 0
