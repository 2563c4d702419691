"""Nothing printed for pasting runs code (issue 24): every command a report, a hint or a progress line suggests
is built by `textsafe.command` (each interpolated value `shlex.quote`d), and Markdown escapes every label
and log-derived string.

Each suggested command is pasted into a real `sh` (with the commands it names stubbed to record their argv):
no payload may run, and each value must arrive as the one word it was. The fleet's "details:" line is read
end to end: hostile label values written into a real Prometheus TSDB (promtool), read by `fleet`, pasted.
Markdown is rendered by a real CommonMark renderer (markdown-it, rich's own dependency), and the HTML it
makes is inspected.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time

import pytest

from dflash_doctor.names import Names
from dflash_doctor.rank.plan import _command_for, fill
from tests.conftest import FIXTURES, run_cli
from tests.hardening import tally

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")
PAYLOADS = [
    "m'$(touch PWNED)'x",  # the issue's: closes a single-quoted context around it
    "$(touch PWNED)",
    "`touch PWNED`",
    "x; touch PWNED",
    'x" && touch PWNED #',
    "x\ntouch PWNED",
    "*",
]
STUBS = ("dflash-doctor", "ssh-keygen", "ssh-keyscan", "hf")


def paste(line: str, cwd) -> list[list[str]]:
    """Run `line` as a user pasting it would, in `cwd`, with the tools it names stubbed: the argv of each
    stubbed call, in order. Fails when any payload ran (a PWNED file)."""
    bin_dir = cwd / "stub-bin"
    bin_dir.mkdir(exist_ok=True)
    record = shlex.quote(str(cwd / "argv"))
    for name in STUBS:  # each records its argv, NUL-separated, a newline word after it
        stub = bin_dir / name
        stub.write_text(f"#!/bin/sh\nprintf '%s\\0' \"$@\" >> {record}\nprintf '\\n\\0' >> {record}\n")
        stub.chmod(0o755)
    (cwd / "argv").write_text("")
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin")
    for shell in ("sh", "bash"):
        subprocess.run([shell, "-c", line], cwd=cwd, capture_output=True, timeout=30, env=env)
    assert not (cwd / "PWNED").exists(), f"pasting ran code: {line!r}"
    calls: list[list[str]] = []
    cur: list[str] = []
    for word in (cwd / "argv").read_text().split("\0")[:-1]:
        if word == "\n":
            calls.append(cur)
            cur = []
        else:
            cur.append(word)
    assert calls[: len(calls) // 2] == calls[len(calls) // 2 :], "sh and bash read it differently"
    return calls[: len(calls) // 2]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_command_helper_keeps_every_value_one_word(tmp_path, payload):
    from dflash_doctor.textsafe import Placeholder, command

    tally.hostile_input("pasteable: command() word")
    line = command("dflash-doctor", "check", "bundle", payload, "--target", Placeholder("TARGET"))
    assert paste(line, tmp_path) == [["check", "bundle", payload, "--target", "TARGET"]]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_fix_plans_commands_quote_names_from_evidence(tmp_path, payload):
    """A drafter, target, host or log named by the evidence (a model name read from a log, a directory) goes
    into the next command and into each cause's fix/next step. Before: fill() spliced them in raw."""
    tally.hostile_input("pasteable: fix plan names")
    names = Names(drafter=payload, target=payload, engine="vllm", engine_version="0.20.1", logs=(payload,))
    spans = {
        "run `dflash-doctor inspect-model DRAFTER --target TARGET --engine NAME==VERSION`": [
            ["inspect-model", payload, "--target", payload, "--engine", "vllm==0.20.1"]
        ],
        "`dflash-doctor probe --ablate offset`": [
            ["probe", "--target", payload, "--drafter", payload, "--ablate", "offset"]
        ],
        "`dflash-doctor diagnose --drafter DRAFTER`": [["diagnose", "--drafter", payload]],
    }
    for text, want in spans.items():
        out = fill(text, names)
        cmd = out[out.index("`") + 1 : out.rindex("`")]  # (a name may hold backticks itself)
        assert paste(cmd, tmp_path) == want, cmd
    for kind in ("drafter", "probe", "engine-source"):
        cmd = _command_for(kind, names, None, ())
        (call,) = paste(cmd, tmp_path)
        assert call[0] in ("inspect-model", "probe", "check")
    rerun = _command_for("target", names, ["dflash-doctor", "diagnose", "--log", payload], ())
    assert paste(rerun, tmp_path) == [["diagnose", "--log", payload, "--target", payload]]


@pytest.mark.parametrize("payload", ["$(touch PWNED)", "x; touch PWNED"])
def test_the_hint_for_a_file_given_as_a_host(tmp_path, payload):
    """`check host FILE`: 'did you mean `dflash-doctor check bundle FILE`?'. Before: FILE spliced in raw."""
    tally.hostile_input("pasteable: check bundle hint")
    bundle = tmp_path / f"{payload}.tar.gz"
    bundle.write_bytes(b"")
    res = run_cli("check", "host", str(bundle))
    assert res.returncode == 2, res.stderr
    hint = next(ln for ln in res.stderr.splitlines() if ln.startswith("hint:"))
    cmd = re.search(r"`([^`]*)`", hint).group(1)
    assert paste(cmd, tmp_path) == [["check", "bundle", str(bundle)]]


def test_the_collect_line_names_the_bundle_as_one_word(tmp_path):
    """`collect -o PATH` ends with 'diagnose it with: dflash-doctor check bundle PATH'. Before: raw."""
    tally.hostile_input("pasteable: collect's check bundle line")
    out = tmp_path / "b $(touch PWNED).tar.gz"
    res = run_cli("collect", "local", "--log", LOG, "-o", str(out))
    assert res.returncode == 0, res.stderr
    line = next(ln for ln in res.stderr.splitlines() if "diagnose it with:" in ln)
    assert paste(line.split("diagnose it with: ", 1)[1], tmp_path) == [["check", "bundle", str(out)]]


# -- fleet: label values from Prometheus ------------------------------------------------------------------

HOSTILE_MODELS = ["m'$(touch PWNED)'x", "<img src=x onerror=alert(1)> [a](javascript:alert(1)) **b** `c` |d|"]


@pytest.fixture(scope="module")
def hostile_fleet(tmp_path_factory):
    """A real Prometheus holding, per hostile model name, three healthy engines and one broken one (an
    outlier with a top cause: the row that gets a "details:" command)."""
    from tests.prometheus.promserver import PROMTOOL_BIN, prometheus_available, start_prometheus
    from tests.prometheus.tsdbgen import CLIFF, GOOD, GenEngine, create_blocks, write_openmetrics

    reason = prometheus_available()
    if reason:
        pytest.skip(f"needs a real Prometheus: {reason}")
    tmp = tmp_path_factory.mktemp("fleet")
    end = int(time.time()) // 60 * 60
    engines = [
        GenEngine(f"10.0.{m}.{i}:8000", model, CLIFF if i == 3 else GOOD, 40.0, restart=False)
        for m, model in enumerate(HOSTILE_MODELS)
        for i in range(4)
    ]
    write_openmetrics(tmp / "h.om", engines, end - 2 * 3600, end, 60)
    create_blocks(PROMTOOL_BIN, tmp / "h.om", tmp / "data")
    prom = start_prometheus(tmp, storage=tmp / "data")
    args = ["fleet", "--prometheus", prom.url, "--since", "2h", "--step", "5m", "--until", str(end)]
    try:
        yield {
            fmt: run_cli(*args, "--format", fmt, env={"COLUMNS": "1000"}) for fmt in ("terminal", "markdown", "json")
        }
    finally:
        prom.stop()


@pytest.mark.slow
@pytest.mark.prometheus
def test_the_fleet_details_command_runs_nothing(hostile_fleet, tmp_path):
    """The issue's attack: a series labelled model_name="m'$(touch x)'x" created the file when the suggested
    command was pasted. The selector now arrives as one word and selects that engine's label values."""
    from dflash_doctor.prometheus.queries import parse_matchers

    tally.hostile_input("pasteable: fleet details line", len(HOSTILE_MODELS))
    res = hostile_fleet["terminal"]
    assert res.returncode == 1, res.stderr
    lines = [ln.split("details: ", 1)[1] for ln in res.stdout.splitlines() if "details: " in ln]
    assert len(lines) == len(HOSTILE_MODELS), res.stdout
    seen = set()
    for line in lines:
        (call,) = paste(line, tmp_path)
        assert call[:3] == ["diagnose", "--prometheus", "URL"] and call[3] == "--selector"
        labels = {name: value for name, op, value in parse_matchers(call[4])}
        assert labels["model_name"] in HOSTILE_MODELS and labels["instance"].endswith(".3:8000")
        seen.add(labels["model_name"])
    assert seen == set(HOSTILE_MODELS)


@pytest.mark.slow
@pytest.mark.prometheus
def test_the_fleet_markdown_escapes_label_values(hostile_fleet):
    """Before: only '|' was escaped; `<img …>` reached the page as HTML, `**b**` as bold."""
    from markdown_it import MarkdownIt

    tally.hostile_input("markdown: fleet labels")
    res = hostile_fleet["markdown"]
    assert res.returncode == 1, res.stderr
    html = MarkdownIt("commonmark").enable("table").render(res.stdout)
    _assert_inert(html)
    rows = [ln for ln in res.stdout.splitlines() if ln.startswith("| ") and "10.0." in ln]
    assert len(rows) == 8
    assert set(_cells_per_row(res.stdout)) == {9}, "a label split a table cell"
    assert json.loads(hostile_fleet["json"].stdout)["engines"]  # the JSON form carries them as data


def _cells_per_row(text: str) -> list[int]:
    from markdown_it import MarkdownIt

    counts: list[int] = []
    for tok in MarkdownIt("commonmark").enable("table").parse(text):
        if tok.type == "tr_open":
            counts.append(0)
        elif tok.type in ("td_open", "th_open"):
            counts[-1] += 1
    return counts


def _assert_inert(html: str) -> None:
    assert "<img" not in html and "javascript:" not in html.replace("javascript:alert(1))", "")
    assert '<a href="javascript' not in html
    assert "<strong>b</strong>" not in html and "<code>c</code>" not in html


@pytest.mark.parametrize(
    "text",
    [
        "<img src=x onerror=alert(1)>",
        "[click](javascript:alert(1))",
        "![x](http://evil/p.png)",
        "**b** _i_ ~~s~~",
        "`code` ``x``",
        "a | b | c",
        "&#x202e;&lt;",
        "<script>alert(1)</script>",
    ],
)
def test_markdown_text_is_inert(text):
    from markdown_it import MarkdownIt

    from dflash_doctor.textsafe import markdown_text

    tally.hostile_input("markdown: markdown_text")
    cell = markdown_text(text)
    html = MarkdownIt("commonmark").enable("table").render(f"| a | b |\n|---|---|\n| {cell} | x |\n")
    assert "<img" not in html and "<script" not in html and "<a " not in html and "<strong>" not in html
    assert "<code>" not in html and "<s>" not in html and "&#x202e;" not in html.replace("&amp;#x202e;", "")
    assert _cells_per_row(f"| a | b |\n|---|---|\n| {cell} | x |\n") == [2, 2], html
