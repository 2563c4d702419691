"""`dflash-doctor gate`: fail a CI pipeline when acceptance falls below thresholds.

Exit 0 pass, 1 a threshold failed, 3 no data (nothing measured, the 95 % interval straddles a threshold, or
fewer drafts than --min-drafts),
2 usage errors. Outputs: the result (--format terminal|json|markdown, stdout or --output), a JUnit
file (--junit), GitHub Actions annotations and step summary when running in GitHub Actions.
"""

from __future__ import annotations

import dataclasses
import os
import sys

import typer

from ..collect.inputs import FileInputs, gather_files, require_inputs
from ..errors import ExitCode, UsageError
from ..evidence.acceptance import MIN_DRAFTS, AcceptanceSummary
from ..models.launch_view import facts_conflicts
from ..render import Format
from ..render.github import annotations as github_annotations
from ..render.github import step_summary
from ..render.junit import render_junit
from ..render.plot import can_plot
from ..services.doctor import build_report
from ..services.gate import (
    MAX_TAU,
    PositionRate,
    Thresholds,
    evaluate,
    finite_option,
    load_baseline_tau,
    read_json_flag,
)
from .common import FormatOpt, OutputOpt, examples, number
from .output import Output, write_file
from .ranking_opts import resolve_settings, write_plot


def register(app: typer.Typer) -> None:  # noqa: C901 - the gate command's flags, one branch each
    @app.command(
        "gate",
        epilog=examples(
            "dflash-doctor gate --log server.log --min-acceptance-length 5.0 --min-position-rate 1:0.75",
            "dflash-doctor gate --log server.log --max-regression 5 --baseline ci/acceptance-baseline.json \\",
            "    --junit acceptance.xml --plot acceptance.png",
            "dflash-doctor gate --metrics http://localhost:8000/metrics --window 60s --min-acceptance-length 3",
        ),
    )
    def gate(
        log: list[str] = typer.Option(
            [], "--log", "-l", metavar="LOG", help="Server log(s) to measure (repeatable; .gz or - for stdin)."
        ),
        metrics: str | None = typer.Option(
            None, "--metrics", metavar="FILE|URL", help="A /metrics URL (or a saved scrape) to measure."
        ),
        window: str | None = typer.Option(
            None, "--window", metavar="DURATION", help="With --metrics URL: scrape twice, this far apart (e.g. 60s)."
        ),
        probe: str | None = typer.Option(
            None, "--probe", metavar="PROBE.json", help="A saved probe result (JSON with an acceptance block)."
        ),
        min_acceptance_length: float | None = typer.Option(
            None,
            "--min-acceptance-length",
            metavar="TAU",
            help="Fail when τ (mean acceptance length) is below TAU.",
            parser=number("--min-acceptance-length", 0, 1000),
        ),
        min_position_rate: list[str] = typer.Option(
            [],
            "--min-position-rate",
            metavar="POS:RATE",
            help="Fail when the rate at draft position POS (1-based) is below RATE (repeatable).",
        ),
        max_regression: float | None = typer.Option(
            None,
            "--max-regression",
            metavar="PCT",
            help="Fail when τ is more than PCT % below the --baseline's τ.",
            parser=number("--max-regression", 0, 100),
        ),
        baseline: str | None = typer.Option(
            None, "--baseline", metavar="REPORT.json", help="A saved earlier report (JSON) to compare with."
        ),
        min_drafts: int = typer.Option(
            0,
            "--min-drafts",
            metavar="N",
            help="An explicit floor: below this many drafts the gate reports no data "
            "(exit 3). Default none: the counts' 95 % interval decides.",
            parser=number("--min-drafts", 0, 10**15, integer=True),
        ),
        junit: str | None = typer.Option(
            None, "--junit", metavar="FILE.xml", help="Write a JUnit XML file: one testcase per threshold."
        ),
        plot: str | None = typer.Option(
            None,
            "--plot",
            metavar="FILE.png|.svg|.html",
            help="Draw the curve against the threshold and the reference, and τ over time.",
        ),
        fmt: Format = FormatOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """Fail a CI job when acceptance drops.

        Exit 0 every threshold passed, 1 a threshold failed, 3 no data, 2 usage error."""

        finite_option("--min-acceptance-length", min_acceptance_length, 0.0, MAX_TAU)
        finite_option("--max-regression", max_regression, 0.0)

        sources = sum(bool(x) for x in (log, metrics, probe))
        if sources != 1:
            raise UsageError(
                "give exactly one source: --log FILE…, --metrics URL [--window 60s], or --probe RESULT.json"
            )
        if min_drafts < 0:
            raise UsageError("--min-drafts must be 0 or more")
        if max_regression is not None and not baseline:
            raise UsageError(
                "--max-regression needs --baseline REPORT.json",
                hint="save one with `dflash-doctor diagnose --log … --format json -o REPORT.json`",
            )
        if max_regression is not None and max_regression < 0:
            raise UsageError("--max-regression is a percentage ≥ 0")
        base_tau = base_label = None
        if baseline:
            base_tau, base_label = load_baseline_tau(baseline)
        th = Thresholds(
            min_acceptance_length=min_acceptance_length,
            min_position_rates=tuple(PositionRate.parse(p) for p in min_position_rate),
            max_regression_pct=max_regression,
            baseline_tau=base_tau,
            baseline_label=base_label,
            min_drafts=min_drafts,
        )
        if not th.any():
            raise UsageError(
                "give at least one threshold",
                hint="--min-acceptance-length X, --min-position-rate POS:RATE, or --max-regression PCT "
                "--baseline REPORT.json",
            )
        can_plot(plot)  # before any result: a --plot it cannot write is a usage error, said first
        out = Output(fmt=fmt, path=output)

        from ..evidence.acceptance import AcceptanceSummary
        from ..evidence.payloads import ScanStats

        report = evidence = None
        reason = None
        if probe:
            acceptance, source = _acceptance_from_saved(probe)
        else:
            settings = resolve_settings()
            inputs = FileInputs(logs=log, metrics=[metrics] if metrics else [], window=window)
            for w in require_inputs(inputs, missing_ok=True):  # a log CI did not produce is no data (exit 3)
                out.warn(w)
            evidence = gather_files(inputs, settings)
            acceptance = evidence.get(AcceptanceSummary)
            source = ", ".join(log) if log else f"{metrics}" + (f" over {window}" if window else "")
            if acceptance is None:
                errs = "; ".join(f"{w}: {r}" for w, r in evidence.collection_errors)
                reason = errs or evidence.why_missing(AcceptanceSummary)
            else:
                report, warnings = build_report(evidence, settings=settings)
                for w in warnings:
                    out.warn(w)
        scanned = evidence.get(ScanStats) if evidence is not None else None  # forged or damaged lines fail it closed
        result = evaluate(
            acceptance,
            th,
            source,
            report=report,
            no_data_reason=reason,
            rejected=scanned.rejected if scanned else 0,
            rejected_examples=tuple(f"{m.where}: {m.reason}" for m in scanned.malformed_examples if m.rejected)
            if scanned
            else (),
            conflicts=tuple(facts_conflicts(evidence)) if evidence is not None else (),
        )
        if evidence is not None and evidence.interrupted:
            result = dataclasses.replace(
                result,
                notes=(
                    *result.notes,
                    "interrupted (Ctrl-C): measured only from the "
                    "part read before; the gate exits 130, whatever the outcome",
                ),
            )
        _emit(result, fmt, out, output, junit)
        if plot and report is not None:
            write_plot(plot, report, evidence, out, thresholds=th)
        elif plot:
            out.warn("no plot: nothing was measured from logs or metrics")
        if evidence is not None and evidence.interrupted:  # a partial measurement never passes a gate
            out.warn("interrupted (Ctrl-C): the result above holds only what was read before")
            return int(ExitCode.INTERRUPTED)
        return int(result.exit_code)


def _emit(result, fmt: Format, out, output: str | None, junit: str | None) -> None:
    if os.environ.get("GITHUB_ACTIONS") == "true":
        # Workflow commands are read from the job's output; keep them off stdout when stdout is JSON.
        stream = sys.stderr if (fmt == Format.JSON and not output) else sys.stdout
        stream.write(github_annotations(result))
        stream.flush()
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            try:
                with open(summary, "a", encoding="utf-8") as fh:
                    fh.write(step_summary(result) + "\n")
            except OSError as exc:
                out.warn(f"cannot append to GITHUB_STEP_SUMMARY {summary}: {exc.strerror or exc}")
    out.show(result)
    if junit:
        write_file(junit, render_junit(result), "the JUnit file")
        out.info(f"JUnit written to {junit}")


def _acceptance_from_saved(path: str):
    """An AcceptanceSummary from a saved report's acceptance block (e.g. `probe --format json`)."""
    from ..schema import SavedAcceptanceDoc, convert  # msgspec: not at start-up

    acc = convert(read_json_flag(path, "--probe"), SavedAcceptanceDoc, f"--probe {path}", UsageError).acceptance
    if acc is None:
        return None, f"{path} (no acceptance block)"
    pp = tuple(float(x) for x in acc.per_position)
    summary = AcceptanceSummary(
        mean_acceptance_length=float(acc.mean_acceptance_length),
        per_position=pp,
        drafts=float(acc.drafts),
        drafted=acc.drafted or 0,
        accepted=acc.accepted or 0,
        k=acc.k if acc.k is not None else (len(pp) or None),
        draft_acceptance_rate=None if acc.draft_acceptance_rate is None else float(acc.draft_acceptance_rate),
        intervals=1 if acc.intervals is None else acc.intervals,
        formats=acc.formats or ("saved-report",),
        min_drafts=MIN_DRAFTS if acc.min_drafts is None else acc.min_drafts,
    )
    return summary, path
