"""Property tests for what a user or a hostile file can hand the hosts layer: bundle contents
(manifest.json, calls.jsonl), host specs (`ssh://…`), and --engine specs. A damaged bundle is a
HostError; a replayed call is a CommandResult or an OSError — nothing else ever escapes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from dflash_doctor.collect.inputs import parse_engine_spec
from dflash_doctor.errors import UsageError
from dflash_doctor.hosts.bundle import BUNDLE_FORMAT, BundleHost
from dflash_doctor.hosts.interface import CommandResult, HostError
from dflash_doctor.hosts.ssh import parse_target
from tests.hardening import tally
from tests.hardening.strategies import json_value, nasty_text

blob = st.one_of(
    st.fixed_dictionaries({"text": st.one_of(st.text(max_size=40), json_value)}),
    st.fixed_dictionaries({"b64": st.one_of(st.text(max_size=12), json_value)}),
    json_value,
    st.none(),
)
argv = st.one_of(st.lists(st.one_of(st.text(max_size=10), json_value), max_size=4), json_value)
call = st.one_of(
    st.fixed_dictionaries(
        {"op": st.just("run"), "argv": argv},
        optional={
            "rc": json_value,
            "stdout": blob,
            "stderr": blob,
            "timed_out": json_value,
            "truncated": json_value,
            "error": json_value,
        },
    ),
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["read_file", "list_dir", "readlink"]),
            "path": st.one_of(st.sampled_from(["/etc/passwd", "/x"]), json_value),
        },
        optional={
            "data": blob,
            "names": json_value,
            "target": json_value,
            "exc": st.one_of(
                st.sampled_from(
                    ["FileNotFoundError", "PermissionError", "SystemExit", "KeyboardInterrupt", "__import__"]
                ),
                json_value,
            ),
            "msg": json_value,
        },
    ),
    json_value,
)


def _lines(calls, junk):
    out = [json.dumps(c) for c in calls]
    return "\n".join(out + junk)


def _replay(host: BundleHost, calls) -> None:
    for c in calls:
        if not isinstance(c, dict):
            continue
        op = c.get("op")
        try:
            if op == "run" and isinstance(c.get("argv"), list):
                res = host.run(c["argv"], max_bytes=64)
                assert isinstance(res, CommandResult) and len(res.stdout) <= 64 and len(res.stderr) <= 64
            elif op in ("read_file", "list_dir", "readlink") and isinstance(c.get("path"), str):
                got = getattr(host, op)(c["path"])
                assert isinstance(got, (bytes, str, list))
        except OSError:
            pass  # a recorded failure replays as the OSError a live host would raise


@given(
    st.one_of(st.fixed_dictionaries({"format": st.just(BUNDLE_FORMAT)}, optional={"host": json_value}), json_value),
    st.lists(call, max_size=8),
    st.lists(st.one_of(nasty_text, st.just("{"), st.just("[1,2]")), max_size=2),
)
def test_a_bundle_of_any_content_replays_or_is_refused_in_one_line(manifest, calls, junk):
    tally.example("bundle:calls")
    with tempfile.TemporaryDirectory() as d:
        Path(d, "manifest.json").write_text(json.dumps(manifest))
        Path(d, "calls.jsonl").write_text(_lines(calls, junk), errors="surrogatepass")
        try:
            host = BundleHost(d)
        except HostError as exc:
            assert exc.message and "\n" not in exc.message
            return
        _replay(host, calls)


@given(
    st.one_of(
        st.text(max_size=60),
        nasty_text,
        st.sampled_from(
            [
                "ssh://root:hunter2@h",
                "u:pw@h",
                "ssh://u@h:99999",
                "ssh://u@[::1]:22",
                "-oProxyCommand=touch /tmp/x",
                "h;rm -rf /",
                "$(id)@h",
                "ssh://u@h:22/../../",
                "ssh://" + "a" * 5000,
                "[",
                "@",
                ":",
                "",
            ]
        ),
    )
)
def test_host_specs_parse_or_are_refused_and_never_echo_a_password(spec):
    tally.example("host-spec")
    try:
        t = parse_target(spec)
    except HostError as exc:
        assert "hunter2" not in exc.message and "\n" not in exc.message
        return
    # Host names never reach a shell (paramiko connects; hints shlex.quote them), but whitespace or a
    # newline could forge a second known_hosts line when --accept-new-host-key records the key.
    for word in (t.alias, t.user or ""):
        assert word == word.strip() and not any(c.isspace() or ord(c) < 32 for c in word), word
        assert "@" not in word
    assert t.port is None or 0 < t.port < 65536


@given(st.one_of(st.text(max_size=40), nasty_text, st.sampled_from(["vllm==0.20.1", "sglang", "vllm==", "==1"])))
def test_engine_specs_parse_or_are_a_usage_error(spec):
    tally.example("engine-spec")
    try:
        name, version = parse_engine_spec(spec)
    except UsageError:
        return
    assert name and name == name.lower()
