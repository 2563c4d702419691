"""`dflash-doctor diagnose`: rank causes from evidence supplied as files and flags."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..render import Format
from .common import FormatOpt, OutputOpt, exit_code_for


def register(app: typer.Typer) -> None:
    @app.command("diagnose")
    def diagnose(
        log: List[str] = typer.Option([], "--log", "-l", help="Server log (repeatable; whole log, excerpt, .gz, or - for stdin)."),
        metrics: List[str] = typer.Option([], "--metrics", help="Prometheus text: a file or a /metrics URL (repeatable)."),
        window: Optional[str] = typer.Option(None, "--window", help="With a metrics URL: scrape twice, this far apart (e.g. 30s)."),
        drafter: Optional[str] = typer.Option(None, "--drafter", help="Drafter checkpoint dir, config.json or cached repo id."),
        target: Optional[str] = typer.Option(None, "--target", help="Target checkpoint dir, config.json or cached repo id."),
        engine: Optional[str] = typer.Option(None, "--engine", help="Engine and version, e.g. vllm==0.20.1."),
        launch: Optional[str] = typer.Option(None, "--launch", help="The serve command line, as TEXT or @FILE."),
        probe_result: Optional[str] = typer.Option(None, "--probe-result", help="JSON from `dflash-doctor probe --format json -o FILE`."),
        fmt: Format = FormatOpt,
        output: Optional[str] = OutputOpt,
    ) -> int:
        """Rank root causes of low acceptance from logs, metrics, configs and the launch command."""
        from ..collect.files import FileInputs, gather_files
        from ..doctor import build_report
        from .output import Output

        out = Output(fmt=fmt, path=output)
        evidence = gather_files(FileInputs(logs=log, metrics=metrics, drafter=drafter, target=target,
                                           engine=engine, launch=launch, window=window))
        if probe_result:
            from ..probe.evidence import gather_probe_result

            gather_probe_result(evidence, probe_result)
        report, warnings = build_report(evidence)
        for w in warnings:
            out.warn(w)
        out.report(report)
        return int(exit_code_for(report))
