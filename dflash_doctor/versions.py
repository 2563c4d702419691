"""Release versions and version ranges, as engines spell them (0.20.1+cu129, v0.13.0, 0.20.2rc1, 0.5.15.post1).

A small PEP 440-style reader: enough to order engine releases, pre-releases and post-releases. Local
build tags (`+cu129`) are dropped: 0.20.1+cu129 is the 0.20.1 release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION = re.compile(
    r"^\s*v?(?P<rel>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>a|alpha|b|beta|rc|c)[-_.]?(?P<pren>\d*))?"
    r"(?:[-_.]?(?:post|p)(?P<post>\d*))?"
    r"(?:[-_.]?dev(?P<dev>\d*))?"
    r"(?:\+[\w.]+)?\s*$",
    re.IGNORECASE,
)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}


class VersionError(ValueError):
    pass


@dataclass(frozen=True, order=True)
class Version:
    key: tuple
    text: str = ""

    def __str__(self) -> str:
        return self.text


def parse_version(text: str) -> Version:
    """Order key for a release string; VersionError when it is not one."""
    m = _VERSION.match(str(text))
    if not m:
        raise VersionError(f"{text!r} is not a release version")
    rel = tuple(int(x) for x in m["rel"].split("."))
    rel = rel + (0,) * (4 - len(rel)) if len(rel) < 4 else rel
    # dev < pre-release < final < post-release, at the same release number
    if m["dev"] is not None and m["pre"] is None and m["post"] is None:
        phase = (-1, int(m["dev"] or 0))
    elif m["pre"]:
        phase = (_PRE_RANK[m["pre"].lower()], int(m["pren"] or 0))
    else:
        phase = (3, 0)
    post = int(m["post"] or 0) if m["post"] is not None else -1
    return Version(key=(rel, phase, post), text=str(text).strip())


def is_version(text: str | None) -> bool:
    try:
        parse_version(text or "")
        return True
    except VersionError:
        return False


_SPEC = re.compile(r"^\s*(?P<op>>=|<=|==|>|<)\s*(?P<v>\S+)\s*$")


@dataclass(frozen=True)
class Range:
    """An inclusive/exclusive range written like pip's specifiers: ">=0.20.0,<0.22.0"."""

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
