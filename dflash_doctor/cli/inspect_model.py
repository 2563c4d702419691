"""`dflash-doctor inspect-model`: what a drafter's config and weight headers say, checked against its
target and an engine release — without loading a tensor."""

from __future__ import annotations

from typing import Optional

import typer

from ..render import Format
from .common import FormatOpt, OutputOpt


def register(app: typer.Typer) -> None:
    @app.command("inspect-model")
    def inspect_model(
        drafter: str = typer.Argument(..., help="Drafter checkpoint dir, its config.json, or a repo id in the local HF cache."),
        target: Optional[str] = typer.Option(None, "--target", "-t", help="Target checkpoint dir, config.json or cached repo id."),
        engine: Optional[str] = typer.Option(None, "--engine", help="Engine release to check against, e.g. vllm==0.20.1."),
        k: Optional[int] = typer.Option(None, "--num-speculative-tokens", "-k", min=1, max=4096,
                                        help="The k you serve with (DFlash expects block_size − 1)."),
        fmt: Format = FormatOpt,
        output: Optional[str] = OutputOpt,
    ) -> int:
        """Read a drafter (and its target) like a reviewer: SWA layers, layer taps, pairing, vocab, RoPE."""
        from ..errors import ExitCode
        from ..inspection import inspect
        from ..render.inspection import render_inspection
        from .output import Output

        from ..models.files import LocalFiles
        from .ranking_opts import resolve_settings

        out = Output(fmt=fmt, path=output)
        settings = resolve_settings(validate=False)
        insp = inspect(drafter, target=target, engine=engine, k=k, files=LocalFiles(settings.hf_cache),
                       settings=settings)
        for w in insp.loader_warnings:
            out.warn(w)
        out.write(render_inspection(insp, fmt, color=out.color, width=out.width))
        return int(ExitCode.PROBLEMS if insp.failed else ExitCode.OK)
