"""The probe shipped to a host over SSH (loopback sshd) returns what a local run returns."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.conftest import FIXTURES  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.ssh]
TINY = FIXTURES / "tiny"
ARGS = (
    "--target",
    str(TINY / "target"),
    "--drafter",
    str(TINY / "drafter"),
    "--prompts",
    str(TINY / "prompts.jsonl"),
    "--limit",
    "2",
    "--max-new-tokens",
    "24",
    "--device",
    "cpu",
    "--ablate",
    "offset",
    "--format",
    "json",
)
SAME = ("acceptance", "lossless", "block_size", "end_rule", "decoding", "taps")


def test_remote_probe_equals_local(cli, sshd):
    local = cli("probe", *ARGS, timeout=300)
    assert local.returncode == 0, local.stderr
    remote = cli(
        "probe",
        *ARGS,
        "--host",
        "testhost",
        "--ssh-config",
        str(sshd.ssh_config),
        "--remote-python",
        sys.executable,
        timeout=300,
    )
    assert remote.returncode == 0, remote.stderr
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    assert "host" in b and "host" not in a  # the remote result says where it ran
    for key in SAME:
        assert a[key] == b[key], key
    assert [x["mean_acceptance_length"] for x in a["ablations"]] == [
        x["mean_acceptance_length"] for x in b["ablations"]
    ]


def test_remote_without_torch_is_one_line(cli, sshd, tmp_path):
    res = cli(
        "probe",
        *ARGS,
        "--host",
        "testhost",
        "--ssh-config",
        str(sshd.ssh_config),
        "--remote-python",
        "/usr/bin/python3",
        timeout=120,
    )
    assert res.returncode == 3
    assert "Traceback" not in res.stderr and "returned no result" in res.stderr


def test_remote_progress_is_streamed_to_stderr(cli, sshd):
    remote = cli(
        "probe",
        *ARGS,
        "--host",
        "testhost",
        "--ssh-config",
        str(sshd.ssh_config),
        "--remote-python",
        sys.executable,
        timeout=300,
    )
    assert remote.returncode == 0, remote.stderr
    assert "probe: prompt 1/" in remote.stderr


def test_every_module_the_shipped_probe_imports_is_shipped_with_it():
    """The probe runs on a GPU host from the modules remote.py sends (the package is not installed there): an
    import of any other dflash_doctor module, even inside a function, fails there and nowhere in these tests
    (their remote python has the package installed). Before: runner._pair imported names.py, after the run."""
    from dflash_doctor.probe.remote import MODULES, PACKAGE
    from tests.hardening.test_import_layers import _module_of, imports_of

    paths = {_module_of(PACKAGE / f"{rel}.py"): PACKAGE / f"{rel}.py" for rel in MODULES}
    missing = sorted(
        f"{mod}:{line} imports {target}"
        for mod, path in paths.items()
        for target, line in imports_of(path, mod)
        if target not in paths
    )
    assert not missing, missing
