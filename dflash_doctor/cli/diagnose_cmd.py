"""`dflash-doctor diagnose`: rank causes from evidence supplied as files and flags."""

from __future__ import annotations

import typer

from ..collect.builder import EvidenceBuilder
from ..collect.inputs import FileInputs, gather_files, require_inputs
from ..collect.workload import gather_workload
from ..errors import ExitCode
from ..evidence import Source
from ..evidence.payloads import LaunchConfig
from ..probe.saved_result import attach_probe
from ..prometheus.gather import gather_prometheus
from ..render import Format
from ..render.plot import can_plot
from ..services.doctor import build_report, require_something_read
from .common import (
    ForcePairOpt,
    FormatOpt,
    OutputOpt,
    ProbeResultOpt,
    VerboseOpt,
    examples,
    exit_code_for,
    invocation,
    number,
)
from .output import Output
from .prom_opts import (
    BasicEnvOpt,
    BasicFileOpt,
    BasicUserOpt,
    BearerEnvOpt,
    BearerFileOpt,
    CaFileOpt,
    InsecureOpt,
    SelectorOpt,
    SinceOpt,
    StepOpt,
    TimeoutOpt,
    UntilOpt,
    prom_source,
)
from .ranking_opts import resolve_settings, saved_probe, write_plot


def register(app: typer.Typer) -> None:
    @app.command(
        "diagnose",
        epilog=examples(
            "dflash-doctor diagnose --log server.log",
            "dflash-doctor diagnose --log server.log --drafter z-lab/Qwen3.6-27B-DFlash --target Qwen/Qwen3.6-27B \\",
            "    --engine vllm==0.20.1 --launch @serve-command.txt",
            "dflash-doctor diagnose --metrics http://gpu-7:8000/metrics --window 30s --drafter ./drafter",
            "dflash-doctor diagnose --log server.log --format json | jq '.plan.steps[0]'",
        ),
    )
    def diagnose(
        log: list[str] = typer.Option(
            [],
            "--log",
            "-l",
            metavar="LOG",
            help="Server log (repeatable; a whole log, an excerpt, .gz, or - for stdin).",
        ),
        metrics: list[str] = typer.Option(
            [], "--metrics", metavar="FILE|URL", help="Prometheus text: a saved scrape or a /metrics URL (repeatable)."
        ),
        window: str | None = typer.Option(
            None, "--window", metavar="DURATION", help="With a metrics URL: scrape twice, this far apart (e.g. 30s)."
        ),
        drafter: str | None = typer.Option(
            None,
            "--drafter",
            metavar="DIR|REPO_ID",
            help="Drafter checkpoint directory, its config.json, or a repo id in the local HF cache.",
        ),
        target: str | None = typer.Option(
            None, "--target", metavar="DIR|REPO_ID", help="Target checkpoint directory, config.json or cached repo id."
        ),
        engine: str | None = typer.Option(
            None, "--engine", metavar="NAME==VERSION", help="Engine and release, e.g. vllm==0.20.1."
        ),
        launch: str | None = typer.Option(
            None, "--launch", metavar="TEXT|@FILE", help="The serve command line, as text or @file."
        ),
        dataset: str | None = typer.Option(
            None,
            "--dataset",
            metavar="NAME",
            help="Workload the log covers (gsm8k, mt-bench, random, etc.): picks the published τ to compare with.",
        ),
        temperature: float | None = typer.Option(
            None,
            "--temperature",
            metavar="T",
            help="Sampling temperature of the requests.",
            parser=number("--temperature", 0, 100),
        ),
        thinking: bool | None = typer.Option(
            None, "--thinking/--no-thinking", help="Whether requests ran with thinking mode."
        ),
        reference: str | None = typer.Option(
            None,
            "--reference",
            metavar="FILE",
            help="Your own healthy figures for this pair: a speculation_profile.json (NVIDIA Model-Optimizer) or "
            "an InferenceX golden-AL YAML; they judge τ instead of the packaged bands.",
        ),
        knowledge: list[str] = typer.Option(
            [], "--knowledge", metavar="TOML", help="Extra causes/rules (repeatable; also DFLASH_DOCTOR_KNOWLEDGE)."
        ),
        plot: str | None = typer.Option(
            None,
            "--plot",
            metavar="FILE.png|.svg|.html",
            help="Draw the curve against the pair's reference, and τ over time.",
        ),
        probe_result: str | None = ProbeResultOpt,
        force_probe_pair: bool = ForcePairOpt,
        prometheus: str | None = typer.Option(
            None,
            "--prometheus",
            metavar="URL",
            help="Read the engine's history from this Prometheus (with --selector naming one engine).",
        ),
        selector: str | None = SelectorOpt,
        since: str = SinceOpt,
        step: str | None = StepOpt,
        until: str | None = UntilOpt,
        timeout: float = TimeoutOpt,
        bearer_token_file: str | None = BearerFileOpt,
        bearer_token_env: str | None = BearerEnvOpt,
        basic_auth_user: str | None = BasicUserOpt,
        basic_auth_file: str | None = BasicFileOpt,
        basic_auth_env: str | None = BasicEnvOpt,
        ca_file: str | None = CaFileOpt,
        insecure_skip_verify: bool = InsecureOpt,
        verbose: int = VerboseOpt,
        fmt: Format = FormatOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """Rank the causes of low acceptance from files and flags.

        Logs, metrics, drafter and target configs, the engine release and the launch command: every input
        sharpens the ranking. Exit 1 problem, 0 healthy, 3 insufficient data."""

        can_plot(plot)  # before any report: a --plot it cannot write is a usage error, said first
        out = Output(fmt=fmt, path=output, verbose=verbose)
        inputs = FileInputs(
            logs=log, metrics=metrics, drafter=drafter, target=target, engine=engine, launch=launch, window=window
        )
        for w in require_inputs(inputs, others=bool(prometheus or probe_result)):
            out.warn(w)
        settings = resolve_settings(knowledge)
        saved = saved_probe(probe_result)
        evidence = gather_files(inputs, settings)
        if prometheus:
            gather_prometheus(
                evidence,
                prom_source(
                    prometheus,
                    selector,
                    since,
                    step,
                    until,
                    timeout,
                    bearer_token_file,
                    bearer_token_env,
                    basic_auth_user,
                    basic_auth_file,
                    basic_auth_env,
                    ca_file,
                    insecure_skip_verify,
                ),
            )
        if temperature is None:
            launched = evidence.get(LaunchConfig)
            if launched is not None:
                EvidenceBuilder(evidence).add_server_sampling(launched, Source("flag", "--launch"))
        gather_workload(evidence, temperature=temperature, thinking=thinking, dataset=dataset)
        if reference:
            _use_reference(evidence, settings, reference, thinking)
        if saved is not None:
            attach_probe(evidence, saved, force=force_probe_pair)
        require_something_read(evidence)
        report, warnings = build_report(evidence, settings=settings, invocation=invocation())
        for w in warnings:
            out.warn(w)
        out.show(report)
        if plot:
            write_plot(plot, report, evidence, out)
        if evidence.interrupted:
            out.warn("interrupted (Ctrl-C): the report above holds only what was gathered before")
            return int(ExitCode.INTERRUPTED)
        return int(exit_code_for(report))


def _use_reference(evidence, settings, path: str, thinking: bool | None) -> None:
    """The user's reference judges this deployment: it becomes the pair baseline in force."""
    import dataclasses

    from ..errors import UsageError
    from ..interpret.user_reference import ReferenceError, load_reference

    try:
        ref, notes = load_reference(path, thinking)
    except ReferenceError as exc:
        raise UsageError(str(exc), hint="give a speculation_profile.json or an InferenceX golden-AL YAML") from None
    evidence.baselines = dataclasses.replace(settings.baselines(), user=ref)
    for n in notes:
        evidence.notes.append(n)
