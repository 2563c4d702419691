"""Release versions and version ranges, as engines spell them (0.20.1+cu129, v0.13.0, 0.20.2rc1, 0.5.15.post1).

The one version reader of the package: `packaging.version` parses and orders (PEP 440: dev < pre-release <
final < post-release), and every comparison goes through it. A local build tag (`+cu129`) is dropped:
0.20.1+cu129 is the 0.20.1 release.

Two comparisons, for two kinds of data:
- `parse_version(text)` orders releases exactly: a bug fixed in 0.5.15.post1 is still in 0.5.15 (the
  known-issues database, the releases whose source was read).
- `release_of(text)` keeps only the numeric release: the engine-support table's rows are ranges of releases
  (`min` .. `max`), and 0.22.0rc1 or a 0.22.0.dev build behaves as the 0.22 row says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeGuard

from packaging.version import InvalidVersion
from packaging.version import Version as _Parsed


class VersionError(ValueError):
    pass


@dataclass(frozen=True, order=True)
class Version:
    """A release as packaging orders it (`key`), with the spelling it was read from (`text`)."""

    key: _Parsed
    text: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.text


def parse_version(text: str | None) -> Version:
    """The release a string names; VersionError when it is not one."""
    spelled = str(text or "").strip()
    try:
        parsed = _Parsed(spelled)
    except InvalidVersion:
        raise VersionError(f"{text!r} is not a release version") from None
    return Version(key=_Parsed(parsed.public), text=spelled)


def release_of(text: str | None) -> Version:
    """The numeric release only (no pre-, post-, dev or local part): 0.22.0rc1 -> 0.22.0."""
    v = parse_version(text)
    return Version(key=_Parsed(v.key.base_version), text=v.text)


def is_version(text: str | None) -> TypeGuard[str]:
    try:
        parse_version(text)
        return True
    except VersionError:
        return False


_SPEC = re.compile(r"^\s*(?P<op>>=|<=|==|>|<)\s*(?P<v>\S+)\s*$")


@dataclass(frozen=True)
class Range:
    """An inclusive/exclusive range written like pip's specifiers: ">=0.20.0,<0.22.0". Unlike a pip specifier,
    `<0.22.0` contains 0.22.0rc1: a release candidate of the fixed release is counted as affected."""

    text: str
    clauses: tuple[tuple[str, Version], ...]

    def contains(self, version: Version) -> bool:
        for op, bound in self.clauses:
            k, b = version.key, bound.key
            ok = {">=": k >= b, "<=": k <= b, ">": k > b, "<": k < b, "==": k == b}[op]
            if not ok:
                return False
        return True

    @property
    def upper(self) -> tuple[str, Version] | None:
        ups = [(op, v) for op, v in self.clauses if op in ("<", "<=")]
        return min(ups, key=lambda x: x[1].key) if ups else None

    def __str__(self) -> str:
        return self.text


def parse_range(text: str) -> Range:
    parts = [p for p in str(text).split(",") if p.strip()]
    if not parts:
        raise VersionError(f"{text!r} is not a version range")
    clauses = []
    for p in parts:
        m = _SPEC.match(p)
        if not m:
            raise VersionError(f"{p.strip()!r} in {text!r} is not a clause like '>=0.20.0' or '<0.22.0'")
        clauses.append((m["op"], parse_version(m["v"])))
    return Range(text=",".join(p.strip() for p in parts), clauses=tuple(clauses))
