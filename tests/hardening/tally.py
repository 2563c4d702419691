"""Counters the hardening suite reports at the end of a run: fuzz examples per parser, faults
injected and survived, hostile inputs tried, secrets checked and leaked.

A property test calls `example("parser")` once per generated example; a fault test calls
`fault("name")` before injecting and `survived("name")` after its assertions passed. The totals
are printed in pytest's terminal summary and written as JSON to $HARDENING_TALLY when it is set.
"""

from __future__ import annotations

from collections import Counter

examples: Counter[str] = Counter()
faults: Counter[str] = Counter()
faults_survived: Counter[str] = Counter()
hostile: Counter[str] = Counter()
secrets_checked: Counter[str] = Counter()
secrets_leaked: Counter[str] = Counter()


def example(parser: str) -> None:
    examples[parser] += 1


def fault(name: str, n: int = 1) -> None:
    faults[name] += n


def survived(name: str, n: int = 1) -> None:
    faults_survived[name] += n


def hostile_input(kind: str, n: int = 1) -> None:
    hostile[kind] += n


def secrets(fmt: str, checked: int, leaked: int) -> None:
    secrets_checked[fmt] += checked
    secrets_leaked[fmt] += leaked


def as_dict() -> dict:
    return {
        "fuzz_examples": dict(sorted(examples.items())),
        "fuzz_examples_total": sum(examples.values()),
        "faults_injected": dict(sorted(faults.items())),
        "faults_survived": dict(sorted(faults_survived.items())),
        "hostile_inputs": dict(sorted(hostile.items())),
        "hostile_inputs_total": sum(hostile.values()),
        "secrets_checked": dict(sorted(secrets_checked.items())),
        "secrets_leaked": dict(sorted(secrets_leaked.items())),
        "secrets_leaked_total": sum(secrets_leaked.values()),
    }
