"""Helpers shared by `diagnose` and `gate`: extra knowledge files and --plot."""

from __future__ import annotations

from ..errors import UsageError


def load_knowledge(files: list[str]):
    from ..rank.knowledge import KnowledgeError, knowledge_for

    try:
        return knowledge_for(tuple(files))
    except KnowledgeError as exc:
        raise UsageError(f"bad knowledge data: {exc}", hint="see dflash_doctor/rank/causes.toml for the format") from None


def write_plot(path: str, report, evidence, logs: list[str], out) -> None:
    from ..render.plot import plot_report

    plot_report(report, evidence, path, logs=logs)
    out.info(f"plot written to {path}")
