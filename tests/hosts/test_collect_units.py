"""Units of host collection: launch parsing, batch decoding, source probes, hosts files, checks."""

from __future__ import annotations

import json
import os

import pytest

from dflash_doctor.collect.host import READ_MANY, Batch, encode_batch, parse_batch, parse_engine_locate, sanitize
from dflash_doctor.evidence import EvidenceSet, Source, Status
from dflash_doctor.evidence.serialise import to_jsonable
from dflash_doctor.hosts.inventory import read_hosts_file
from dflash_doctor.parse.launch import LaunchParseError, parse_argv, parse_launch_text
from tests.conftest import run_cli


def test_quoted_spec_config_parses():
    lc = parse_launch_text(
        "VLLM_USE_V2_MODEL_RUNNER=1 vllm serve Qwen/Qwen3-8B --port 8001 \\\n"
        "        --speculative-config "
        """'{"method": "dflash", "model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 15}'"""
    )
    assert (lc.engine, lc.model, lc.port, lc.method, lc.drafter, lc.num_speculative_tokens) == (
        "vllm",
        "Qwen/Qwen3-8B",
        8001,
        "dflash",
        "z-lab/Qwen3-8B-DFlash-b16",
        15,
    )
    assert lc.env == {"VLLM_USE_V2_MODEL_RUNNER": "1"} and lc.spec_error is None


def test_shell_split_json_gives_the_exact_error_and_a_fix():
    # what /proc shows after `--speculative-config {"method": "dflash", ...}` without single quotes
    lc = parse_argv(
        [
            "python3",
            "/v/bin/vllm",
            "serve",
            "Q",
            "--speculative-config",
            "{method:",
            "dflash,",
            "model:",
            "z-lab/X,",
            "num_speculative_tokens:",
            "15}",
        ]
    )
    assert lc.speculative is None
    assert "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)" in lc.spec_error
    assert "split it into 6 words" in lc.spec_error
    assert json.loads(lc.spec_fix.split(" ", 1)[1].strip("'")) == {
        "method": "dflash",
        "model": "z-lab/X",
        "num_speculative_tokens": 15,
    }


def test_python_dict_syntax_is_repaired_without_eval():
    lc = parse_launch_text(
        """vllm serve Q --speculative-config "{'method': 'eagle3', 'model': 'R/E', 'num_speculative_tokens': 3}" """
    )
    assert lc.spec_error and '"method": "eagle3"' in lc.spec_fix


def test_sglang_and_legacy_flags():
    lc = parse_launch_text(
        "python -m sglang.launch_server --model-path Q --speculative-algorithm EAGLE3 "
        "--speculative-draft-model-path D --speculative-num-draft-tokens 4"
    )
    # SGLang counts the verified token among its draft tokens: 4 draft tokens are k = 3 drafted positions
    assert (lc.engine, lc.model, lc.method, lc.drafter, lc.num_speculative_tokens) == ("sglang", "Q", "eagle3", "D", 3)
    lc = parse_launch_text("vllm serve Q --speculative-model D --num-speculative-tokens 5")
    assert (lc.drafter, lc.num_speculative_tokens) == ("D", 5)
    with pytest.raises(LaunchParseError):
        parse_launch_text('vllm serve Q --speculative-config \'{"method": ')


def test_launch_secrets_are_redacted():
    lc = parse_launch_text(
        "HF_TOKEN=hf_abcdefghijklmnopqrstuvwx vllm serve Q --api-key sk-aaaaaaaaaaaaaaaaaaaa "
        "--hf-token=hf_abcdefghijklmnopqrstuvwx"
    )
    blob = json.dumps(to_jsonable(lc))
    assert "sk-aaaa" not in blob and "hf_abcdef" not in blob


def test_diagnose_launch_reports_invalid_spec_config(cli):
    res = cli(
        "diagnose", "--launch", "vllm serve Q --speculative-config {method: dflash, model: z/X}", "--format", "json"
    )
    doc = json.loads(res.stdout)
    f = [f for f in doc["findings"] if f["check"] == "launch-config"][0]
    assert f["status"] == "fail" and "not valid JSON" in f["message"] and "--speculative-config '{" in f["remedy"]
    assert doc["causes"][0]["id"] == "launch-config"


def test_batch_roundtrip_and_sanitizer_filters_environment():
    b = Batch(
        files={
            "/proc/7/environ": b"HF_TOKEN=hf_secretsecretsecretsecret\0VLLM_USE_V2_MODEL_RUNNER=1\0LS_COLORS=x\0",
            "/proc/7/cmdline": b"vllm\0serve\0Q\0--api-key\0sk-abcdefghijklmnopqrst\0",
            "/a": FileNotFoundError(2, "x", "/a"),
        },
        links={"/proc/7/fd/1": "/var/log/vllm.log"},
        dirs={"/d": ["a", "b c"]},
    )
    raw = encode_batch(b)
    back = parse_batch(raw)
    assert back.files["/proc/7/cmdline"] == b.files["/proc/7/cmdline"] and back.dirs["/d"] == ["a", "b c"]
    assert isinstance(back.files["/a"], FileNotFoundError) and back.links["/proc/7/fd/1"] == "/var/log/vllm.log"
    argv = [
        "sh",
        "-c",
        READ_MANY,
        "sh",
        "100",
        "F:/proc/7/environ",
        "F:/proc/7/cmdline",
        "F:/a",
        "L:/proc/7/fd/1",
        "D:/d",
    ]
    kept = parse_batch(sanitize("run", json.dumps(argv), raw))
    env = kept.files["/proc/7/environ"]
    assert b"hf_secret" not in env and b"LS_COLORS" not in env and b"VLLM_USE_V2_MODEL_RUNNER=1" in env
    assert b"sk-abcdef" not in kept.files["/proc/7/cmdline"]


def test_engine_locate_answer_is_read_relative_to_the_site_dir():
    import base64

    site = "/opt/venv/lib/python3.11/site-packages"
    b64 = lambda t: base64.b64encode(t.encode()).decode()  # noqa: E731
    out = (
        f"PKG {b64(site)} maps\n"
        f"F {b64(site + '/vllm-0.26.0.dist-info/METADATA')} "
        f"{b64('Name: vllm' + chr(10) + 'Version: 0.26.0' + chr(10))}\n"
        "P v1/worker/gpu_model_runner.py\nP config/vllm.py\nP ../../etc/passwd\nM vllm:num_requests 1\n"
    ).encode()
    found = parse_engine_locate(out, "vllm")
    assert found["site"] == site and found["location"] == site + "/vllm" and found["how"] == "maps"
    assert found["listing"] == [
        "vllm/v1/worker/gpu_model_runner.py",
        "vllm/config/vllm.py",
        "vllm-0.26.0.dist-info/METADATA",
    ]  # no path out of the package
    assert found["files"] == {"vllm-0.26.0.dist-info/METADATA": b"Name: vllm\nVersion: 0.26.0\n"}
    assert parse_engine_locate(b"", "vllm") is None


def test_hosts_file_plain_and_ansible(tmp_path):
    plain = tmp_path / "hosts.txt"
    plain.write_text("# fleet\ngpu-01\nssh://ops@gpu-02:2222\n\ngpu-01\n")
    assert read_hosts_file(str(plain)) == ["gpu-01", "ssh://ops@gpu-02:2222"]
    ini = tmp_path / "inventory.ini"
    ini.write_text(
        "[gpus]\ngpu-a ansible_host=10.0.0.5 ansible_user=ops ansible_port=2201\ngpu-b\n"
        "[gpus:vars]\nansible_python_interpreter=/usr/bin/python3\n[local]\nlocalhost ansible_connection=local\n"
    )
    assert read_hosts_file(str(ini)) == ["ssh://ops@10.0.0.5:2201", "gpu-b", "local"]


def test_check_host_local_without_anything_says_not_found_and_exits_3():
    # --pid of no process: nothing to examine, as on a machine with no engine
    res = run_cli("check", "host", "local", "--pid", "2147483646")
    assert res.returncode == 3, res.stderr
    assert "no vLLM or SGLang serving process" in res.stdout
    full = run_cli("check", "host", "local", "--pid", "2147483646", "-v").stdout  # the finding's details
    assert "nvidia-smi" in full or "GPU" in full
    assert "Traceback" not in res.stderr


def test_bad_bundle_is_a_usage_error(tmp_path):
    res = run_cli("check", "bundle", str(tmp_path / "missing.tar.gz"))
    assert res.returncode == 2 and "no such bundle" in res.stderr and "Traceback" not in res.stderr


def test_checks_on_hand_made_evidence(tmp_path):
    from dflash_doctor.checks.engine_source_swa import EngineSlidingWindow
    from dflash_doctor.engines import DirectoryTree, analyse
    from dflash_doctor.models.facts import drafter_facts
    from tests.conftest import FIXTURES
    from tests.engines.synth import build_vllm

    ev = EvidenceSet()
    ev.add("src", Source("file", "x"), analyse(DirectoryTree(build_vllm(tmp_path, "0.20.1"))))
    [f] = EngineSlidingWindow().run(ev)
    assert f.status == Status.COULD_NOT_CHECK and not f.observations  # drafter unknown: no evidence either way
    ev.add("d", Source("file", "y"), drafter_facts(str(FIXTURES / "models" / "Qwen3.6-27B-DFlash")))
    [f] = EngineSlidingWindow().run(ev)
    assert f.status == Status.FAIL and f.observations[0].name == "engine-swa:ignored"


def test_docker_and_journal_log_sources_are_filtered_the_same_way(tmp_path, monkeypatch):
    """A process in a container (or a systemd unit) writes to a pipe: its log comes from docker/journald."""
    from dflash_doctor.collect.host import FILTER_DOCKER, FILTER_JOURNAL, _docker_id, _systemd_unit
    from dflash_doctor.hosts.local import LocalHost
    from tests.hosts.fakedeploy import scenarios, write_log

    cid = "ab" * 32
    assert _docker_id(f"0::/system.slice/docker-{cid}.scope\n") == cid
    assert _systemd_unit("0::/system.slice/vllm-qwen.service\n") == "vllm-qwen.service"
    log = tmp_path / "vllm.log"
    write_log(log, scenarios()["seed"], size=200_000)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("docker", "journalctl"):  # stand-ins that print the log, as the real tools would
        (bindir / tool).write_text(f'#!/bin/sh\necho "$@" > /dev/null\ncat {log}\n')
        (bindir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    for script, who in ((FILTER_DOCKER, cid), (FILTER_JOURNAL, "vllm-qwen.service")):
        res = LocalHost().run(
            [
                "sh",
                "-c",
                script,
                "sh",
                who,
                "2500",
                "400",
                "SpecDecoding metrics",
                "version\nnon-default args",
                "16777216",
            ]
        )
        lines = res.text().splitlines()
        assert sum("SpecDecoding metrics" in x for x in lines) == 60
        assert any("non-default args" in x for x in lines)
        assert res.stderr.decode().split()[0] == "60"
