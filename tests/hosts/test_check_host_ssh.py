"""`check host` over a real SSH connection against a fake deployment: the whole path, end to end."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dflash_doctor.collect.host import READONLY_SCRIPTS, HostOptions, collect_host
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.hosts.ssh import SSHHost
from tests.conftest import run_cli
from tests.hosts.fakedeploy import SECRET_API_KEY, SECRET_HF_TOKEN, scenarios, write_big_log

pytestmark = pytest.mark.ssh
SECRETS = (SECRET_API_KEY, SECRET_HF_TOKEN, "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY")


def _check(sshd, dep, *extra, fmt="json"):
    return run_cli(
        "check",
        "host",
        "testhost",
        "--ssh-config",
        str(sshd.ssh_config),
        "--pid",
        str(dep.proc.pid),
        "--format",
        fmt,
        *extra,
    )


def _kinds(doc):
    return {e["kind"]: e for e in doc["evidence"]}


def test_full_check_over_ssh_finds_the_seed_causes(sshd, seed_deployment):
    res = _check(sshd, seed_deployment)
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    assert doc["acceptance"]["mean_acceptance_length"] == pytest.approx(1.18, abs=0.01)
    ev = _kinds(doc)
    assert ev["engine"]["value"]["version"] == "0.20.1"
    src = ev["engine-source"]["value"]
    assert (
        src["layer_map"]["V1"]["value"] == "raw"
        and src["swa"]["DFlashDraftModel"]["reads_layer_types"]["value"] is False
    )
    assert ev["launch"]["value"]["method"] == "dflash"
    drafter = ev["drafter"]["value"]
    assert drafter["sliding_window"] == 2048 and drafter["method"] == "dflash"
    assert any(w["kind"] == "under-training" for w in drafter["card"])
    assert drafter["weights"]["format"] == "safetensors" and not drafter["weights"]["problems"]
    assert (
        ev["metrics"]["value"]["scraped_on_host"] and "spec_decode_num_drafts_total" in ev["metrics"]["value"]["text"]
    )
    assert ev["gpu"]["value"]["present"] is False  # absent is a fact, not an error
    assert ev["environment"]["value"]["VLLM_LOG_STATS_INTERVAL"] == "10"
    assert ev["environment"]["value"]["HF_TOKEN"] == "***REDACTED***"  # set, value never kept
    causes = [c["id"] for c in doc["causes"]]
    assert causes[0] == "swa-ignored" and "layer-offset" in causes[:3]
    host = ev["host"]["value"]
    assert 0 < host["bytes_received"] < 200_000
    assert "received" in res.stderr


def test_secrets_are_redacted_in_every_format(sshd, seed_deployment):
    for fmt in ("json", "markdown", "terminal"):
        res = _check(sshd, seed_deployment, fmt=fmt)
        assert res.returncode == 1, res.stderr
        for secret in SECRETS:
            assert secret not in res.stdout and secret not in res.stderr, (fmt, secret)
        assert "REDACTED" in res.stdout or fmt != "json"


def test_a_200_mb_log_is_filtered_on_the_host(sshd, seed_deployment, tmp_path):
    big = tmp_path / "big.log"
    write_big_log(big, scenarios()["seed"], 200_000_000)
    res = _check(sshd, seed_deployment, "--log", str(big))
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    host = _kinds(doc)["host"]["value"]
    assert host["log_bytes"] >= 200_000_000
    assert host["bytes_received"] < 1_000_000, host
    assert doc["acceptance"]["mean_acceptance_length"] == pytest.approx(1.18, abs=0.01)
    assert "filtered on the host" in res.stderr


def test_hostile_log_names_create_nothing(sshd, seed_deployment, tmp_path):
    for name in (
        f"{tmp_path}/x; touch {tmp_path}/PWNED",
        f"$(touch {tmp_path}/PWNED2)",
        f"`touch {tmp_path}/PWNED3`",
        "x; touch PWNED",
    ):
        res = _check(sshd, seed_deployment, "--log", name)
        assert res.returncode in (1, 3), res.stderr
        doc = json.loads(res.stdout)
        assert any("could not check log" in f["message"] for f in doc["findings"])
    assert not list(tmp_path.glob("PWNED*"))
    assert not Path("/root/PWNED").exists() and not Path("PWNED").exists()


def test_every_command_the_collector_runs_is_read_only(sshd, seed_deployment):
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as host:
        collect_host(host, HostOptions(pid=seed_deployment.proc.pid))
        commands = list(host.commands)
    assert len(commands) >= 4  # survey (processes + GPUs), log, engine (locate, source, /metrics), models
    for argv in commands:
        prog = argv[0]
        # no interpreter of the host's is ever run (not the serving process's, not any other)
        assert "python" not in os.path.basename(prog) and prog != str(seed_deployment.python), argv
        if prog == "sh":
            assert argv[1] == "-c" and argv[2] in READONLY_SCRIPTS, argv
        else:
            assert prog in ("head", "find", "readlink", "stat", "grep", "nvidia-smi"), argv
            assert not any(w in ("-delete", "-exec", "-fprint", "-i", "--in-place") for w in argv), argv
    # the shell the commands run in: it runs only the argv lists it receives ("$@", never eval) and writes
    # only to its own output descriptors
    from dflash_doctor.hosts.ssh import SESSION_DRIVER

    assert "eval" not in SESSION_DRIVER and "$@" in SESSION_DRIVER
    for script in (*READONLY_SCRIPTS, SESSION_DRIVER):
        # the only redirections are to /dev/null, stderr and the shell's own descriptors; no writing tool appears
        stripped = script
        for allowed in (
            "2>/dev/null",
            '> "/dev/stderr"',
            "2>&1",
            ">&2",
            ">/dev/null",
            '>&"$o"',
            "3>&1",
            "4>&2",
            ">&4",
            "3>&-",
            "4>&-",
        ):
            stripped = stripped.replace(allowed, "")
        assert ">" not in stripped, script
        for word in ("rm ", "kill", "touch", "tee", "mv ", "cp ", "dd ", "chmod", "systemctl"):
            assert word not in script, (word, script)


def test_collect_then_check_bundle_gives_the_same_diagnosis_without_secrets(sshd, seed_deployment, tmp_path):
    live = json.loads(_check(sshd, seed_deployment).stdout)
    out = tmp_path / "seed.tar.gz"
    res = run_cli(
        "collect",
        "testhost",
        "--ssh-config",
        str(sshd.ssh_config),
        "--pid",
        str(seed_deployment.proc.pid),
        "-o",
        str(out),
    )
    assert res.returncode == 0, res.stderr
    import tarfile

    with tarfile.open(out) as tar:
        blob = b"".join(tar.extractfile(m).read() for m in tar if m.isreg())
    for secret in SECRETS:
        assert secret.encode() not in blob
    res = run_cli("check", "bundle", str(out), "--format", "json")
    assert res.returncode == 1, res.stderr
    replay = json.loads(res.stdout)

    def figures(acc):  # the replayed bundle labels its sources "(bundle)"; every figure must be identical
        return {**acc, "series": [{k: v for k, v in s.items() if k != "source"} for s in acc["series"]]}

    assert figures(replay["acceptance"]) == figures(live["acceptance"])
    assert all("(bundle)" in s["source"] for s in replay["acceptance"]["series"])
    assert [c["id"] for c in replay["causes"]] == [c["id"] for c in live["causes"]]
    assert "(bundle)" in replay["target"]


def test_a_fleet_of_ten_with_one_down(sshd, seed_deployment, tmp_path):
    from tests.sshd import free_port

    names = [sshd.add_alias(f"gpu-{i:02d}") for i in range(9)]
    names.append(sshd.add_alias("gpu-down", port=free_port()))
    res = run_cli(
        "check",
        "host",
        *names,
        "--ssh-config",
        str(sshd.ssh_config),
        "--pid",
        str(seed_deployment.proc.pid),
        "--parallel",
        "5",
        "--format",
        "json",
        timeout=240,
    )
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "dflash-doctor/fleet@1" and len(doc["hosts"]) == 10
    by = {h["host"]: h for h in doc["hosts"]}
    assert by["gpu-down"]["status"] == "unreachable" and "connection refused" in by["gpu-down"]["error"]
    for n in names[:9]:
        assert by[n]["status"] == "problem" and by[n]["tau"] == pytest.approx(1.18, abs=0.01)
        assert by[n]["top_cause"] == "swa-ignored"
    table = run_cli(
        "check",
        "host",
        names[0],
        "gpu-down",
        "--ssh-config",
        str(sshd.ssh_config),
        "--pid",
        str(seed_deployment.proc.pid),
        "--format",
        "terminal",
    )
    assert "fleet" in table.stdout and "unreachable" in table.stdout and "swa-ignored" in table.stdout


def test_unknown_host_key_refused_from_the_cli(sshd, seed_deployment, tmp_path):
    kh = tmp_path / "kh"
    kh.write_text("")
    res = run_cli("check", "host", sshd.url, "--known-hosts", str(kh), "--ssh-config", str(sshd.ssh_config))
    assert res.returncode == 3
    assert "unknown host key" in res.stderr and "SHA256:" in res.stderr and "ssh-keyscan" in res.stderr


def test_a_fifo_given_as_log_is_never_read(seed_deployment, tmp_path):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    res = run_cli(
        "check",
        "host",
        "local",
        "--pid",
        str(seed_deployment.proc.pid),
        "--log",
        str(fifo),
        "--format",
        "json",
        timeout=60,
    )
    doc = json.loads(res.stdout)
    assert any("not a regular file" in f["message"] for f in doc["findings"]), res.stdout[:2000]


def test_the_log_found_through_proc_costs_no_extra_round_trip(sshd, seed_deployment):
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as host:
        ev = collect_host(host, HostOptions(pid=seed_deployment.proc.pid))
        runs = [c for c in host.commands]
        shells = host.shells_started
    from dflash_doctor.collect.host import AUTOLOG, FILTER_LOG

    assert any(c[2] == AUTOLOG for c in runs if c[0] == "sh")
    assert not any(c[2] == FILTER_LOG for c in runs if c[0] == "sh")  # AUTOLOG's guess was confirmed
    assert ev.get(AcceptanceSummary).mean_acceptance_length == pytest.approx(1.18, abs=0.01)
    from dflash_doctor.collect.host import ENGINE_READ

    # the survey, AUTOLOG, the models and the engine (its listing and the files every analysis reads), plus at
    # most two reads of the engine's own files once the target is known (its model module, what that imports)
    engine_reads = [c for c in runs if c[0] == "sh" and c[2] == ENGINE_READ and "/site-packages" in c[6]]
    assert len(runs) - len(engine_reads) == 4 and len(engine_reads) <= 2
    assert shells == 1  # all through one remote shell: its rc files ran once
