"""Fixtures and the end-of-run tally of the hardening suite (see tally.py)."""

from __future__ import annotations

import json
import os

from tests.hardening import tally


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    data = tally.as_dict()
    if not any((data["fuzz_examples"], data["faults_injected"], data["hostile_inputs"], data["secrets_checked"])):
        return
    tr = terminalreporter
    tr.section("hardening tally")
    tr.write_line(f"fuzz examples run: {data['fuzz_examples_total']}")
    for name, n in data["fuzz_examples"].items():
        tr.write_line(f"  {name:<28} {n}")
    inj, ok = sum(tally.faults.values()), sum(tally.faults_survived.values())
    tr.write_line(f"faults injected: {inj}, survived: {ok}")
    for name, n in data["faults_injected"].items():
        tr.write_line(f"  {name:<28} {data['faults_survived'].get(name, 0)}/{n}")
    tr.write_line(f"hostile inputs tried: {data['hostile_inputs_total']}")
    for name, n in data["hostile_inputs"].items():
        tr.write_line(f"  {name:<28} {n}")
    tr.write_line(f"secrets checked: {sum(tally.secrets_checked.values())}, leaked: {data['secrets_leaked_total']}")
    for name, n in data["secrets_checked"].items():
        tr.write_line(f"  {name:<28} {n} checked, {data['secrets_leaked'].get(name, 0)} leaked")
    path = os.environ.get("HARDENING_TALLY")
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
