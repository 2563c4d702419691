"""LocalHost (argv, timeouts, caps) and bundles (record, replay, safe reading)."""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from dflash_doctor.hosts.bundle import BundleHost, RecordingHost
from dflash_doctor.hosts.interface import HostError
from dflash_doctor.hosts.local import LocalHost


def test_local_runs_argv_without_a_shell(tmp_path):
    marker = tmp_path / "PWNED"
    res = LocalHost().run(["echo", f"x; touch {marker}"])
    assert res.ok and res.text() == f"x; touch {marker}\n"
    assert not marker.exists()


def test_local_caps_output_drains_both_streams_and_times_out():
    h = LocalHost()
    res = h.run(["sh", "-c", "head -c 5000000 /dev/zero; head -c 5000000 /dev/zero >&2"], max_bytes=100)
    assert res.rc == 0 and res.truncated and len(res.stdout) == len(res.stderr) == 100
    res = h.run(["sleep", "30"], timeout=0.3)
    assert res.timed_out and not res.ok
    res = h.run(["definitely-not-a-command-xyz"])
    assert res.error and "not found" in res.error


def _record(tmp_path):
    (tmp_path / "f.txt").write_text("data\n")
    rec = RecordingHost(LocalHost(), sanitize=lambda op, key, data: data.replace(b"secret", b"******"))
    rec.run(["echo", "a secret"])
    rec.read_file(str(tmp_path / "f.txt"))
    with pytest.raises(FileNotFoundError):
        rec.read_file(str(tmp_path / "missing"))
    rec.list_dir(str(tmp_path))
    return rec


@pytest.mark.parametrize("suffix", ["", ".tar.gz"])
def test_a_recorded_bundle_replays_the_same_answers(tmp_path, suffix):
    rec = _record(tmp_path)
    out = str(tmp_path / ("b" + suffix))
    rec.write_bundle(out, {"host": "local"})
    b = BundleHost(out)
    assert b.origin == "local"
    assert b.run(["echo", "a secret"]).text() == "a ******\n"  # sanitised before writing
    assert b.read_file(str(tmp_path / "f.txt")) == b"data\n"
    with pytest.raises(FileNotFoundError):
        b.read_file(str(tmp_path / "missing"))
    assert "f.txt" in b.list_dir(str(tmp_path))
    assert b.run(["rm", "-rf", "/"]).error == "not recorded in the bundle"
    with pytest.raises(FileExistsError):
        rec.write_bundle(out, {"host": "local"})


def test_a_hostile_tarball_is_read_without_extracting_anything(tmp_path):
    good_manifest = json.dumps({"format": "dflash-doctor/bundle@1", "host": "h"}).encode()
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:

        def add(name, data=b"x", kind=tarfile.REGTYPE, link=""):
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.size = kind, link, len(data) if kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

        add("../../escaped.txt")
        add("/tmp/absolute-evil.txt")
        add("b/link", kind=tarfile.SYMTYPE, link="/etc/shadow")
        add("b/calls.jsonl", kind=tarfile.SYMTYPE, link="/etc/passwd")
        add("b/manifest.json", good_manifest)
        add("b/calls.jsonl", b'{"op": "read_file", "path": "/x", "data": {"text": "ok"}}\n')
    b = BundleHost(str(path))
    assert b.read_file("/x") == b"ok"
    assert not (tmp_path.parent / "escaped.txt").exists()
    assert not list(tmp_path.glob("**/link"))


def test_bad_bundles_are_one_line_errors(tmp_path):
    (tmp_path / "junk.tar.gz").write_bytes(b"\x1f\x8b not really gzip")
    for p in (tmp_path / "junk.tar.gz", tmp_path / "nothing-here"):
        with pytest.raises(HostError):
            BundleHost(str(p))
    d = tmp_path / "dir"
    d.mkdir()
    (d / "manifest.json").write_text('{"format": "something-else"}')
    (d / "calls.jsonl").write_text("")
    with pytest.raises(HostError, match=r"manifest.json: format: invalid enum value 'something-else' \(not a dflash"):
        BundleHost(str(d))
    (d / "manifest.json").write_text('{"format": "dflash-doctor/bundle@1", "options": {"pid": "six"}}')
    with pytest.raises(HostError, match=r"manifest.json: options.pid: expected an integer or nothing, got str"):
        BundleHost(str(d))
    (d / "manifest.json").write_text('{"format": "dflash-doctor/bundle@1"}')
    (d / "calls.jsonl").write_text("{not json\n")
    with pytest.raises(HostError, match="line 1 is damaged"):
        BundleHost(str(d))
    (d / "calls.jsonl").unlink()
    (d / "calls.jsonl").symlink_to("/etc/passwd")
    with pytest.raises(HostError, match="symbolic link"):
        BundleHost(str(d))
