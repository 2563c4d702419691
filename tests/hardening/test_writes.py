"""Writes that never destroy (issue 24): every output file (`-o` reports and baselines, `--junit`, `--csv`,
`--parquet`, plots, bundles) goes through one writer, dflash_doctor/atomic.py.

Real symlinks in a real sticky world-writable directory, owned by another uid (os.lchown: the suite runs as
root, as CI does); real pipes and shell redirections; real full disks (tests/hardening/test_full_disk.py's
tmpfs) and real RLIMIT_FSIZE; a real unprivileged process (a fork that drops to `nobody`) for a
read-only directory, which root's permissions would bypass.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import shlex
import stat
import subprocess
import sys
import tempfile

import pytest

from dflash_doctor import atomic
from tests.conftest import FIXTURES, ROOT
from tests.hardening import tally

LOG = str(FIXTURES / "seed/vllm-0.20.1.log")
ENV = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
DD = [sys.executable, "-m", "dflash_doctor"]
NOBODY = 65534

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: files owned by another uid")

# Every command-line writer, given its destination.
WRITERS = {
    "diagnose -o": lambda out: [*DD, "diagnose", "--log", LOG, "--format", "json", "-o", out],
    "gate -o (a baseline)": lambda out: [*DD, "gate", "--log", LOG, "--min-acceptance-length", "1.1", "-o", out],
    "gate --junit": lambda out: [*DD, "gate", "--log", LOG, "--min-acceptance-length", "1.1", "--junit", out],
    "logs --csv": lambda out: [*DD, "logs", LOG, "--csv", out],
    "monitor rules -o": lambda out: [*DD, "monitor", "rules", "-o", out],
}


def _run(argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=300, **kw)


def _sha(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


@pytest.fixture
def sticky(tmp_path):
    """(a sticky world-writable directory like /tmp, a root-only file outside it)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    private = tmp_path / "private"
    private.mkdir()
    private.chmod(0o700)
    secret = private / "authorized_keys"
    secret.write_text("ssh-ed25519 AAAA root's own key\n")
    secret.chmod(0o600)
    return shared, secret


@pytest.mark.parametrize("writer", list(WRITERS))
def test_another_users_symlink_in_a_sticky_directory_is_not_followed(sticky, writer):
    """Before: the writer resolved the link itself (os.path.realpath) and renamed its file over the root-only
    target, sidestepping fs.protected_symlinks (off on this machine, so the kernel would not have stopped
    an open() either)."""
    name = f"write: {writer} to another user's symlink in a sticky directory"
    tally.fault(name)
    shared, secret = sticky
    link = shared / "report.out"
    link.symlink_to(secret)
    os.lchown(link, NOBODY, NOBODY)
    before = _sha(secret)
    res = _run(WRITERS[writer](str(link)))
    assert res.returncode == 2, res.stdout + res.stderr
    assert _sha(secret) == before and stat.S_IMODE(secret.stat().st_mode) == 0o600, "the link's target was replaced"
    assert link.is_symlink()
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "symlink owned by another user" in errors[0], res.stderr
    assert "Traceback" not in res.stderr
    assert sorted(os.listdir(secret.parent)) == [secret.name], "something was left beside the target"
    tally.survived(name)


def test_a_linked_directory_in_a_sticky_directory_is_not_followed(sticky):
    """The rule holds at every component: `-o /tmp/d/report.json` with /tmp/d another user's link to a
    root-only directory writes nothing there."""
    tally.fault("write: through another user's directory link in a sticky directory")
    shared, secret = sticky
    link = shared / "d"
    link.symlink_to(secret.parent)
    os.lchown(link, NOBODY, NOBODY)
    res = _run(WRITERS["diagnose -o"](str(link / "report.json")))
    assert res.returncode == 2 and "symlink owned by another user" in res.stderr, res.stderr
    assert sorted(os.listdir(secret.parent)) == [secret.name]
    tally.survived("write: through another user's directory link in a sticky directory")


def test_our_own_symlink_and_the_directory_owners_are_followed(sticky, tmp_path):
    """What fs.protected_symlinks allows is still allowed: a link we own, or one the directory's owner made."""
    shared, _ = sticky
    mine = tmp_path / "mine.json"
    (shared / "ours").symlink_to(mine)  # owned by root: us, and the directory's owner
    res = _run(WRITERS["diagnose -o"](str(shared / "ours")))
    assert res.returncode == 1, res.stderr
    assert json.loads(mine.read_text())["schema"].startswith("dflash-doctor/report")
    assert (shared / "ours").is_symlink()


def test_another_users_file_in_a_sticky_directory_is_not_written(sticky):
    """fs.protected_regular: a file another user planted in /tmp under the name we were given is not ours
    to fill with a report (they could read it, or it is a hard link to something else)."""
    tally.fault("write: over another user's regular file in a sticky directory")
    shared, _ = sticky
    planted = shared / "report.json"
    planted.write_text("planted")
    os.chown(planted, NOBODY, NOBODY)
    res = _run(WRITERS["diagnose -o"](str(planted)))
    assert res.returncode == 2 and "owned by another user" in res.stderr, res.stderr
    assert planted.read_text() == "planted" and planted.stat().st_uid == NOBODY
    tally.survived("write: over another user's regular file in a sticky directory")


@pytest.mark.parametrize("writer", ["diagnose -o", "gate --junit", "logs --csv"])
def test_an_existing_file_keeps_its_owner_and_mode(tmp_path, writer):
    """Before: the rename gave the file root's owner and kept only the mode."""
    out = tmp_path / "shared-report"
    out.write_text("old")
    os.chown(out, NOBODY, NOBODY)
    out.chmod(0o640)
    res = _run(WRITERS[writer](str(out)))
    assert res.returncode in (0, 1), res.stderr
    st = out.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (NOBODY, NOBODY, 0o640)
    assert out.read_text() != "old"


def _sh(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=ENV, timeout=300)


def test_dev_stdout_appended_to_a_log_is_not_truncated(tmp_path):
    """`-o /dev/stdout >> ci.log`: the report is appended. Before: /dev/stdout resolved to ci.log itself,
    and the rename replaced the whole log with the report."""
    tally.fault("write: -o /dev/stdout >> ci.log")
    ci = tmp_path / "ci.log"
    ci.write_text("earlier build output\n")
    argv = " ".join(shlex.quote(a) for a in WRITERS["diagnose -o"]("/dev/stdout"))
    res = _sh(f"{argv} >> {shlex.quote(str(ci))}")
    assert res.returncode == 1, res.stderr
    text = ci.read_text()
    assert text.startswith("earlier build output\n"), text[:200]
    assert json.loads(text.split("\n", 1)[1])["schema"].startswith("dflash-doctor/report")
    tally.survived("write: -o /dev/stdout >> ci.log")


def test_dev_stderr_appended_to_a_log_is_not_truncated(tmp_path):
    err = tmp_path / "err.log"
    err.write_text("earlier\n")
    argv = " ".join(shlex.quote(a) for a in WRITERS["gate --junit"]("/dev/stderr"))
    res = _sh(f"{argv} 2>> {shlex.quote(str(err))}")
    assert res.returncode == 0, res.stdout
    text = err.read_text()
    assert text.startswith("earlier\n") and "<testsuite" in text


def test_dev_stdout_into_a_pipe(tmp_path):
    """`-o /dev/stdout | cat`. Before: 'cannot write the report to /dev/stdout: No such file or directory'
    (the link resolves to pipe:[N], which no directory holds)."""
    tally.fault("write: -o /dev/stdout | cat")
    argv = " ".join(shlex.quote(a) for a in WRITERS["diagnose -o"]("/dev/stdout"))
    res = _sh(f"{argv} | cat")
    assert "error:" not in res.stderr, res.stderr
    assert json.loads(res.stdout)["schema"].startswith("dflash-doctor/report")
    tally.survived("write: -o /dev/stdout | cat")


def test_a_character_device_is_written_in_place():
    res = _run(WRITERS["diagnose -o"]("/dev/null"))
    assert res.returncode == 1, res.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_directory_or_a_socket_is_refused_in_one_line(tmp_path):
    res = _run(WRITERS["diagnose -o"](str(tmp_path)))
    assert res.returncode == 2 and res.stderr.count("error:") == 1 and "Traceback" not in res.stderr


# -- an unprivileged user: a writable file in a read-only directory ---------------------------------------


def _others_can_enter(path) -> bool:
    """Whether every directory from / down to path lets other users through (the x bit for others)."""
    import pathlib

    p = pathlib.Path(path).resolve()
    return all(os.stat(d).st_mode & stat.S_IXOTH for d in (p, *p.parents))


def _as_nobody(argv: list[str], fsize: int | None = None) -> tuple[int, str]:
    """Run the CLI in a forked child that has dropped to `nobody` (the interpreter under /root is out of
    its reach, so no exec: the child calls the console entry point it inherited)."""
    with tempfile.TemporaryFile(mode="w+") as err, open(os.devnull, "w") as null:
        pid = os.fork()
        if pid == 0:  # the child
            os._exit(_child(argv, fsize, err, null))
        _, status = os.waitpid(pid, 0)
        err.seek(0)
        return os.waitstatus_to_exitcode(status), err.read()


def _child(argv, fsize, err, null) -> int:
    from dflash_doctor.cli.app import main

    code = 70
    try:
        sys.stdout = sys.stderr = null  # (pytest's capture objects are not fds 1 and 2)
        with contextlib.suppress(SystemExit):  # once as root, to /dev/null: every module it needs is imported
            main([*argv[:-1], os.devnull])
        sys.stderr = err
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 (reported to the parent)
        err.write(f"child failed: {exc!r}\n")
    err.flush()
    return code


@pytest.fixture
def readonly_dir():
    import pathlib
    import shutil

    if not _others_can_enter(ROOT):
        pytest.skip(
            f"the checkout ({ROOT}) sits in a directory other users cannot enter (mktemp -d makes 0700): the process "
            "run as `nobody` could not read the package or the log"
        )

    top = pathlib.Path(tempfile.mkdtemp(prefix="dd-writes-"))  # (pytest's own directory is root-only)
    top.chmod(0o755)
    d = top / "ro"
    d.mkdir()
    f = d / "report.json"
    f.write_text("old")
    os.chown(f, NOBODY, NOBODY)
    os.chown(d, NOBODY, NOBODY)
    d.chmod(0o555)
    yield f
    shutil.rmtree(top)


def test_a_writable_file_in_a_read_only_directory(readonly_dir):
    """Before: 'Permission denied' (the temporary file could not be made beside it); the file is ours to
    write, so it is written (in place)."""
    tally.fault("write: a writable file in a read-only directory")
    rc, err = _as_nobody(["diagnose", "--log", LOG, "--format", "json", "-o", str(readonly_dir)])
    assert rc == 1, err
    assert json.loads(readonly_dir.read_text())["schema"].startswith("dflash-doctor/report")
    assert os.listdir(readonly_dir.parent) == ["report.json"]
    tally.survived("write: a writable file in a read-only directory")


def test_in_place_writing_keeps_the_old_file_when_there_is_no_room(readonly_dir):
    """In place, the space is reserved first: past RLIMIT_FSIZE (EFBIG, as a full disk) nothing changed."""
    tally.fault("write: in place past RLIMIT_FSIZE")
    rc, err = _as_nobody(["diagnose", "--log", LOG, "--format", "json", "-o", str(readonly_dir)], fsize=1024)
    assert rc == 2, err
    assert "File too large" in err and err.count("error:") == 1, err
    assert readonly_dir.read_text() == "old"
    tally.survived("write: in place past RLIMIT_FSIZE")


# -- the rest of the writers on a full disk ----------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--csv", "--parquet"])
def test_exports_keep_the_previous_file_on_a_full_disk(flag):
    """Before: pandas opened the file with 'w' and truncated it, then failed: the previous export was lost."""
    from tests.hardening.test_full_disk import _full_tmpfs

    if flag == "--parquet":
        pytest.importorskip("pyarrow")
    name = f"write: logs {flag} on a full disk (ENOSPC, tmpfs)"
    tally.fault(name)
    argv = " ".join(shlex.quote(a) for a in [*DD, "logs", LOG, flag, "@OUT@"]).replace("@OUT@", '"$D/out"')
    res = _full_tmpfs(
        f'printf "%s" "previous content" > "$D/out" && sha256sum "$D/out" && fill; '
        f'{argv}; echo "rc=$?"; sha256sum "$D/out"; echo $(ls -A "$D")'
    )
    lines = res.stdout.splitlines()
    before, after = [ln.split()[0] for ln in lines if ln.endswith("/out")]
    assert "rc=2" in res.stdout, res.stdout + res.stderr
    assert before == after, "the previous file was damaged"
    assert sorted(lines[-1].split()) == ["fill", "out"], f"left behind: {lines[-1]}"
    assert "No space left on device" in res.stderr and "Traceback" not in res.stderr
    tally.survived(name)


# -- the writer itself ---------------------------------------------------------------------------------------


def test_resolve_follows_links_like_the_kernel(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").symlink_to("a")
    (tmp_path / "a" / "c").symlink_to("../a/f")
    assert atomic.resolve(str(tmp_path / "b" / "c")) == str(tmp_path / "a" / "f")
    assert atomic.resolve("/dev/stdout") in ("/dev/stdout", "/proc/self/fd/1")
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(OSError, match="Too many levels"):
        atomic.resolve(str(tmp_path / "loop"))


def test_exclusive_never_replaces_and_never_follows(tmp_path):
    target = tmp_path / "elsewhere"
    link = tmp_path / "bundle.tar.gz"
    link.symlink_to(target)  # dangling: open(O_CREAT) would create the target
    with pytest.raises(FileExistsError):
        atomic.write_atomic(str(link), b"x", exclusive=True)
    assert not target.exists()
