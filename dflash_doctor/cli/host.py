"""Placeholder: filled by its issue. Registers nothing yet."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    return None
