"""Without the probe extra, both commands fail with one line naming the extra — no traceback."""

from __future__ import annotations

import pytest


@pytest.fixture
def no_torch(tmp_path):
    # a package named torch that fails to import, first on the path
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise ImportError('torch is not installed (test stub)')\n")
    return {"PYTHONPATH": str(tmp_path)}


@pytest.mark.parametrize(
    "args", [("probe", "--target", "t", "--drafter", "d"), ("layer-offset", "--target", "t", "--dump", "x.safetensors")]
)
def test_missing_torch_names_the_probe_extra(cli, no_torch, args):
    import os

    from tests.conftest import ROOT

    env = {"PYTHONPATH": no_torch["PYTHONPATH"] + os.pathsep + str(ROOT)}
    res = cli(*args, env=env)
    assert res.returncode == 2
    assert "probe" in res.stderr and "torch" in res.stderr
    assert "Traceback" not in res.stderr


def test_unknown_ablation_is_a_usage_error(cli):
    res = cli("probe", "--target", "t", "--drafter", "d", "--ablate", "offset,nope")
    assert res.returncode == 2 and "nope" in res.stderr


def test_help_lists_both_commands(cli):
    res = cli("--help")
    assert "probe" in res.stdout and "layer-offset" in res.stdout
