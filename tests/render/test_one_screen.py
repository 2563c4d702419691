"""Issue 25, "a doctor's visit that fits one screen": each numbered problem of the issue as a test that failed on
the code before it (the report was 166 lines at 80 columns, commands were cut mid-argument, `next:` asked for a
GPU probe the engine source had made pointless, …)."""

import json
import os
import re
import stat
import subprocess

import pytest

from tests.conftest import FIXTURES, ROOT, run_cli
from tests.render.test_report_reads_right import run_tty

SEED = str(FIXTURES / "hosts" / "seed")
HEALTHY = str(FIXTURES / "hosts" / "healthy-qwen3-8b")
SEED_LOG = str(FIXTURES / "seed" / "vllm-0.20.1.log")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _seed(*flags: str, cols: str | None = "80") -> list[str]:
    env = {"COLUMNS": cols} if cols else {}
    r = run_cli("check", "bundle", SEED, *flags, env=env)
    assert r.returncode == 1, r.stderr
    return r.stdout.splitlines()


# --- 1. the answer scrolls away ---------------------------------------------------------------------------


def test_the_seed_at_80_columns_fits_one_screen_with_the_answer_in_its_first_24_lines():
    lines = _seed()
    assert len(lines) <= 30
    first = "\n".join(lines[:24])
    assert "τ = 1.18" in first and "expected ≈ 6.61" in first
    assert re.search(r"1\. swa-ignored +confidence 0\.\d\d", first)
    assert re.search(r"2\. layer-offset +confidence 0\.\d\d", first)
    assert "fix plan: upgrade vLLM 0.20.1 → 0.26.0 or later" in first
    assert "next: " in first and "dflash-doctor check host gpu-seed" in first
    assert "verdict: problem" in first


def test_the_report_ends_on_the_verdict_line():
    for cols in ("80", "200", None):
        lines = _seed(cols=cols)
        assert lines[-1].startswith("verdict: problem: 2 likely causes"), lines[-1]


def test_the_seed_on_a_real_80x50_terminal_fits_the_screen():
    out = ANSI.sub("", run_tty("check", "bundle", SEED, cols=80, rows=50)).replace("\r", "")
    lines = out.rstrip("\n").splitlines()
    assert len(lines) <= 30 and lines[-1].startswith("verdict: problem")


@pytest.mark.parametrize("cols,most", [("200", 15), (None, 15)])
def test_wide_and_piped_are_one_screen_too(cols, most):
    assert len(_seed(cols=cols)) <= most


def test_one_line_per_group_of_checks_with_the_input_each_waits_for():
    lines = _seed(cols=None)
    assert any(x.startswith("✗ 6 failed: acceptance-curve, tau-vs-baseline") for x in lines)
    assert any(x.startswith("! 3 warned: drafter-swa, k-choice, drafter-card") for x in lines)
    waiting = [x for x in lines if x.startswith("? 2 waiting for probe:")]
    assert len(waiting) == 1 and "run dflash-doctor probe --target Qwen/Qwen3.6-27B" in waiting[0]
    assert any(x.startswith("✓ 22 passed") for x in lines)
    assert not any(x.startswith("Checks") or x.startswith("Evidence cited") for x in lines)


def test_details_gives_the_full_report_and_vv_every_detail():
    full = _seed("-v", cols=None)
    assert full == _seed("--details", cols=None)
    text = "\n".join(full)
    assert "Causes, by what fixing them buys" in text and "Evidence cited" in text and "-vv shows" in text
    every = "\n".join(_seed("-vv", cols=None))
    assert "? drafter-config" not in every and "✓ drafter-config:" in every  # every check on its own line
    assert (ROOT / "tests" / "golden" / "seed.full-80.txt").read_text().startswith("dflash-doctor gpu-seed")


def test_markdown_and_json_keep_their_forms():
    md = run_cli("check", "bundle", SEED, "--format", "markdown").stdout
    assert md.startswith("## dflash-doctor report: gpu-seed (bundle)") and "| position |" in md
    doc = json.loads(run_cli("check", "bundle", SEED, "--format", "json").stdout)
    assert doc["schema"] == "dflash-doctor/report@1" and len(doc["findings"]) > 30


# --- 2. no way to install it ------------------------------------------------------------------------------


def test_the_readme_says_how_and_where_to_install_before_the_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme.index("## Install")
    assert install < readme.index("## diagnose")
    section = readme[install : readme.index("\n## ", install + 5)]
    for line in ("pipx install .", "pip install .", "python -m build", "pipx install dist/"):
        assert line in section, line
    assert "laptop" in section and "SSH" in section and "not needed" in section
    for extra in ("`probe`", "`plot`", "`parquet`"):
        assert extra in section, extra
    assert "pip install dflash-doctor\n" not in readme  # CI examples say where the package comes from


def _fake_tool(tmp_path, code: int):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "dflash-doctor"
    tool.write_text(f"#!/bin/sh\necho report\nexit {code}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return bin_dir


@pytest.mark.parametrize("code,ok", [(1, True), (0, False), (3, False)])
def test_make_demo_says_the_exit_status_and_succeeds_only_on_1(tmp_path, code, ok):
    bin_dir = _fake_tool(tmp_path, code)
    r = subprocess.run(
        ["make", "-s", "-o", "venv", "demo", "PIP=true", f"BIN={bin_dir}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"exited with status {code}" in r.stdout
    assert (r.returncode == 0) is ok


# --- 3. bare dflash-doctor, explain -----------------------------------------------------------------------


def test_bare_dflash_doctor_is_check_host_local():
    from dflash_doctor.cli.app import bare_means_local

    assert bare_means_local([]) == ["check", "host", "local"]
    assert bare_means_local(["-v"]) == ["check", "host", "local", "-v"]
    assert bare_means_local(["--help"]) == ["--help"] and bare_means_local(["diagnose"]) == ["diagnose"]
    r = run_cli(env={"COLUMNS": "100"})
    assert r.returncode in (0, 1, 3), r.stderr
    assert r.stdout.startswith("dflash-doctor local") and "Usage:" not in r.stdout


def test_explain_a_cause_and_a_check():
    cause = run_cli("explain", "swa-ignored")
    assert cause.returncode == 0
    assert "Drafter sliding-window layers run as full attention" in cause.stdout
    assert "engine-swa:ignored" in cause.stdout and "fix: " in cause.stdout
    check = json.loads(run_cli("explain", "engine-source-swa", "--format", "json").stdout)
    assert check["kind"] == "check" and "swa-ignored" in check["related"] and check["fields"]["needs"]


def test_explain_an_unknown_name_is_one_line_with_did_you_mean():
    r = run_cli("explain", "swa-ignord")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines()[0] == "error: no cause or check is called 'swa-ignord'; did you mean swa-ignored?"


# --- 4. commands break when pasted ------------------------------------------------------------------------


def test_a_command_is_never_wrapped():
    doc = json.loads(run_cli("check", "bundle", SEED, "--format", "json").stdout)
    commands = {m for c in doc["causes"] for m in re.findall(r"`(dflash-doctor [^`]+)`", c["next_step"])}
    commands |= {m for x in doc["missing_evidence"] for m in re.findall(r"`(dflash-doctor [^`]+)`", x["reason"])}
    assert any(len(c) > 80 for c in commands)
    for view in ((), ("-v",), ("-vv",)):
        for cols in ("60", "80"):
            text = "\n".join(_seed(*view, cols=cols))
            for c in commands:
                if c in " ".join(text.split()):  # shown in this view: then whole, on one line
                    assert any(c in line for line in text.splitlines()), (view, cols, c)


def test_a_long_command_stands_on_its_own_line():
    from dflash_doctor.render.layout import Cmd, Page, Style

    page = Page(Style(width=40))
    cmd = "dflash-doctor probe --target Qwen/Qwen3.6-27B --drafter z-lab/Qwen3.6-27B-DFlash"
    page.line("next: run ", Cmd(cmd), " then look again")
    page.line("? waiting: no probe was run (`" + cmd + "`) — 2 checks")
    lines = page.text().splitlines()
    assert sum(1 for x in lines if x.strip() == cmd) == 1
    assert any(x.strip().startswith("(`" + cmd + "`)") for x in lines)
    assert all(len(x) <= 40 for x in lines if cmd not in x)


# --- 5. next steps by cost --------------------------------------------------------------------------------


def test_the_seed_next_step_is_to_act_and_check_again_not_a_gpu_probe():
    plan = json.loads(run_cli("check", "bundle", SEED, "--format", "json").stdout)["plan"]
    assert plan["next_command"] == "dflash-doctor check host gpu-seed"
    assert plan["next_why"] == "after step 1, check the host again (τ should reach ≈ 6.61)"


def test_a_healthy_verdict_proposes_nothing():
    doc = json.loads(run_cli("check", "bundle", HEALTHY, "--format", "json").stdout)
    assert doc["verdict"] == "healthy"
    assert doc["plan"]["next_command"] is None and doc["plan"]["next_why"] is None
    assert not any(x.startswith("next:") for x in run_cli("check", "bundle", HEALTHY).stdout.splitlines())


def test_a_healthy_verdict_proposes_no_step_to_separate_two_unlikely_causes(monkeypatch):
    """Two 8 % causes a probe would separate: with a healthy verdict the plan proposes nothing."""
    import dataclasses

    from dflash_doctor.check import run_checks
    from dflash_doctor.collect.inputs import FileInputs, gather_files
    from dflash_doctor.rank.plan import build_plan
    from dflash_doctor.rank.scoring import rank
    from dflash_doctor.registry import load_checks
    from dflash_doctor.settings import DEFAULT

    monkeypatch.chdir(ROOT)
    evidence = gather_files(FileInputs(logs=[SEED_LOG]))
    evidence.baselines = DEFAULT.baselines()
    checks = load_checks().checks
    knowledge = DEFAULT.knowledge()
    ranking = rank(run_checks(checks, evidence, lambda e: None), evidence, knowledge)
    unlikely = [dataclasses.replace(c, confidence=0.08) for c in ranking.causes[:2]]
    assert build_plan(unlikely, evidence, knowledge).next_command  # a problem: something to learn
    quiet = build_plan(unlikely, evidence, knowledge, healthy=True)
    assert quiet.next_command is None and quiet.next_why is None


def test_the_cheapest_input_that_changes_the_ranking_comes_first():
    """A log alone: the drafter's config (a file) decides swa-ignored — it is asked for before a host or a GPU."""
    plan = json.loads(run_cli("diagnose", "--log", SEED_LOG, "-v", "--format", "json").stdout)["plan"]
    assert plan["next_command"].endswith("--drafter z-lab/Qwen3.6-27B-DFlash")
    assert " -v" not in plan["next_command"] and "--format" not in plan["next_command"]
    assert "probe" not in plan["next_command"]


# --- 6. words and labels ----------------------------------------------------------------------------------


def test_likely_and_possible_name_their_causes():
    lines = run_cli("diagnose", "--log", SEED_LOG).stdout.splitlines()
    assert lines[0] == f"dflash-doctor {SEED_LOG}"  # headed by the file it read, not "files"
    assert "1. swa-ignored  confidence 0.27 (possible)" in lines[2]
    assert lines[-1] == "verdict: problem: 1 likely cause (2. layer-offset), 1 possible (1. swa-ignored)"


def test_a_not_applicable_check_names_the_check_that_decides():
    out = run_cli("check", "bundle", SEED, "-vv").stdout
    assert re.search(r"^– engine-drafter-swa: .*engine-source-swa decides", out, re.M)


def test_the_v2_runner_step_is_not_dimmed():
    from dflash_doctor.render import Format, Style, render
    from dflash_doctor.services.hostcheck import HostCheck, check_bundle

    report = check_bundle(SEED, HostCheck()).report
    for screen in (True, False):
        text = render(report, Format.TERMINAL, style=Style(color=True, screen=screen))
        line = next(x for x in text.splitlines() if "Run the V2 model runner" in x)
        assert "\x1b[2m" not in line, line


# --- 7. smaller ---------------------------------------------------------------------------------------------


def test_plot_without_matplotlib_is_refused_before_the_report(tmp_path, monkeypatch, capsys):
    import importlib.util

    from dflash_doctor.cli.app import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "matplotlib" else real(n, *a))
    with pytest.raises(SystemExit) as done:
        main(["diagnose", "--log", SEED_LOG, "--plot", str(tmp_path / "x.png")])
    out = capsys.readouterr()
    assert done.value.code == 2 and out.out == ""
    assert "plot" in out.err and not (tmp_path / "x.png").exists()


def test_fleet_chooses_the_step_from_the_window():
    from dflash_doctor.cli.prom_opts import choose_step

    assert choose_step(None, 6 * 3600) == 300  # 72 points over 6 h
    assert choose_step(None, 30) == 15  # never finer than a usual scrape interval, never past the window
    assert choose_step(None, 10) == 10
    assert choose_step("1m", 3600) == 60
    r = run_cli("fleet", "--prometheus", "http://127.0.0.1:9/", "--since", "30s", "--timeout", "2")
    assert "--step is longer" not in r.stderr and r.returncode != 2, r.stderr


def test_known_issues_has_a_header_fits_the_width_and_counts_exclusive_entries_once():
    r = run_cli("known-issues", "--engine", "vllm==0.20.1", env={"COLUMNS": "60"})
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Known issues for vllm==0.20.1")
    assert all(len(x) <= 60 for x in lines if "https://" not in x)
    text = " ".join(r.stdout.split())
    assert text.startswith("Known issues") and "2 may," in text and "exclude each other" in text


@pytest.mark.parametrize("group", ["check", "monitor", "checks"])
def test_a_group_without_a_subcommand_prints_its_help_and_exits_2(group):
    r = run_cli(group)
    assert r.returncode == 2 and "Usage:" in r.stdout + r.stderr


def test_layer_offset_errors_have_a_hint():
    from dflash_doctor.errors import UsageError
    from dflash_doctor.probe.layer_offset import read_dump

    with pytest.raises(UsageError) as err:
        read_dump("/nonexistent/dump.safetensors")
    assert err.value.hint and "hidden_states" in err.value.hint
    r = run_cli("layer-offset", "--target", "/tmp", "--dump", os.devnull, "--drafter", "/nonexistent")
    assert r.returncode == 2 and "hint: --drafter is the drafter's checkpoint directory" in r.stderr


def test_the_readme_test_download_is_the_four_wheels_measured():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "620 MB" not in readme and "0.92 GB" in readme and "244 + 304 + 336 + 34 MB" in readme
