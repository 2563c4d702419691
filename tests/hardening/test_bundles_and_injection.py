"""A bundle is data, never code; a remote command is argv, never shell text.

Hostile archives (path traversal, absolute names, symlinks, hardlinks, devices, FIFOs, duplicates,
bombs) are read in memory or refused — nothing lands on disk. Hostile paths and words sent to a
real sshd arrive as single argv words: the recorded argv shows it, and no marker file appears."""

from __future__ import annotations

import io
import json
import os
import tarfile

import pytest

from dflash_doctor.hosts import bundle as bundle_mod
from dflash_doctor.hosts.bundle import BUNDLE_FORMAT, BundleHost
from dflash_doctor.hosts.interface import HostError
from tests.hardening import tally

MANIFEST = json.dumps({"format": BUNDLE_FORMAT, "host": "gpu-1"}).encode()


def _calls(marker) -> bytes:
    return (
        json.dumps(
            {"op": "run", "argv": ["touch", str(marker)], "rc": 0, "stdout": {"text": "ok\n"}, "stderr": {"text": ""}}
        )
        + "\n"
    ).encode()


def _tar(path, members) -> str:
    """members: (TarInfo-like kwargs, data or None)."""
    with tarfile.open(path, "w:gz") as tar:
        for kw, data in members:
            info = tarfile.TarInfo(kw.pop("name"))
            for k, v in kw.items():
                setattr(info, k, v)
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return str(path)


def _tree(root) -> set[str]:
    return {os.path.join(d, f) for d, dirs, files in os.walk(root) for f in files + dirs}


SLIP_NAMES = [
    "../../evil/manifest.json",
    "/tmp/dflash-abs-evil/manifest.json",
    "b/../../manifest.json",
    "b/c/d/manifest.json",
    "./../manifest.json",
]


@pytest.mark.parametrize("name", SLIP_NAMES)
def test_traversal_and_absolute_members_are_ignored_not_extracted(tmp_path, name):
    tally.hostile_input("bundle: tar-slip member names")
    marker = tmp_path / "PWNED"
    arc = _tar(
        tmp_path / "b.tar.gz",
        [({"name": name}, MANIFEST), ({"name": name.replace("manifest.json", "calls.jsonl")}, _calls(marker))],
    )
    before = _tree(tmp_path)
    with pytest.raises(HostError, match="not a bundle"):
        BundleHost(arc)
    assert _tree(tmp_path) == before
    for where in (
        "/tmp/dflash-abs-evil",
        tmp_path.parent.parent / "evil",
        tmp_path.parent / "manifest.json",
        os.path.join(os.getcwd(), "..", "evil"),
        os.path.join(os.getcwd(), "manifest.json"),
    ):
        assert not os.path.exists(where), where


def test_links_devices_and_fifos_in_an_archive_are_never_followed(tmp_path):
    tally.hostile_input("bundle: link/device/fifo members", 4)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    arc = _tar(
        tmp_path / "b.tar.gz",
        [
            ({"name": "b/manifest.json", "type": tarfile.SYMTYPE, "linkname": str(secret)}, None),
            ({"name": "b/calls.jsonl", "type": tarfile.LNKTYPE, "linkname": str(secret)}, None),
            ({"name": "b/dev", "type": tarfile.CHRTYPE, "devmajor": 1, "devminor": 3}, None),
            ({"name": "b/fifo", "type": tarfile.FIFOTYPE}, None),
        ],
    )
    with pytest.raises(HostError) as err:
        BundleHost(arc)
    assert "TOP-SECRET" not in err.value.message


def test_a_valid_bundle_beside_hostile_members_replays_only_its_own_data(tmp_path):
    marker = tmp_path / "PWNED"
    arc = _tar(
        tmp_path / "b.tar.gz",
        [
            ({"name": "../../manifest.json"}, b"{}"),
            ({"name": "b/manifest.json"}, MANIFEST),
            ({"name": "b/calls.jsonl"}, _calls(marker)),
            ({"name": "b/x", "type": tarfile.SYMTYPE, "linkname": "/etc/passwd"}, None),
        ],
    )
    host = BundleHost(arc)
    res = host.run(["touch", str(marker)])  # replayed from the transcript, never executed
    tally.hostile_input("bundle: recorded command replayed")
    assert res.ok and res.stdout == b"ok\n"
    assert not marker.exists()


def test_duplicate_members_and_oversized_bundles_are_refused(tmp_path, monkeypatch):
    tally.hostile_input("bundle: duplicates and bombs", 3)
    dup = _tar(
        tmp_path / "dup.tar.gz",
        [
            ({"name": "b/manifest.json"}, MANIFEST),
            ({"name": "c/manifest.json"}, MANIFEST),
            ({"name": "b/calls.jsonl"}, b""),
        ],
    )
    with pytest.raises(HostError, match="more than one"):
        BundleHost(dup)
    monkeypatch.setattr(bundle_mod, "MAX_BUNDLE_BYTES", 4096)
    big = _tar(
        tmp_path / "big.tar.gz", [({"name": "b/manifest.json"}, MANIFEST), ({"name": "b/calls.jsonl"}, b"\n" * 100_000)]
    )
    with pytest.raises(HostError, match="larger than"):
        BundleHost(big)
    d = tmp_path / "dirbundle"
    d.mkdir()
    (d / "manifest.json").write_bytes(MANIFEST)
    (d / "calls.jsonl").write_bytes(b" " * 10_000)
    with pytest.raises(HostError, match="larger than"):
        BundleHost(str(d))


def test_a_header_claiming_a_gigabyte_is_refused_before_any_read(tmp_path):
    tally.hostile_input("bundle: lying 1 GiB member header")
    info = tarfile.TarInfo("b/calls.jsonl")
    info.size = 1 << 30
    raw = tarfile.TarInfo("b/manifest.json")
    raw.size = len(MANIFEST)
    blob = raw.tobuf() + MANIFEST + b"\0" * (512 - len(MANIFEST) % 512) + info.tobuf()  # no data follows
    path = tmp_path / "lying.tar"
    path.write_bytes(blob)
    with pytest.raises(HostError, match="larger than"):
        BundleHost(str(path))


def test_directory_bundles_refuse_symlinks_and_fifos(tmp_path):
    tally.hostile_input("bundle: directory with symlink/fifo", 2)
    d = tmp_path / "d"
    d.mkdir()
    (d / "manifest.json").symlink_to("/etc/passwd")
    (d / "calls.jsonl").write_bytes(b"")
    with pytest.raises(HostError, match="symbolic link"):
        BundleHost(str(d))
    e = tmp_path / "e"
    e.mkdir()
    (e / "manifest.json").write_bytes(MANIFEST)
    os.mkfifo(e / "calls.jsonl")  # a reader that opened this would hang forever
    with pytest.raises(HostError):
        BundleHost(str(e))


# --- remote command injection, against a real sshd --------------------------------------------

HOSTILE_WORDS = [
    "x; touch {m}",
    "$(touch {m})",
    "`touch {m}`",
    "a\ntouch {m}",
    "' ; touch {m} ; '",
    '" ; touch {m}',
    "| touch {m}",
    "&& touch {m}",
    "> {m}",
    "-rf",
    "--help",
    "*",
    "~root",
    "{{a,b}}",
    "\\",
    "%s%n",
]


@pytest.mark.ssh
def test_hostile_words_reach_the_remote_command_as_single_argv_words(sshd, tmp_path):
    from dflash_doctor.hosts.ssh import SSHHost

    marker = tmp_path / "PWNED"
    words = [w.format(m=marker) for w in HOSTILE_WORDS]
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        res = h.run(["printf", "%s\\0", *words])
        tally.hostile_input("ssh: hostile argv words", len(words))
        assert res.ok
        assert res.stdout.split(b"\0")[:-1] == [w.encode() for w in words]  # each word arrived whole
        assert h.commands[-1] == ("printf", "%s\\0", *words)  # and this is the argv that was sent
    assert not marker.exists()


@pytest.mark.ssh
def test_hostile_paths_are_read_never_executed(sshd, tmp_path):
    from dflash_doctor.hosts.ssh import SSHHost
    from dflash_doctor.models.file_access import HostFiles

    marker = tmp_path / "PWNED"
    # one word of each kind (separator, substitution, quote, newline, option, glob): ~5 round trips each
    paths = [str(tmp_path / HOSTILE_WORDS[i].format(m=marker).replace("/", "_")) for i in (0, 1, 4, 3, 9, 11)]
    with SSHHost("testhost", ssh_config=str(sshd.ssh_config)) as h:
        files = HostFiles(h)
        for p in paths:
            tally.hostile_input("ssh: hostile paths x5 operations")
            for op in (h.read_file, h.list_dir, h.readlink, files.size):
                with pytest.raises(OSError):
                    op(p)
            assert files.exists(p) is False
        with pytest.raises(ValueError):
            h.read_file("-rf")  # a relative path could be taken for an option: refused before sending
        with pytest.raises(OSError):
            files.size("--version")  # stat gets "--" first, so this is a (missing) file, not an option
        for argv in h.commands:
            assert argv[-1] in paths or argv[-1] == "--version" or argv[0] == "find", argv
    assert not marker.exists()
