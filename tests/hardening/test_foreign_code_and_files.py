"""Hostile situations of the class "another user's process names what root would run or read".

A serving process owned by `nobody` controls its own argv: argv[0] can name a script it wrote, and
`--model DIR` can name a directory of symlinks to root-only files. `check host local` / `collect local`
run by root must neither execute that script (issue 19 item 1) nor copy those files into a report or a
bundle (item 2). Both ran before: the collector executed the "serving interpreter" from argv[0], and read
the checkpoint's README.md and model.safetensors through the links.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from dflash_doctor.collect.host import HostOptions, collect_host, sanitize
from dflash_doctor.evidence.model_facts import DrafterFacts
from dflash_doctor.evidence.payloads import EngineId
from dflash_doctor.evidence.serialise import to_jsonable
from dflash_doctor.hosts.bundle import RecordingHost
from dflash_doctor.hosts.local import LocalHost

from .tally import hostile_input

# an interpreter `nobody` may run (the venv's lives under root's home)
NOBODY_PYTHON = next(
    (p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.exists(p) and os.stat(p).st_mode & 0o001),
    None,
)
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start a process as another user"),
    pytest.mark.skipif(NOBODY_PYTHON is None, reason="no world-executable python3 for the stand-in server"),
]

SHADOW_LINE = "root:$6$Zm9vYmFy$VGhpc0lzQVNoYWRvd0hhc2hGb3JUZXN0cw:19800:0:99999:7:::"
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)


@pytest.fixture
def shared_dir():
    """A directory `nobody` can traverse (pytest's tmp_path is root-only)."""
    d = Path(tempfile.mkdtemp(prefix="dd-foreign-", dir="/tmp"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _nobody_server(d: Path, argv0: str, model: str, drafter: str) -> subprocess.Popen:
    """A process owned by nobody whose /proc cmdline reads like a vLLM server launched by `argv0`."""
    pkg = d / "pkgs" / "vllm" / "entrypoints" / "openai"
    pkg.mkdir(parents=True)
    for p in (d / "pkgs" / "vllm", d / "pkgs" / "vllm" / "entrypoints", pkg):
        (p / "__init__.py").write_text("")
    (pkg / "api_server.py").write_text("import time\ntime.sleep(120)\n")
    for p in (d / "pkgs").rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    spec = json.dumps({"method": "dflash", "model": drafter, "num_speculative_tokens": 15})
    proc = subprocess.Popen(
        [
            argv0,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            model,
            "--port",
            "1",
            "--speculative-config",
            spec,
        ],
        executable=NOBODY_PYTHON,
        user="nobody",
        env={"PYTHONPATH": str(d / "pkgs"), "PATH": "/usr/bin:/bin"},
        cwd=str(d),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if b"speculative-config" in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
                return proc
        except OSError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the stand-in server did not start")


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait(timeout=10)


def test_a_script_named_by_another_users_process_is_never_run(shared_dir):
    evil = shared_dir / "evil"
    evil.mkdir()
    script = evil / "python3"
    script.write_text(f"#!/bin/sh\ntouch {shared_dir}/PWNED-$(id -u)\n")
    script.chmod(0o755)
    os.chown(evil, 65534, 65534)
    os.chown(script, 65534, 65534)
    proc = _nobody_server(shared_dir, str(script), "Qwen/Qwen3-8B", "z-lab/Qwen3-8B-DFlash-b16")
    try:
        hostile_input("interpreter named by another user's argv[0]")
        ev = collect_host(LocalHost(), HostOptions(pid=proc.pid, timeout=20))
    finally:
        _stop(proc)
    assert not list(shared_dir.glob("PWNED-*")), "the collector executed a script another user wrote"
    # the engine is still looked for, by reading files only: the fake package on PYTHONPATH is found
    eng = ev.item(EngineId)
    assert eng is not None and eng.value.location == f"{shared_dir}/pkgs/vllm"


def test_links_to_root_only_files_stay_out_of_reports_and_bundles(shared_dir):
    secrets = shared_dir / "root-only"
    secrets.mkdir(mode=0o700)
    (secrets / "shadow").write_text(SHADOW_LINE + "\n")
    (secrets / "id_ed25519").write_text(PEM)
    for f in secrets.iterdir():
        f.chmod(0o600)
    ckpt = {}
    for role in ("target", "drafter"):
        d = shared_dir / role
        d.mkdir()
        (d / "config.json").write_text(
            json.dumps(
                {
                    "architectures": ["Qwen3ForCausalLM"],
                    "model_type": "qwen3",
                    "hidden_size": 64,
                    "num_hidden_layers": 2,
                    "vocab_size": 100,
                }
            )
        )
        (d / "README.md").symlink_to(secrets / "shadow")
        (d / "model.safetensors").symlink_to(secrets / "id_ed25519")
        (d / "tokenizer_config.json").symlink_to(secrets / "shadow")
        for p in (d, *d.iterdir()):
            os.chown(p, 65534, 65534, follow_symlinks=False)
        ckpt[role] = str(d)
    proc = _nobody_server(shared_dir, NOBODY_PYTHON, ckpt["target"], ckpt["drafter"])
    try:
        hostile_input("checkpoint of symlinks to root-only files")
        rec = RecordingHost(LocalHost(), sanitize=sanitize)
        ev = collect_host(rec, HostOptions(pid=proc.pid, timeout=20))
        out = shared_dir / "bundle"
        rec.write_bundle(str(out), {"host": "local"})
    finally:
        _stop(proc)
    blob = b"".join(p.read_bytes() for p in out.iterdir())
    # batched reads travel base64-encoded: look inside them too
    from dflash_doctor.collect.host import parse_batch
    from dflash_doctor.hosts.bundle import _dec

    for line in (out / "calls.jsonl").read_text().splitlines():
        call = json.loads(line)
        for stream in ("stdout", "data"):
            raw = _dec(call.get(stream))
            blob += raw + b"".join(v for v in parse_batch(raw).files.values() if isinstance(v, bytes))
    for secret in ("Zm9vYmFy", "VGhpc0lzQVNoYWRvd0hhc2g", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "PRIVATE KEY"):
        assert secret.encode() not in blob, secret
    report = json.dumps([to_jsonable(e) for e in ev])
    for secret in ("Zm9vYmFy", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "PRIVATE KEY"):
        assert secret not in report, secret
    # the config inside the checkpoint (nobody's own file) is still read
    assert ev.has(DrafterFacts) or any("drafter" in what for what, _ in ev.collection_errors)


def test_a_bundle_keeps_only_a_weights_files_header():
    from dflash_doctor.collect.host import safetensors_header_only

    header = b'{"w":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}'
    blob = len(header).to_bytes(8, "little") + header + b"\x00\x01\x02\x03 tensor bytes"
    assert safetensors_header_only(blob) == blob[: 8 + len(header)]
    assert safetensors_header_only(PEM.encode()) == b""
    assert safetensors_header_only(b"\xff" * 64) == b""
