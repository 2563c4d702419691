"""Issue 17: the report a person reads. The answer and one fix plan first, the facts already collected used in
every suggested command, one error line for a mistake, each thing said once, piped output that greps whole,
statuses that mean what they show, stable evidence refs."""

from __future__ import annotations

import json
import os
import re

import pytest

from tests.conftest import FIXTURES, ROOT, run_cli

SEED_LOG = str(FIXTURES / "seed" / "vllm-0.20.1.log")
SEED = str(FIXTURES / "hosts" / "seed")
ANSI = re.compile(r"\x1b\[")


def run_tty(*args: str, env: dict | None = None, cols: int = 80, rows: int = 50) -> str:
    """The command on a pseudo-terminal of cols × rows, as a person sees it (colour allowed)."""
    import fcntl
    import pty
    import struct
    import subprocess
    import sys
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    e = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "TERM")}
    e.update({"PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}, **(env or {}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "dflash_doctor", *args],
        stdout=slave,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=e,
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


# --- 1. answer first ---------------------------------------------------------------------------------


def test_the_seed_first_screen_names_the_top_two_causes_and_one_fix_plan():
    out = run_tty("check", "bundle", SEED, env={"NO_COLOR": "1"})
    screen = out.splitlines()
    text = "\n".join(screen)
    assert all(len(x) <= 80 or x.strip().startswith("dflash-doctor ") for x in screen)  # a command is never cut
    assert "1. swa-ignored  confidence 0.87" in text and "2. layer-offset  confidence 0.56" in text
    assert re.search(r"fix plan: upgrade vLLM 0\.20\.1 → 0\.26\.0 or later: fixes 1 and 2", text)
    assert "next: after step 1, check the host again" in text
    # one screen, ending on the verdict; -v gives the causes in full
    assert len(screen) <= 24 and screen[-1].startswith("verdict: problem")
    full = run_tty("check", "bundle", SEED, "-v", env={"NO_COLOR": "1"})
    assert full.index("Causes, by what fixing them buys") < full.index("1. Drafter sliding-window")


def test_causes_are_ordered_by_what_fixing_them_buys_and_one_upgrade_fixes_both():
    # issue 17 item 3: with --engine vllm==0.20.1, layer-offset (τ 1.41 if fixed, ≥ 0.22) was ranked above
    # swa-ignored (τ 5.55 if fixed, ≥ 0.26): following cause 1 left the deployment broken.
    r = run_cli("diagnose", "--log", SEED_LOG, "--engine", "vllm==0.20.1", "--format", "json")
    plan = json.loads(r.stdout)["plan"]
    order = [c["id"] for c in plan["order"] if not c["explained_by"]]
    assert order.index("swa-ignored") < order.index("layer-offset")
    step = plan["steps"][0]
    assert step["kind"] == "upgrade-engine" and "0.26.0" in step["action"]
    assert {"swa-ignored", "layer-offset"} <= set(step["fixes"])
    assert step["expected_tau"] == pytest.approx(6.61, abs=0.05)
    assert any("#47914" in s for s in step["sources"]) and any("#40727" in s for s in step["sources"])


def test_a_cause_a_deeper_one_explains_is_shown_under_it():
    plan = json.loads(run_cli("check", "bundle", SEED, "--format", "json").stdout)["plan"]
    by = {c["id"]: c for c in plan["order"]}
    assert by["engine-bug"]["explained_by"] == "swa-ignored" and by["engine-bug"]["step"] is None
    ids = [c["id"] for c in plan["order"]]
    assert ids.index("engine-bug") == ids.index("swa-ignored") + 1
    text = run_cli("check", "bundle", SEED, "-v").stdout
    assert re.search(r"explains: engine-bug \(0\.\d\d\)", text)


# --- 2/3. facts already collected ---------------------------------------------------------------------


def test_the_release_the_log_names_is_used_and_the_bundles_engine_source_drops_the_engine_hint():
    log_only = run_cli("diagnose", "--log", SEED_LOG, "-v").stdout
    assert "NAME==VERSION" not in log_only and "--engine vllm==0.20.1" in log_only
    assert re.search(
        r"next: the drafter config decides swa-ignored: "
        r"dflash-doctor diagnose --log \S+ --drafter z-lab/Qwen3.6-27B-DFlash$",
        log_only,
        re.M,
    )
    bundle = run_cli("check", "bundle", SEED, "-v").stdout
    assert "NAME==VERSION" not in bundle and "--engine" not in bundle.split("Checks")[0]
    assert "inspect-model z-lab/Qwen3.6-27B-DFlash`" in bundle  # the drafter named, no release hint


def test_logs_uses_the_release_its_startup_line_names():
    rep = json.loads(run_cli("logs", SEED_LOG, "--format", "json").stdout)
    assert any(e["kind"] == "engine" and e["value"]["version"] == "0.20.1" for e in rep["evidence"])
    assert {f["check"] for f in rep["findings"]} >= {"engine-layer-map", "known-issues"}


def test_an_uncached_drafter_still_matches_its_pair_baseline_and_its_download_hint_is_said_once(tmp_path):
    log = tmp_path / "metrics-only.log"
    with open(SEED_LOG, encoding="utf-8") as fh:
        log.write_text("".join(x for x in fh if "SpecDecoding" in x))
    r = run_cli(
        "diagnose",
        "--log",
        str(log),
        "--drafter",
        "z-lab/Qwen3.6-27B-DFlash",
        env={"HF_HUB_CACHE": str(tmp_path / "empty-cache")},
    )
    assert "not named in the evidence" not in r.stdout
    assert "expected ≈ 6.61 (z-lab/Qwen3.6-27B-DFlash" in r.stdout
    assert r.stdout.count("hf download") == 1
    full = run_cli(
        "diagnose",
        "--log",
        str(log),
        "--drafter",
        "z-lab/Qwen3.6-27B-DFlash",
        "-v",
        env={"HF_HUB_CACHE": str(tmp_path / "empty-cache")},
    ).stdout
    assert full.count("hf download") == 1


# --- 4. a saved probe matches the deployment ----------------------------------------------------------


def _probe_doc(drafter: str, target: str) -> dict:
    from tests.probe.test_diagnose_with_probe import probe_doc

    return {**probe_doc(6.5, 1.2), "drafter": drafter, "target": target}


def test_a_probe_of_the_served_pair_is_used_and_another_pair_is_refused(tmp_path):
    same = tmp_path / "same.json"
    same.write_text(json.dumps(_probe_doc("/models/Qwen3.6-27B-DFlash", "Qwen/Qwen3.6-27B")))
    rep = json.loads(run_cli("check", "bundle", SEED, "--probe-result", str(same), "--format", "json").stdout)
    assert any(e["kind"] == "probe" for e in rep["evidence"])
    other = tmp_path / "other.json"
    other.write_text(json.dumps(_probe_doc("z-lab/Qwen3-8B-DFlash-b16", "Qwen/Qwen3-8B")))
    for cmd in (["check", "bundle", SEED], ["diagnose", "--log", SEED_LOG]):
        r = run_cli(*cmd, "--probe-result", str(other))
        assert r.returncode == 2 and r.stdout == "", r.stderr
        first = r.stderr.splitlines()[0]
        assert "z-lab/Qwen3-8B-DFlash-b16 on Qwen/Qwen3-8B" in first and "z-lab/Qwen3.6-27B-DFlash" in first
        forced = run_cli(*cmd, "--probe-result", str(other), "--force-probe-pair", "--format", "json")
        assert forced.returncode in (0, 1) and any(
            "--force-probe-pair" in n for n in json.loads(forced.stdout)["notes"]
        )


# --- 5. one error line for a mistake ------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,code,words",
    [
        (["diagnose", "--log", "nope.log"], 2, "--log nope.log: no such file"),
        (["diagnose"], 2, "nothing to diagnose"),
        (["check", "host", "fixtures/hosts/seed"], 2, "is a directory here, not a host"),
        (["check", "bundle", "ssh://ops@gpu-7"], 2, "is a host, not a bundle"),
        (["logs", "nope.log"], 2, "nope.log: no such file"),
        (["diagnose", "--engine", "vllm==0.20.1"], 2, "an engine release alone is nothing to diagnose"),
        (["diagnose", "--log", "-"], 3, "is not an engine log"),
    ],
    ids=["missing-log", "nothing-given", "path-as-host", "host-as-bundle", "logs-missing", "engine-alone", "not-a-log"],
)
def test_a_mistake_is_one_error_line_with_a_hint(args, code, words):
    r = run_cli(*args, input="Mean acceptance length: 1.18\n", env={"COLUMNS": "300"})
    assert r.returncode == code, r.stderr
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0].startswith("error: ") and words in lines[0]
    assert len(lines) == 2 and lines[1].startswith("hint: ")


def test_a_path_given_as_a_host_suggests_check_bundle():
    r = run_cli("check", "host", SEED)
    assert f"did you mean `dflash-doctor check bundle {SEED}`?" in r.stderr


def test_a_line_that_is_not_a_metrics_line_is_not_read_as_one(tmp_path):
    """`echo "Mean acceptance length: 1.18" | diagnose --log -` answered "Speculative decoding misconfigured at
    launch". With another input beside it, the report still does not blame the launch on that line."""
    r = run_cli(
        "diagnose",
        "--log",
        "-",
        "--drafter",
        str(FIXTURES / "models" / "Qwen3.6-27B-DFlash"),
        "--format",
        "json",
        input="Mean acceptance length: 1.18\n",
    )
    rep = json.loads(r.stdout)
    assert "launch-config" not in [c["id"] for c in rep["causes"]]
    active = next(f for f in rep["findings"] if f["check"] == "spec-decode-active")
    assert active["status"] == "could-not-check"


# --- 6. say it once -----------------------------------------------------------------------------------


def test_each_missing_input_is_one_line_with_the_checks_that_wait_for_it():
    out = run_cli("diagnose", "--log", SEED_LOG, "-v").stdout
    drafter_lines = [x for x in out.splitlines() if x.startswith("? drafter:")]
    assert len(drafter_lines) == 1 and "checks waiting" in drafter_lines[0]
    assert "could not check: drafter" not in out  # folded, not one line per check
    assert "Missing evidence" not in out
    verbose = run_cli("diagnose", "--log", SEED_LOG, "-vv").stdout
    assert "? drafter-config: waiting for drafter" in verbose  # -v shows every line, the reason still once
    assert verbose.count("no drafter given") == 1


def test_a_fleet_prints_one_line_per_unreachable_host():
    from tests.sshd import free_port

    hosts = [f"ssh://nobody@127.0.0.1:{free_port()}", f"ssh://nobody@127.0.0.1:{free_port()}"]
    r = run_cli("check", "host", *hosts, "--known-hosts", os.devnull, "--timeout", "5")
    assert r.returncode == 3
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("dflash-doctor fleet: 2 hosts") and len(lines) == 3, r.stdout
    assert all("unreachable" in x for x in lines[1:])


def test_several_bundles_make_a_fleet_table():
    r = run_cli("check", "bundle", SEED, str(FIXTURES / "hosts" / "healthy-qwen3-8b"))
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("dflash-doctor fleet: 2 bundles")
    assert re.match(r"✗ .*seed +problem +τ 1\.18 +swa-ignored \(0\.87\) — fix: upgrade vLLM", lines[1])
    assert re.match(r"✓ .*healthy-qwen3-8b +healthy +τ 6\.95", lines[2])
    doc = json.loads(
        run_cli("check", "bundle", SEED, str(FIXTURES / "hosts" / "healthy-qwen3-8b"), "--format", "json").stdout
    )
    assert doc["schema"] == "dflash-doctor/fleet@1" and doc["kind"] == "bundle" and len(doc["hosts"]) == 2


# --- 7. machine-friendly when piped -------------------------------------------------------------------


def test_piped_output_is_one_record_per_line_without_trailing_spaces():
    out = run_cli("check", "bundle", SEED, "-v").stdout
    assert not [x for x in out.splitlines() if x != x.rstrip()]
    assert re.search(r"^2\. Target hidden states .*\[layer-offset\]  confidence 0\.56$", out, re.M)
    assert max(len(x) for x in out.splitlines()) > 150  # nothing wrapped at 100 any more
    assert not ANSI.search(out)


def test_columns_is_honoured_and_continuation_lines_are_indented_under_their_record():
    out = run_cli("check", "bundle", SEED, "-v", env={"COLUMNS": "60"}).stdout
    lines = out.splitlines()
    assert all(len(x) <= 60 or x.strip().lstrip("(`").startswith("dflash-doctor ") for x in lines)
    i = next(n for n, x in enumerate(lines) if x.startswith("   + (+2.5) this engine version runs"))
    assert lines[i + 1].startswith(" " * 12) and lines[i + 1].strip()


def test_colour_on_a_terminal_and_none_with_no_color_or_a_dumb_terminal():
    assert ANSI.search(run_tty("check", "bundle", SEED))
    assert not ANSI.search(run_tty("check", "bundle", SEED, env={"NO_COLOR": "1"}))
    assert not ANSI.search(run_tty("check", "bundle", SEED, env={"TERM": "dumb"}))


# --- 8. statuses that mean what they show, stable refs ------------------------------------------------


def test_no_tick_on_a_check_another_decides_and_no_python_repr():
    out = run_cli("check", "bundle", SEED, "-vv").stdout
    assert not re.search(r"^✓ engine-(drafter-swa|layer-map):", out, re.M)
    assert re.search(r"^– engine-drafter-swa: the installed engine source was read", out, re.M)
    assert "{'" not in out and "cost model, in target decode steps" in out


def test_evidence_refs_are_the_same_on_every_run_and_explained():
    runs = [json.loads(run_cli("check", "bundle", SEED, "--format", "json").stdout) for _ in range(3)]
    keyed = [[(e["ref"], e["kind"], e["source"]["location"]) for e in r["evidence"]] for r in runs]
    assert keyed[0] == keyed[1] == keyed[2]
    assert runs[0]["evidence"][0]["kind"] == "acceptance"
    text = run_cli("check", "bundle", SEED, "-v").stdout
    cited = set(re.findall(r"\[(E\d+(?:, E\d+)*)\]", text))
    legend = text.split("Evidence cited", 1)[1]
    for group in cited:
        for ref in group.split(", "):
            assert re.search(rf"^  {ref} +\w", legend, re.M), ref


# --- 9. exit codes follow the verdict -----------------------------------------------------------------


def test_unsupported_format_values_are_usage_errors():
    for args in (
        ["probe", "--target", "T", "--drafter", "D", "-f", "markdown"],
        ["diagnose", "--log", SEED_LOG, "--format", "yaml"],
        ["layer-offset", "--target", "T", "--dump", "x", "-f", "markdown"],
    ):
        r = run_cli(*args)
        assert r.returncode == 2 and r.stdout == "" and "Invalid value for '--format'" in r.stderr, args


# --- 10. help like a kept CLI -------------------------------------------------------------------------


def _commands() -> list[list[str]]:
    return [
        ["diagnose"],
        ["logs"],
        ["inspect-model"],
        ["collect"],
        ["probe"],
        ["layer-offset"],
        ["gate"],
        ["fleet"],
        ["known-issues"],
        ["check", "host"],
        ["check", "bundle"],
        ["monitor", "rules"],
        ["monitor", "grafana"],
        ["checks", "list"],
    ]


@pytest.mark.parametrize("cmd", _commands(), ids=lambda c: " ".join(c))
def test_every_command_help_has_examples_metavars_and_nothing_cut_at_80_columns(cmd):
    r = run_cli(*cmd, "--help", env={"COLUMNS": "80"})
    assert r.returncode == 0
    out = r.stdout
    assert "Examples:" in out and f"dflash-doctor {' '.join(cmd)}" in out.split("Examples:")[1]
    assert "<str>" not in out and "<int" not in out and "<float>" not in out
    assert "…" not in out.split("Examples:")[0]  # no option name or help cut short
    usage = out.splitlines()[0]
    assert "{" not in usage
    assert not [x for x in out.splitlines() if x != x.rstrip()]


def test_completion_is_on_and_the_metavars_say_what_goes_there():
    root = run_cli("--help", env={"COLUMNS": "80"}).stdout
    assert "--install-completion" in root and "Exit codes:" in root
    diag = run_cli("diagnose", "--help", env={"COLUMNS": "80"}).stdout
    assert "--log LOG" in diag and "--drafter DIR|REPO_ID" in diag and "--engine NAME==VERSION" in diag
    host = run_cli("check", "host", "--help", env={"COLUMNS": "80"}).stdout
    assert "ssh://USER@HOST[:PORT]" in host


# --- lesser ---------------------------------------------------------------------------------------------


def test_the_same_log_twice_counts_once(tmp_path):
    one = json.loads(run_cli("diagnose", "--log", SEED_LOG, "--format", "json").stdout)
    two = run_cli("diagnose", "--log", SEED_LOG, "--log", os.path.relpath(SEED_LOG), "--format", "json")
    assert json.loads(two.stdout)["acceptance"]["drafts"] == one["acceptance"]["drafts"]
    assert "given twice" in two.stderr


def test_the_csv_writes_integers_as_integers(tmp_path):
    out = tmp_path / "x.csv"
    run_cli("logs", SEED_LOG, "--csv", str(out))
    header, first = out.read_text().splitlines()[:2]
    row = dict(zip(header.split(","), first.split(","), strict=False))
    assert row["line_no"] == "43" and row["drafts"] == "1751" and row["k"] == "15"


def test_markdown_keeps_commands_as_code_spans():
    md = run_cli("diagnose", "--log", SEED_LOG, "--format", "markdown").stdout
    assert "\\`" not in md and "`dflash-doctor inspect-model z-lab/Qwen3.6-27B-DFlash" in md


def test_the_html_plot_tells_each_value_on_hover_and_the_gate_plot_draws_its_threshold(tmp_path):
    page = tmp_path / "p.html"
    r = run_cli(
        "gate", "--log", SEED_LOG, "--min-acceptance-length", "3", "--min-position-rate", "1:0.5", "--plot", str(page)
    )
    assert r.returncode == 1
    text = page.read_text()
    assert "<script" not in text and text.count("<title>position") >= 15 and "gate: τ ≥ 3" in text
    assert "reference τ 6.61" in text and "gate: position 1 rate ≥ 0.5" in text


def test_an_idle_window_says_no_drafts_in_the_window(tmp_path):
    a, b = tmp_path / "a.prom", tmp_path / "b.prom"
    text = (FIXTURES / "logs" / "vllm-metrics-1.prom").read_text()
    a.write_text(text)
    b.write_text(text)  # the same counters twice: nothing was drafted between the scrapes
    r = run_cli("diagnose", "--metrics", str(a), "--metrics", str(b))
    assert r.returncode == 3
    assert "verdict: insufficient-data: no drafts between the 2 scrapes" in r.stdout
    assert "no acceptance numbers" not in r.stdout
