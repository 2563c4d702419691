"""The conformance suite on real release wheels.

DFLASH_DOCTOR_CONFORMANCE=1 (what `make conformance` sets): every release, downloading what the cache lacks
(~6 GB for vLLM). =0: none. Unset (the plain test run, CI): every release when all are already cached, else
the smoke subset — the releases where the behaviour changes for the seed's kind of deployment (vLLM 0.20.1:
raw ids and ignored windows; 0.26.0: both fixed; 0.33.0: the newest; SGLang 0.5.22), four wheels, 0.92 GB
downloaded once into the cache; a release outside it is skipped with that reason."""

from __future__ import annotations

import os

import pytest

from tests.conformance.wheels import all_cached, cache_dir

_DURATIONS: list[float] = []
_RESULTS: dict[str, str] = {}


SMOKE = {("vllm", "0.20.1"), ("vllm", "0.26.0"), ("vllm", "0.33.0"), ("sglang", "0.5.22")}


def mode() -> str:
    """ "all", "smoke" or "off" (see the module docstring)."""
    env = os.environ.get("DFLASH_DOCTOR_CONFORMANCE", "")
    if env == "1":
        return "all"
    if env == "0":
        return "off"
    return "all" if all_cached() else "smoke"


def download_allowed() -> bool:
    return mode() in ("all", "smoke")


def releases_of(item) -> set[tuple[str, str]]:
    """The releases a conformance test reads (its parameters; a test without them names its own)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "row" in params:
        return {(params["row"]["engine"], params["row"]["version"])}
    if "engine" in params and "version" in params:
        return {(params["engine"], params["version"])}
    return set(getattr(item.function, "releases", ()))


def pytest_collection_modifyitems(config, items):
    mine = [i for i in items if "conformance" in i.keywords]
    m = mode() if mine else "all"
    for item in mine:
        if m == "off":
            item.add_marker(pytest.mark.skip(reason="DFLASH_DOCTOR_CONFORMANCE=0"))
        elif m == "smoke" and not releases_of(item) <= SMOKE:
            item.add_marker(
                pytest.mark.skip(
                    reason=f"not in the smoke subset and not cached in {cache_dir()} (`make conformance` runs every "
                    "release; DFLASH_DOCTOR_WHEEL_CACHE picks the cache)"
                )
            )


def pytest_runtest_logreport(report):
    if "conformance" not in report.keywords:
        return
    _DURATIONS.append(report.duration)  # setup, call and teardown: the suite's own time, not the wall since it began
    if report.when == "call":
        _RESULTS[report.nodeid.split("::", 1)[-1]] = report.outcome


def pytest_terminal_summary(terminalreporter):
    if not _DURATIONS or not _RESULTS:
        return
    took = sum(_DURATIONS)
    passed = sorted(k for k, v in _RESULTS.items() if v == "passed")
    terminalreporter.write_sep(
        "-", f"conformance: {len(passed)}/{len(_RESULTS)} passed in {took:.0f} s (wheel cache {cache_dir()})"
    )
