"""`dflash-doctor diagnose`: rank causes from evidence supplied as files and flags."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..render import Format
from .common import FormatOpt, OutputOpt, exit_code_for
from .prom_opts import (BasicEnvOpt, BasicFileOpt, BasicUserOpt, BearerEnvOpt, BearerFileOpt, CaFileOpt,
                        InsecureOpt, SelectorOpt, SinceOpt, StepOpt, TimeoutOpt, UntilOpt)


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
        dataset: Optional[str] = typer.Option(None, "--dataset", help="Workload the log covers (gsm8k, mt-bench, random …): "
                                              "picks the published τ to compare with."),
        temperature: Optional[float] = typer.Option(None, "--temperature", help="Sampling temperature of the requests."),
        thinking: Optional[bool] = typer.Option(None, "--thinking/--no-thinking", help="Whether requests ran with thinking mode."),
        knowledge: List[str] = typer.Option([], "--knowledge", help="Extra causes/rules TOML (repeatable; also DFLASH_DOCTOR_KNOWLEDGE)."),
        plot: Optional[str] = typer.Option(None, "--plot", help="Draw the curve vs the pair's reference and τ over time: FILE.png|.svg|.html."),
        probe_result: Optional[str] = typer.Option(None, "--probe-result", help="JSON from `dflash-doctor probe --format json -o FILE`."),
        prometheus: Optional[str] = typer.Option(None, "--prometheus", help="Read the engine's history from this "
                                                 "Prometheus (with --selector naming one engine)."),
        selector: Optional[str] = SelectorOpt,
        since: str = SinceOpt,
        step: str = StepOpt,
        until: Optional[str] = UntilOpt,
        timeout: float = TimeoutOpt,
        bearer_token_file: Optional[str] = BearerFileOpt,
        bearer_token_env: Optional[str] = BearerEnvOpt,
        basic_auth_user: Optional[str] = BasicUserOpt,
        basic_auth_file: Optional[str] = BasicFileOpt,
        basic_auth_env: Optional[str] = BasicEnvOpt,
        ca_file: Optional[str] = CaFileOpt,
        insecure_skip_verify: bool = InsecureOpt,
        fmt: Format = FormatOpt,
        output: Optional[str] = OutputOpt,
    ) -> int:
        """Rank root causes of low acceptance from logs, metrics, configs and the launch command."""
        from ..collect.files import FileInputs, gather_files
        from ..collect.workload import gather_workload
        from ..doctor import build_report
        from .output import Output
        from .ranking_opts import resolve_settings, write_plot

        out = Output(fmt=fmt, path=output)
        settings = resolve_settings(knowledge)
        evidence = gather_files(FileInputs(logs=log, metrics=metrics, drafter=drafter, target=target,
                                           engine=engine, launch=launch, window=window), settings)
        if prometheus:
            from ..prometheus.gather import gather_prometheus
            from .prom_opts import prom_source

            gather_prometheus(evidence, prom_source(prometheus, selector, since, step, until, timeout, bearer_token_file,
                                                    bearer_token_env, basic_auth_user, basic_auth_file,
                                                    basic_auth_env, ca_file, insecure_skip_verify))
        gather_workload(evidence, temperature=temperature, thinking=thinking, dataset=dataset)
        if probe_result:
            from ..probe.evidence import gather_probe_result

            gather_probe_result(evidence, probe_result)
        report, warnings = build_report(evidence, settings=settings)
        for w in warnings:
            out.warn(w)
        out.report(report)
        if plot:
            write_plot(plot, report, evidence, out)
        if evidence.interrupted:
            from ..errors import ExitCode
            out.warn("interrupted (Ctrl-C): the report above holds only what was gathered before")
            return int(ExitCode.INTERRUPTED)
        return int(exit_code_for(report))
