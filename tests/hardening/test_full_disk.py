"""Output on a full disk: the previous report/baseline/JUnit file is kept whole, no half-written file
or bundle is left behind, the error is one line, and a retry works.

Two honest ways to run out of space, both real kernel errors on real writes:
* ENOSPC: an 8 MiB tmpfs, filled up, mounted in a private mount namespace (`unshare -m`: nothing
  shows outside the test). Needs root or user namespaces; skipped where neither exists.
* EFBIG: RLIMIT_FSIZE on the dflash-doctor process (Python ignores SIGXFSZ, so the write that crosses
  the limit fails with "File too large"). Works everywhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.hardening import tally

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")
ENV = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
DD = [sys.executable, "-m", "dflash_doctor"]


def _can_mount_tmpfs() -> str | None:
    if not shutil.which("unshare") or not shutil.which("mount"):
        return "unshare/mount not installed"
    res = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True, text=True
    )
    return None if res.returncode == 0 else f"cannot mount a tmpfs in a mount namespace: {res.stderr.strip()}"


def _full_tmpfs(script: str) -> subprocess.CompletedProcess:
    """Run `script` (sh) with $D an 8 MiB tmpfs (room for a collected bundle of a busy machine: 381 KB here)
    in a private mount namespace; `fill` fills it up."""
    reason = _can_mount_tmpfs()
    if reason:
        pytest.skip(reason)
    # (`sync -f`: this tmpfs only. A plain `sync` flushes every filesystem of the machine and, beside other jobs
    # writing gigabytes, took minutes: the test's time bound, not its subject.)
    prelude = (
        'D=$(mktemp -d) && mount -t tmpfs -o size=8m tmpfs "$D" && '
        'fill() { dd if=/dev/zero of="$D/fill" bs=4k 2>/dev/null; sync -f "$D"; }; '
    )
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", prelude + script], capture_output=True, text=True, env=ENV, timeout=300
    )


def _sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _fsize_limit(n: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))

    return apply


# -- a report or baseline (-o), a JUnit file: the previous file survives -------------------------------
WRITERS = {
    "diagnose -o": lambda out: [*DD, "diagnose", "--log", LOG, "--format", "json", "-o", out],
    "gate --junit": lambda out: [*DD, "gate", "--log", LOG, "--min-acceptance-length", "1.1", "--junit", out],
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_the_previous_file_survives_a_full_disk(writer):
    """ENOSPC on a tmpfs. Before: `open(path, "w")` truncated the old baseline, and 8 KB of broken JSON stayed."""
    name = f"output: {writer} on a full disk (ENOSPC, tmpfs)"
    tally.fault(name)
    argv = " ".join(shlex.quote(a) for a in WRITERS[writer]("@OUT@")).replace("@OUT@", '"$D/out"')
    res = _full_tmpfs(
        f'printf "%s" "previous content" > "$D/out" && sha256sum "$D/out" && fill; '
        f'{argv}; echo "rc=$?"; sha256sum "$D/out"; echo $(ls -A "$D")'
    )
    lines = res.stdout.splitlines()
    before, after = [ln.split()[0] for ln in lines if ln.endswith("/out")]
    assert "rc=2" in res.stdout, res.stdout + res.stderr
    assert before == after, "the previous file was damaged"
    assert sorted(lines[-1].split()) == ["fill", "out"], f"left behind: {lines[-1]}"
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "No space left on device" in errors[0], res.stderr
    assert "internal error" not in res.stderr
    tally.survived(name)


@pytest.mark.parametrize("writer", list(WRITERS))
def test_the_previous_file_survives_a_file_size_limit(tmp_path, writer):
    """EFBIG under RLIMIT_FSIZE (1 KiB): the same failure path, on any machine."""
    name = f"output: {writer} past RLIMIT_FSIZE (EFBIG)"
    tally.fault(name)
    out = tmp_path / "baseline.json"
    good = json.dumps({"schema": "dflash-doctor/report@1", "acceptance": {"mean_acceptance_length": 3.2}})
    out.write_text(good)
    res = subprocess.run(
        WRITERS[writer](str(out)),
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        preexec_fn=_fsize_limit(1 << 10),
    )
    assert res.returncode == 2, res.stderr
    assert out.read_text() == good, "the previous file was damaged"
    assert os.listdir(tmp_path) == ["baseline.json"]
    assert "File too large" in res.stderr and "internal error" not in res.stderr
    tally.survived(name)


def test_a_report_written_where_there_is_room_is_complete(tmp_path):
    out = tmp_path / "r.json"
    res = subprocess.run(WRITERS["diagnose -o"](str(out)), capture_output=True, text=True, env=ENV, timeout=300)
    assert res.returncode == 1, res.stderr
    assert json.loads(out.read_text())["acceptance"]["mean_acceptance_length"] > 1
    assert os.listdir(tmp_path) == ["r.json"]


def test_writing_to_a_device_writes_in_place(tmp_path):
    """-o /dev/null must not replace the device with a file (a rename would)."""
    res = subprocess.run(WRITERS["diagnose -o"]("/dev/null"), capture_output=True, text=True, env=ENV, timeout=300)
    assert res.returncode == 1, res.stderr
    assert not os.path.isfile("/dev/null")


# -- collect: no damaged bundle, and the retry works ---------------------------------------------------
@pytest.mark.parametrize("suffix", [".tar.gz", ""])
def test_collect_on_a_full_disk_leaves_nothing_and_the_retry_works(suffix):
    """Before: a damaged bundle stayed, and the retry failed with 'already exists'."""
    name = f"collect: bundle{suffix or ' directory'} on a full disk (ENOSPC, tmpfs)"
    tally.fault(name)
    collect = " ".join(map(shlex.quote, [*DD, "collect", "local", "--log", LOG, "-o"])) + f' "$D/host{suffix}"'
    res = _full_tmpfs(
        f'fill; {collect}; echo "rc=$?"; echo $(ls -A "$D"); rm "$D/fill"; '
        f'{collect}; echo "rc=$?"; echo $(ls -A "$D"); '
        f'{" ".join(map(shlex.quote, DD))} check bundle "$D/host{suffix}" --format json > /dev/null; '
        'echo "rc=$?"'
    )
    lines = res.stdout.splitlines()
    assert lines[0] != "rc=0" and lines[1] == "fill", res.stdout + res.stderr  # failed, and left nothing
    assert "No space left on device" in res.stderr and "internal error" not in res.stderr
    assert lines[2] == "rc=0" and lines[3] == f"host{suffix}", res.stdout + res.stderr  # the retry
    assert lines[4] in ("rc=0", "rc=1", "rc=3"), res.stdout + res.stderr  # and its bundle reads
    tally.survived(name)


def test_collect_past_a_file_size_limit_leaves_nothing_and_the_retry_works(tmp_path):
    name = "collect: bundle past RLIMIT_FSIZE (EFBIG)"
    tally.fault(name)
    out = tmp_path / "host.tar.gz"
    argv = [*DD, "collect", "local", "--log", LOG, "-o", str(out)]
    res = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=300, preexec_fn=_fsize_limit(4 << 10))
    assert res.returncode == 2 and "File too large" in res.stderr, res.stderr
    assert os.listdir(tmp_path) == []
    res = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=300)
    assert res.returncode == 0 and out.is_file(), res.stderr
    assert _sha(out)
    tally.survived(name)
