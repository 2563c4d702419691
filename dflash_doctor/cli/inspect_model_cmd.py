"""`dflash-doctor inspect-model`: what a drafter's config and weight headers say, checked against its
target and an engine release — without loading a tensor."""

from __future__ import annotations

import typer

from ..models.file_access import LocalFiles
from ..render import Format
from ..services.inspection import inspect
from .common import FormatOpt, OutputOpt, examples
from .output import Output
from .ranking_opts import resolve_settings


def register(app: typer.Typer) -> None:
    @app.command(
        "inspect-model",
        epilog=examples(
            "dflash-doctor inspect-model z-lab/Qwen3.6-27B-DFlash --target Qwen/Qwen3.6-27B --engine vllm==0.20.1",
            "dflash-doctor inspect-model ./my-drafter/config.json -k 15 --format json",
        ),
    )
    def inspect_model(
        drafter: str = typer.Argument(
            ..., metavar="DRAFTER", help="Drafter: DIR, its config.json, or a REPO_ID in the local HF cache."
        ),
        target: str | None = typer.Option(
            None, "--target", "-t", metavar="DIR|REPO_ID", help="Target checkpoint dir, config.json or cached repo id."
        ),
        engine: str | None = typer.Option(
            None, "--engine", metavar="NAME==VERSION", help="Engine release to check against, e.g. vllm==0.20.1."
        ),
        k: int | None = typer.Option(
            None,
            "--num-speculative-tokens",
            "-k",
            min=1,
            max=4096,
            metavar="K",
            help="The k you serve with (DFlash expects block_size − 1).",
        ),
        fmt: Format = FormatOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """Read a drafter and its target like a reviewer.

        Sliding-window layers, layer taps, pairing, vocabulary and RoPE from configs and weight headers,
        without loading a tensor. Exit 1 when a check fails, 0 when none does, 3 when nothing could be
        checked."""

        out = Output(fmt=fmt, path=output)
        settings = resolve_settings(validate=False)
        insp = inspect(
            drafter, target=target, engine=engine, k=k, files=LocalFiles(settings.hf_cache), settings=settings
        )
        for w in insp.loader_warnings:
            out.warn(w)
        out.show(insp)
        return int(insp.exit_code)
