"""Settings resolved once per command (flags + environment), and --plot."""

from __future__ import annotations

import os

from ..check import declared_observations
from ..errors import UsageError
from ..knowledge.causes import KnowledgeError
from ..probe.saved_result import read_probe_result
from ..registry import load_checks
from ..render.plot import plot_report
from ..settings import Settings


def resolve_settings(knowledge: list[str] | tuple[str, ...] = (), validate: bool = True):
    """The command's Settings; a bad knowledge file (or DFLASH_DOCTOR_KNOWLEDGE entry) is a usage error,
    found before anything is collected."""

    settings = Settings.from_env(os.environ, knowledge=tuple(knowledge))
    # Only files the user gave need checking before anything is collected: the packaged data is checked by the
    # test suite, and loading it (the checks, causes.toml) is left to the report (~0.1 s of a run).
    if validate and (settings.knowledge_files or settings.baselines_files):
        try:
            settings.knowledge(frozenset(declared_observations(load_checks().checks)))
            settings.baselines()
        except KnowledgeError as exc:
            raise UsageError(
                f"bad knowledge data: {exc}",
                hint="see dflash_doctor/knowledge/causes.toml and baselines.toml for the format",
            ) from None
        except OSError as exc:
            raise UsageError(f"cannot read a knowledge or baselines file: {exc.strerror or exc}") from None
    return settings


def saved_probe(path: str | None):
    """`--probe-result FILE` read and validated before anything is collected (a bad file: usage error)."""
    if not path:
        return None

    return read_probe_result(path)


def write_plot(path: str, report, evidence, out, thresholds=None) -> None:
    plot_report(report, evidence, path, thresholds)
    out.info(f"plot written to {path}")
