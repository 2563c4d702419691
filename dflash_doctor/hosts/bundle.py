"""Bundles: a host's collection saved by `dflash-doctor collect`, replayed by `check bundle`.

A bundle is the transcript of every call the collector made on the host (commands with their
output, files read, directories listed), so `check bundle` runs the very same collector and
checks on the very same answers: collect once, diagnose anywhere. A bundle is data, never code:
it is read as JSON, a .tar.gz is read member by member in memory (nothing is extracted, so no
path in it can land anywhere), links and special members are ignored, and sizes are capped.
Secrets are filtered before anything is written (the collector supplies the filter).
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import tarfile
import zlib
from collections import defaultdict, deque
from collections.abc import Callable, Sequence

from ..atomic import open_atomic, write_dir_atomic
from .interface import CommandResult, Host, HostError

BUNDLE_FORMAT = "dflash-doctor/bundle@1"
MANIFEST = "manifest.json"
CALLS = "calls.jsonl"
MAX_BUNDLE_BYTES = 256 << 20
# Caps checked before anything is allocated for it. A .tar.gz names what it holds in headers, and
# tarfile believes them: 1.5 M empty members cost 677 MB of TarInfo objects, and a GNU long-name
# header claiming 1 GiB is read whole. A bundle holds two files (and their directory).
MAX_MEMBERS = 64
MAX_HEADER_BYTES = 64 << 10  # a GNU long name/link or a pax header: a path is at most 4 KiB
MAX_ARCHIVE_BYTES = 2 * MAX_BUNDLE_BYTES  # every member's declared size together: what reading through costs
# JSON values (lists, objects, elements) in calls.jsonl: `[[],[],…]` costs ~60 bytes of memory per 3
# bytes of text, so 48 MB of it took 1.3 GB. A real collection holds a few thousand.
MAX_JSON_VALUES = 2_000_000
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


class _BombError(Exception):
    """A header that breaks a cap: raised from inside tarfile, which must not turn it into 'not a tar'."""


class _CappedTarInfo(tarfile.TarInfo):
    """tarfile's member header, refusing extended headers larger than MAX_HEADER_BYTES before they are read."""

    def _proc_member(self, tarfile_):
        if (
            self.type
            in (
                tarfile.GNUTYPE_LONGNAME,
                tarfile.GNUTYPE_LONGLINK,
                tarfile.XHDTYPE,
                tarfile.XGLTYPE,
                tarfile.SOLARIS_XHDTYPE,
            )
            and self.size > MAX_HEADER_BYTES
        ):
            raise _BombError(
                f"an extended header (type {self.type!r}) claims {self.size} bytes; "
                f"a bundle's are under {MAX_HEADER_BYTES >> 10} KiB"
            )
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise _BombError("a sparse member: a bundle holds plain files only")
        return super()._proc_member(tarfile_)  # type: ignore[misc]  # (private; typeshed's TarInfo omits it)


def _json_values(data: bytes) -> int:
    """An upper bound of the JSON values calls.jsonl would allocate: separators and brackets outside strings."""
    crude = data.count(b",") + data.count(b"[") + data.count(b"{")
    if crude <= MAX_JSON_VALUES:
        return crude
    return sum(
        len(_JSON_STRING.sub(b"", line).translate(None, b"]} \t\r\n:0123456789.eE+-truefalsn"))
        for line in data.splitlines()
    )


Sanitizer = Callable[[str, str, bytes], bytes]  # (op, key, data) -> data to store


def _enc(data: bytes) -> dict:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode("ascii")}


def _dec(obj: dict | None) -> bytes:
    # A damaged or hostile bundle may hold anything here; what cannot be decoded replays as empty.
    if not isinstance(obj, dict):
        return b""
    if "text" in obj:
        return str(obj["text"]).encode("utf-8", "replace")
    try:
        return base64.b64decode(str(obj.get("b64", "")), validate=False)
    except ValueError:  # binascii.Error, non-ASCII text
        return b""


_ERRORS = {
    "FileNotFoundError": FileNotFoundError,
    "PermissionError": PermissionError,
    "IsADirectoryError": IsADirectoryError,
    "NotADirectoryError": NotADirectoryError,
    "TimeoutError": TimeoutError,
}


class RecordingHost(Host):
    """Wraps a live host and records every call (after `sanitize`) for a bundle."""

    def __init__(self, inner: Host, sanitize: Sanitizer | None = None):
        self.inner = inner
        self.name = inner.name
        self.sanitize = sanitize or (lambda op, key, data: data)
        self.calls: list[dict] = []

    def __getattr__(self, item):  # bytes counters and command log of the live host
        return getattr(self.inner, item)

    def run(self, argv, timeout=30.0, max_bytes=16 << 20, stdin=None, on_stderr=None, bulk=False) -> CommandResult:
        res = self.inner.run(argv, timeout=timeout, max_bytes=max_bytes, stdin=stdin, on_stderr=on_stderr, bulk=bulk)
        key = json.dumps(list(res.argv))
        self.calls.append(
            {
                "op": "run",
                "argv": list(res.argv),
                "rc": res.rc,
                "timed_out": res.timed_out,
                "truncated": res.truncated,
                "error": res.error,
                "stdout": _enc(self.sanitize("run", key, res.stdout)),
                "stderr": _enc(self.sanitize("run", key, res.stderr)),
            }
        )
        return res

    def _record_exc(self, op: str, path: str, exc: OSError) -> None:
        self.calls.append({"op": op, "path": path, "exc": type(exc).__name__, "msg": str(exc)[:300]})

    def read_file(self, path, max_bytes=16 << 20, timeout=30.0) -> bytes:
        try:
            data = self.inner.read_file(path, max_bytes=max_bytes, timeout=timeout)
        except OSError as exc:
            self._record_exc("read_file", path, exc)
            raise
        self.calls.append({"op": "read_file", "path": path, "data": _enc(self.sanitize("read_file", path, data))})
        return data

    def list_dir(self, path, timeout=30.0) -> list[str]:
        try:
            names = self.inner.list_dir(path, timeout=timeout)
        except OSError as exc:
            self._record_exc("list_dir", path, exc)
            raise
        self.calls.append({"op": "list_dir", "path": path, "names": list(names)})
        return names

    def readlink(self, path, timeout=30.0) -> str:
        try:
            target = self.inner.readlink(path, timeout=timeout)
        except OSError as exc:
            self._record_exc("readlink", path, exc)
            raise
        self.calls.append({"op": "readlink", "path": path, "target": target})
        return target

    def close(self) -> None:
        self.inner.close()

    def write_bundle(self, out: str, manifest: dict) -> None:
        """Write a directory, or a .tar.gz when `out` ends so, all or nothing (a full disk leaves no
        damaged bundle behind, and a retry starts clean). Refuses to overwrite anything."""

        if os.path.lexists(out):
            raise FileExistsError(out)
        manifest = {"format": BUNDLE_FORMAT, **manifest, "calls": len(self.calls)}
        man = json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"
        calls = b"".join(json.dumps(c, sort_keys=True).encode() + b"\n" for c in self.calls)
        if out.endswith((".tar.gz", ".tgz")):
            top = os.path.basename(out).rsplit(".t", 1)[0] or "bundle"
            with open_atomic(out, exclusive=True) as raw, tarfile.open(out, "w:gz", fileobj=raw) as tar:
                for name, data in ((MANIFEST, man), (CALLS, calls)):
                    info = tarfile.TarInfo(f"{top}/{name}")
                    info.size, info.mode, info.mtime = len(data), 0o644, 0
                    tar.addfile(info, io.BytesIO(data))
        else:
            write_dir_atomic(out, {MANIFEST: man, CALLS: calls})


def _read_bundle_files(path: str) -> tuple[bytes, bytes]:  # noqa: C901 -- archive guards (size, count, depth, member kind) kept together in read order
    found: dict[str, bytes] = {}
    if os.path.isdir(path):
        for name in (MANIFEST, CALLS):
            p = os.path.join(path, name)
            if os.path.islink(p):
                raise HostError(f"{path}: {name} is a symbolic link; a bundle holds plain files only")
            if not os.path.isfile(p):
                raise HostError(f"{path}: not a bundle ({name} is missing)")
            if os.path.getsize(p) > MAX_BUNDLE_BYTES:
                raise HostError(f"{path}: {name} is larger than {MAX_BUNDLE_BYTES >> 20} MiB")
            with open(p, "rb") as fh:
                found[name] = fh.read(MAX_BUNDLE_BYTES)
        return found[MANIFEST], found[CALLS]
    if not os.path.isfile(path):
        raise HostError(f"{path}: no such bundle")
    try:
        tar = tarfile.open(path, "r:*", tarinfo=_CappedTarInfo)  # noqa: SIM115 -- opening is guarded apart; `with tar` below
    except _BombError as exc:
        raise HostError(f"{path}: not a bundle: {exc}") from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise HostError(f"{path}: not a bundle directory or readable .tar.gz ({exc})") from None
    total = declared = 0
    try:
        with tar:
            for count, member in enumerate(tar, 1):
                # Checked from the header, before the member's content is read or skipped.
                declared += max(0, member.size)
                if count > MAX_MEMBERS:
                    raise HostError(f"{path}: not a bundle: more than {MAX_MEMBERS} members (a bundle holds 2 files)")
                if declared > MAX_ARCHIVE_BYTES:
                    raise HostError(
                        f"{path}: not a bundle: its members are larger than "
                        f"{MAX_ARCHIVE_BYTES >> 20} MiB together (by their headers)"
                    )
                # Only plain files named manifest.json / calls.jsonl at depth <= 1 are read; links,
                # devices, absolute or ../ names are ignored. Nothing is ever written to disk.
                if not member.isreg():
                    continue
                parts = member.name.split("/")
                if member.name.startswith("/") or ".." in parts or len(parts) > 2 or parts[-1] not in (MANIFEST, CALLS):
                    continue
                total += member.size
                if member.size > MAX_BUNDLE_BYTES or total > MAX_BUNDLE_BYTES:
                    raise HostError(f"{path}: bundle larger than {MAX_BUNDLE_BYTES >> 20} MiB")
                if parts[-1] in found:
                    raise HostError(f"{path}: more than one {parts[-1]} in the archive")
                member_fh = tar.extractfile(member)
                found[parts[-1]] = member_fh.read(MAX_BUNDLE_BYTES) if member_fh else b""
    except _BombError as exc:
        raise HostError(f"{path}: not a bundle: {exc}") from None
    except (tarfile.TarError, OSError, EOFError, zlib_error()) as exc:
        raise HostError(f"{path}: damaged archive ({exc})") from None
    if MANIFEST not in found or CALLS not in found:
        raise HostError(f"{path}: not a bundle (manifest.json and calls.jsonl are required)")
    return found[MANIFEST], found[CALLS]


def zlib_error():
    return zlib.error


class BundleHost(Host):
    """Answers the collector's calls from a bundle; a call that was not recorded is 'not in bundle'."""

    def __init__(self, path: str):
        self.path = path
        self.name = f"bundle:{path}"
        self.bytes_received = 0
        self.bytes_sent = 0
        self.commands: list[tuple[str, ...]] = []
        man_raw, calls_raw = _read_bundle_files(path)
        if _json_values(calls_raw) > MAX_JSON_VALUES:
            raise HostError(
                f"{path}: calls.jsonl holds more than {MAX_JSON_VALUES} JSON values; "
                f"a collection records a few thousand"
            )
        from ..schema import BundleManifest, SchemaError, convert  # msgspec: not at start-up

        try:
            manifest = json.loads(man_raw)
        except (ValueError, RecursionError) as exc:
            raise HostError(f"{path}: manifest.json is not valid JSON ({exc})") from None
        try:
            self.manifest = convert(manifest, BundleManifest, f"{path}: manifest.json")
        except SchemaError as exc:
            raise HostError(f"{exc} (not a {BUNDLE_FORMAT} bundle)") from None
        self.origin = self.manifest.host
        # when it was collected: the time of every piece of evidence replayed from it (not the replay's)
        self.recorded_at = self.manifest.collected_at[:40] or None
        self._answers: dict[tuple, deque] = defaultdict(deque)
        for no, line in enumerate(calls_raw.splitlines(), 1):
            if not line.strip():
                continue
            try:
                call = json.loads(line)
                key = self._key_of(call)
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                raise HostError(f"{path}: calls.jsonl line {no} is damaged ({exc})") from None
            self._answers[key].append(call)

    @staticmethod
    def _key_of(call: dict) -> tuple:
        op = call["op"]
        if op == "run":
            return ("run", tuple(str(a) for a in call["argv"]))
        if op in ("read_file", "list_dir", "readlink"):
            return (op, str(call["path"]))
        raise KeyError(f"unknown op {op!r}")

    def _take(self, key: tuple) -> dict | None:
        q = self._answers.get(key)
        if not q:
            return None
        return q.popleft() if len(q) > 1 else q[0]

    def run(
        self, argv: Sequence[str], timeout=30.0, max_bytes=16 << 20, stdin=None, on_stderr=None, bulk=False
    ) -> CommandResult:
        argv = tuple(str(a) for a in argv)
        self.commands.append(argv)
        call = self._take(("run", argv))
        if call is None:
            return CommandResult(argv, None, b"", b"", error="not recorded in the bundle")
        rc = call.get("rc")
        return CommandResult(
            argv,
            rc if isinstance(rc, int) else None,
            _dec(call.get("stdout"))[:max_bytes],
            _dec(call.get("stderr"))[:max_bytes],
            timed_out=bool(call.get("timed_out")),
            truncated=bool(call.get("truncated")),
            error=str(call["error"]) if call.get("error") else None,
        )

    def _raise(self, call: dict, path: str) -> None:
        exc = _ERRORS.get(str(call.get("exc")), OSError)
        raise exc(f"{path}: {call.get('msg', 'error')}")

    def read_file(self, path: str, max_bytes=16 << 20, timeout=30.0) -> bytes:
        call = self._take(("read_file", path))
        if call is None:
            raise FileNotFoundError(2, "not recorded in the bundle", path)
        if "exc" in call:
            self._raise(call, path)
        return _dec(call.get("data"))[:max_bytes]

    def list_dir(self, path: str, timeout=30.0) -> list[str]:
        call = self._take(("list_dir", path))
        if call is None:
            raise FileNotFoundError(2, "not recorded in the bundle", path)
        if "exc" in call:
            self._raise(call, path)
        names = call.get("names")
        return [str(n) for n in names] if isinstance(names, list) else []

    def readlink(self, path: str, timeout=30.0) -> str:
        call = self._take(("readlink", path))
        if call is None:
            raise FileNotFoundError(2, "not recorded in the bundle", path)
        if "exc" in call:
            self._raise(call, path)
        return str(call.get("target", ""))
