"""`pip install .` must ship the top-level checks/ as dflash_doctor.checks, and every package."""

import subprocess
import sys
import tomllib

from tests.conftest import ROOT


def test_every_source_package_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"dflash_doctor.checks"}
    for init in (ROOT / "dflash_doctor").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        found.add(".".join(rel.parts))
    # a folder of data only (no modules) is listed too, or setuptools warns "Package would be ignored"
    data = {
        ".".join(d.relative_to(ROOT).parts)
        for d in (ROOT / "dflash_doctor").rglob("*")
        if d.is_dir() and d.name != "__pycache__" and not (d / "__init__.py").exists() and any(d.iterdir())
    }
    assert found | data == listed


def test_building_warns_of_no_ignored_package(tmp_path):
    """setuptools' "Package would be ignored" (once ~40 lines in every `make demo`) is gone."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "would be ignored" not in proc.stdout + proc.stderr


def test_every_extra_the_cli_suggests_exists():
    """`--parquet` once suggested `pip install 'dflash-doctor[parquet]'`, an extra that did not exist."""
    import re

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    named = {
        m.group(1)
        for f in (ROOT / "dflash_doctor").rglob("*.py")
        for m in re.finditer(r'MissingExtra\(\s*"([\w-]+)"', f.read_text(encoding="utf-8"))
    }
    assert "parquet" in named and named <= set(extras), named - set(extras)
    assert any(d.startswith("pyarrow") for d in extras["parquet"])


def test_every_folder_of_modules_is_a_package():
    """A folder of modules without __init__.py imports from a checkout (a namespace package) but is not in the
    package list, so an installed wheel lacks it (parse/fast/ was such a folder)."""
    loose = sorted(
        str(d.relative_to(ROOT))
        for d in (ROOT / "dflash_doctor").rglob("*")
        if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")) and not (d / "__init__.py").is_file()
    )
    assert not loose, loose


def test_wheel_contains_builtin_checks_and_data(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    pkg = target / "dflash_doctor"
    assert (pkg / "checks" / "acceptance_curve.py").is_file()
    assert (pkg / "knowledge" / "causes.toml").is_file()
    assert (pkg / "probe" / "data" / "prompts.jsonl").is_file()
    assert not (target / "checks").exists(), "checks/ must not install as a top-level package"
    proc = subprocess.run(
        [sys.executable, "-m", "dflash_doctor", "checks", "list", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "acceptance-curve" in proc.stdout
