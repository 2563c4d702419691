"""Settings, resolved once at the CLI from flags and the environment, then passed down.

Nothing below `cli/` reads `os.environ` (tests/hardening/test_code_guards.py asserts it): every switch a
user can set by variable is here, with the variable that sets it, so `diagnose`, `check host` and
`check bundle` see the same knowledge files, baselines and scanner switches.

| variable | setting |
|---|---|
| DFLASH_DOCTOR_KNOWLEDGE | extra causes/rules TOML files (os.pathsep-separated), after `--knowledge` |
| DFLASH_DOCTOR_BASELINES | extra pair-baseline TOML files (os.pathsep-separated) |
| DFLASH_DOCTOR_GREP=0 | no GNU grep pre-filter for large logs (the pure-Python route) |
| DFLASH_DOCTOR_WORKERS=N | scan worker processes for large logs (1 = none) |
| DFLASH_DOCTOR_DEBUG=1 | tracebacks for errors |
| NO_COLOR, TERM=dumb | no colour |
| COLUMNS | terminal width for the report |
| HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME | where repo ids are looked up in this machine's HF cache |
| PATH | where `grep` is found for the pre-filter |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from .interpret.baselines import default_baselines
from .knowledge.causes import default_knowledge


def _paths(value: str | None) -> tuple[str, ...]:
    return tuple(p for p in (value or "").split(os.pathsep) if p)


@dataclass(frozen=True)
class Settings:
    knowledge_files: tuple[str, ...] = ()
    baselines_files: tuple[str, ...] = ()
    grep: bool = True
    workers: int | None = None  # None: up to 4, by the machine's cores
    debug: bool = False
    color: bool = True  # allowed at all (a terminal is still required)
    columns: int | None = None
    hf_cache: str | None = None  # resolved HF hub cache directory of this machine
    path: str = "/usr/bin:/bin"
    env: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        knowledge: tuple[str, ...] | list[str] = (),
        baselines: tuple[str, ...] | list[str] = (),
        debug: bool | None = None,
    ) -> Settings:
        env = dict(os.environ if environ is None else environ)
        workers = None
        w = env.get("DFLASH_DOCTOR_WORKERS", "").strip()
        if w.isdigit() and int(w) > 0:
            workers = min(int(w), 64)
        cols = env.get("COLUMNS", "").strip()
        return cls(
            knowledge_files=tuple(knowledge) + _paths(env.get("DFLASH_DOCTOR_KNOWLEDGE")),
            baselines_files=tuple(baselines) + _paths(env.get("DFLASH_DOCTOR_BASELINES")),
            grep=env.get("DFLASH_DOCTOR_GREP", "1") != "0",
            workers=workers,
            debug=bool(debug) or env.get("DFLASH_DOCTOR_DEBUG") == "1",
            color=not env.get("NO_COLOR") and env.get("TERM") != "dumb",
            columns=int(cols) if cols.isdigit() and 20 <= int(cols) <= 1000 else None,
            hf_cache=_hf_cache(env),
            path=env.get("PATH") or "/usr/bin:/bin",
            env={k: v for k, v in env.items() if k in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")},
        )

    def knowledge(self, declared: frozenset[str] | None = None):
        """The packaged causes plus the extra knowledge files, validated (KnowledgeError on bad data; with
        `declared`, also every rule's observation against what the checks declare)."""

        return default_knowledge(self.knowledge_files, declared)

    def baselines(self):
        return default_baselines(self.baselines_files)


def _hf_cache(env: Mapping[str, str]) -> str:
    if env.get("HF_HUB_CACHE"):
        return os.path.expanduser(env["HF_HUB_CACHE"])
    if env.get("HF_HOME"):
        return os.path.join(os.path.expanduser(env["HF_HOME"]), "hub")
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "huggingface", "hub")


DEFAULT = Settings.from_env({})
