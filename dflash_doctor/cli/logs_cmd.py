"""`dflash-doctor logs`: the acceptance picture of one or more server logs, and nothing else."""

from __future__ import annotations

import typer

from ..collect.builder import EvidenceBuilder
from ..collect.inputs import FileInputs, gather_engine, gather_logs, parse_time_bound, require_inputs
from ..errors import DoctorError, ExitCode, MissingExtra, UsageError
from ..evidence import EvidenceSet
from ..evidence.acceptance import AcceptanceSummary, StartupFacts
from ..evidence.engine_facts import EngineSupport
from ..evidence.model_facts import DrafterFacts, TargetFacts
from ..evidence.payloads import EngineId, LaunchConfig, ScanStats
from ..parse.frame import export_frame
from ..registry import load_checks
from ..render import Format
from ..services.doctor import build_report, require_something_read
from .common import FormatOpt, OutputOpt, VerboseOpt, examples, exit_code_for, invocation
from .output import Output
from .ranking_opts import resolve_settings


def register(app: typer.Typer) -> None:
    @app.command(
        "logs",
        epilog=examples(
            "dflash-doctor logs server.log",
            "dflash-doctor logs server.log.1 server.log --since '05-14 09:15' --csv intervals.csv",
            "journalctl -u vllm --no-pager | dflash-doctor logs - --format json",
        ),
    )
    def logs(
        files: list[str] = typer.Argument(..., metavar="LOG...", help="Log files (plain, .gz, rotated; - for stdin)."),
        since: str | None = typer.Option(
            None,
            "--since",
            metavar="TIME",
            help="Only intervals at or after TIME (e.g. '05-14 09:15', '2026-05-14T09:15:00').",
        ),
        until: str | None = typer.Option(None, "--until", metavar="TIME", help="Only intervals at or before TIME."),
        engine: str | None = typer.Option(
            None,
            "--engine",
            metavar="NAME==VERSION",
            help="Engine and release when the log does not say, e.g. sglang==0.5.8.",
        ),
        csv: str | None = typer.Option(None, "--csv", metavar="FILE", help="Also write the per-interval table as CSV."),
        parquet: str | None = typer.Option(
            None, "--parquet", metavar="FILE", help="Also write the per-interval table as Parquet."
        ),
        verbose: int = VerboseOpt,
        fmt: Format = FormatOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """The acceptance picture of server logs: τ, curve, trend.

        Exit 1 when the acceptance shows a problem, 0 when healthy, 3 when it cannot be judged."""

        if csv and parquet:
            raise UsageError("give --csv or --parquet, not both")
        lo = parse_time_bound(since, "--since") if since else None
        hi = parse_time_bound(until, "--until") if until else None

        out = Output(fmt=fmt, path=output, verbose=verbose)
        inputs = FileInputs(logs=list(files))
        for w in require_inputs(inputs):
            out.warn(w)
        files = inputs.logs
        settings = resolve_settings(validate=False)
        ev = EvidenceSet(label="logs")
        if engine:
            gather_engine(ev, engine)
        scan = gather_logs(ev, list(files), engine, since=lo, until=hi, settings=settings)
        require_something_read(ev)
        if scan is not None and (csv or parquet):
            _export(scan, csv, parquet, out)

        # The release the log's startup lines name is a fact the log gave: use it (engine checks, known issues).
        builder = EvidenceBuilder(ev)
        builder.engine_from_startup("the log names no engine release (give --engine NAME==VERSION)")
        builder.add_engine_support()
        for kind, what in ((DrafterFacts, "--drafter"), (TargetFacts, "--target"), (LaunchConfig, "--launch")):
            ev.missing(kind, f"a log does not carry it: `dflash-doctor diagnose {what} …` adds it")
        reg = load_checks()
        kinds = {AcceptanceSummary, ScanStats, StartupFacts, EngineId, EngineSupport}
        checks = [c for c in reg.checks if c.needs and set(c.needs) <= kinds]
        report, warnings = build_report(ev, checks=checks, settings=settings, invocation=invocation())
        for w in warnings:
            out.warn(w)
        out.show(report)
        if ev.interrupted:
            out.warn("interrupted (Ctrl-C): the report above holds only what was read before")
            return int(ExitCode.INTERRUPTED)
        return int(exit_code_for(report))


def _export(scan, csv: str | None, parquet: str | None, out) -> None:
    df = export_frame(scan)
    for col in ("line_no", "offset", "k", "drafts", "drafted", "accepted", "prefix_accepted", "emitted"):
        # counts and line numbers are integers: a float column (NaN where absent) would print 43.0
        if col in df.columns and df[col].dtype.kind == "f" and (df[col].dropna() % 1 == 0).all():
            df[col] = df[col].astype("Int64")
    # Rendered in memory, then written by the one writer (atomic.py): the previous file survives a full disk.
    if csv:
        blob = df.to_csv(index=False).encode("utf-8")
    else:
        import io

        buf = io.BytesIO()
        try:
            df.to_parquet(buf, index=False)
        except ImportError:
            raise MissingExtra("parquet", "pyarrow") from None
        blob = buf.getvalue()
    path = csv or parquet
    assert path is not None  # called only with --csv or --parquet
    try:
        from ..atomic import write_atomic

        write_atomic(path, blob)
    except OSError as exc:
        raise DoctorError(
            f"cannot write {path}: {exc.strerror or exc}",
            hint="nothing was written; a file that was there is unchanged",
            exit_code=ExitCode.USAGE,
        ) from None
    out.info(f"{len(df)} intervals written to {path}")
