"""Bundles built to exhaust memory or time: caps checked from the headers, before anything is
allocated for them. Each runs `check bundle` in a child and reads the child's peak RSS.
(The full-size figures — 1.5 M members, a 1 GiB long name — come from benchmarks/bench_bundle_bombs.py.)"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tarfile

from tests.conftest import ROOT
from tests.hardening import tally

MiB = 1 << 20

# Peak RSS of `python -m dflash_doctor check bundle X` in a fresh child (a grandchild of the test, so
# no earlier subprocess of this test run counts).
_MEASURE = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
    "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.stderr.strip(), sep='\\t')"
)


def check_bundle(path) -> tuple[int, float, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "dflash_doctor", "check", "bundle", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    ).stdout
    rc, rss, said = out.rstrip("\n").split("\t", 2)
    return int(rc), int(rss) / 1024, said


def _zeros_gz(n_mib: int) -> bytes:
    """n MiB of zeros as concatenated gzip members: kilobytes on disk, built instantly."""
    one = gzip.compress(b"\0" * MiB, compresslevel=9)
    return one * n_mib


def _header(name: str, size: int = 0, typ: bytes = tarfile.REGTYPE) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.type, info.mtime = size, typ, 0
    return info.tobuf(format=tarfile.USTAR_FORMAT)


def _bundle_members() -> list[bytes]:
    man = json.dumps({"format": "dflash-doctor/bundle@1", "host": "x"}).encode()
    blocks = []
    for name, data in (("b/manifest.json", man), ("b/calls.jsonl", b"")):
        blocks.append(_header(name, len(data)) + data + b"\0" * (-len(data) % 512))
    return blocks


def test_a_tar_of_200k_empty_members_stops_at_the_member_cap(tmp_path):
    """Before: every member's TarInfo kept (677 MB and 27 s for 1.5 M), then 'not a bundle'."""
    tally.hostile_input("bundle: 200k empty members")
    path = tmp_path / "members.tar.gz"
    with gzip.open(path, "wb", compresslevel=1) as gz:
        for block in _bundle_members():  # a real bundle first: only the count is wrong
            gz.write(block)
        empty = _header("b/pad")
        for _ in range(200_000):
            gz.write(empty)
        gz.write(b"\0" * 1024)
    rc, rss, said = check_bundle(path)
    assert rc == 2 and "more than 64 members" in said, said
    assert rss < 120, f"{rss:.0f} MiB"


def test_a_long_name_header_claiming_a_gigabyte_is_refused_before_it_is_read(tmp_path):
    """Before: tarfile read the 1 GiB 'name' into memory (1.06 GB peak here, 2.1 GB in the report)."""
    tally.hostile_input("bundle: GNU long-name header claiming 1 GiB")
    path = tmp_path / "long-name.tar.gz"
    with open(path, "wb") as fh:
        fh.write(gzip.compress(_header("././@LongLink", 1 << 30, tarfile.GNUTYPE_LONGNAME)))
        fh.write(_zeros_gz(1024))
        fh.write(gzip.compress(_header("b/manifest.json") + b"\0" * 1024))
    assert path.stat().st_size < 2 * MiB
    rc, rss, said = check_bundle(path)
    assert rc == 2 and "extended header" in said and "1073741824 bytes" in said, said
    assert rss < 120, f"{rss:.0f} MiB"


def test_a_pax_header_claiming_a_gigabyte_is_refused_too(tmp_path):
    tally.hostile_input("bundle: pax header claiming 1 GiB")
    path = tmp_path / "pax.tar.gz"
    with open(path, "wb") as fh:
        fh.write(gzip.compress(_header("././@PaxHeader", 1 << 30, tarfile.XHDTYPE)))
        fh.write(_zeros_gz(1024))
    rc, rss, said = check_bundle(path)
    assert rc == 2 and "extended header" in said, said
    assert rss < 120, f"{rss:.0f} MiB"


def test_members_whose_sizes_add_past_the_total_cap_are_refused_before_they_are_skipped(tmp_path):
    """Three 200 MiB members the bundle does not need: before, all 600 MiB were inflated to skip them."""
    tally.hostile_input("bundle: members declaring 600 MiB in all")
    path = tmp_path / "big.tar.gz"
    with open(path, "wb") as fh:
        fh.write(gzip.compress(b"".join(_bundle_members())))
        for i in range(3):
            fh.write(gzip.compress(_header(f"b/pad{i}", 200 * MiB)))
            fh.write(_zeros_gz(200))
        fh.write(gzip.compress(b"\0" * 1024))
    rc, rss, said = check_bundle(path)
    assert rc == 2 and "larger than 512 MiB together" in said, said


def test_calls_that_would_expand_twentyfold_in_memory_are_refused(tmp_path):
    """`[[],[],…]`: ~60 bytes of memory per 3 bytes of JSON (48 MB took 1.3 GB before)."""
    tally.hostile_input("bundle: JSON expansion bomb in calls.jsonl")
    d = tmp_path / "json-bomb"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps({"format": "dflash-doctor/bundle@1", "host": "x"}))
    (d / "calls.jsonl").write_text('{"op":"list_dir","path":"/x","names":[' + ",".join(["[]"] * 4_000_000) + "]}\n")
    rc, rss, said = check_bundle(d)
    assert rc == 2 and "JSON values" in said, said
    assert rss < 200, f"{rss:.0f} MiB"


def test_a_sparse_member_is_refused():
    import io

    from dflash_doctor.hosts.bundle import _read_bundle_files
    from dflash_doctor.hosts.interface import HostError

    tally.hostile_input("bundle: GNU sparse member")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb") as gz:
        gz.write(_header("b/manifest.json", 0, tarfile.GNUTYPE_SPARSE) + b"\0" * 1024)
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".tar.gz") as fh:
        fh.write(buf.getvalue())
        fh.flush()
        try:
            _read_bundle_files(fh.name)
        except HostError as exc:
            assert "sparse" in exc.message
        else:
            raise AssertionError("a sparse member was read")


def test_a_real_bundle_still_reads(tmp_path):
    from dflash_doctor.hosts.bundle import BundleHost

    path = tmp_path / "ok.tar.gz"
    with gzip.open(path, "wb") as gz:
        gz.write(b"".join(_bundle_members()) + b"\0" * 1024)
    assert BundleHost(str(path)).origin == "x"
