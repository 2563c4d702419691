"""The conformance suite is opt-in: it runs when every wheel it needs is already in the cache (offline), or
when DFLASH_DOCTOR_CONFORMANCE=1 (what `make conformance` sets), which downloads the missing ones."""

from __future__ import annotations

import os
import time

import pytest

from tests.conformance.wheels import all_cached, cache_dir

_T0: list[float] = []
_RESULTS: dict[str, str] = {}


def download_allowed() -> bool:
    return os.environ.get("DFLASH_DOCTOR_CONFORMANCE") == "1"


def pytest_collection_modifyitems(config, items):
    mine = [i for i in items if "conformance" in i.keywords]
    if not mine or download_allowed() or all_cached():
        return
    skip = pytest.mark.skip(reason=f"release wheels are not all cached in {cache_dir()} "
                                   "(`make conformance` downloads them; DFLASH_DOCTOR_WHEEL_CACHE picks the cache)")
    for item in mine:
        item.add_marker(skip)


def pytest_runtest_setup(item):
    if "conformance" in item.keywords and not _T0:
        _T0.append(time.monotonic())


def pytest_runtest_logreport(report):
    if report.when == "call" and "conformance" in report.keywords:
        _RESULTS[report.nodeid.split("::", 1)[-1]] = report.outcome


def pytest_terminal_summary(terminalreporter):
    if not _T0 or not _RESULTS:
        return
    took = time.monotonic() - _T0[0]
    passed = sorted(k for k, v in _RESULTS.items() if v == "passed")
    terminalreporter.write_sep("-", f"conformance: {len(passed)}/{len(_RESULTS)} passed in {took:.0f} s "
                                    f"(wheel cache {cache_dir()})")
