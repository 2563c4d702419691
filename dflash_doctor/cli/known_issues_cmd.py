"""`dflash-doctor known-issues`: the known engine bugs that affect a deployment, like pip-audit for packages.

Exit 0 when nothing affects it (or when listing the database), 1 when a known issue affects the stated
release, 2 on usage errors. A match on the stated release that depends on one fact not given (the
drafter's layers, the topology) still counts as affecting it; one that depends on an unknown release or
on several facts not given is listed as possible and does not.
"""

from __future__ import annotations

import typer

from ..errors import ExitCode, UsageError
from ..interpret.known_issues.audit import AuditUsageError, audit
from ..render import Format
from ..render.issues import summary
from .common import FormatOpt, OutputOpt, examples
from .output import Output


def register(app: typer.Typer) -> None:
    @app.command(
        "known-issues",
        epilog=examples(
            "dflash-doctor known-issues",
            "dflash-doctor known-issues --engine vllm==0.20.1 --method dflash",
            "dflash-doctor known-issues -e vllm==0.24.0 -m dflash --runner v2 --fact vocab_padded=true --format json",
        ),
    )
    def known_issues(
        engine: str | None = typer.Option(
            None,
            "--engine",
            "-e",
            metavar="NAME[==VERSION]",
            help="vllm, sglang, vllm-ascend or tensorrt-llm, with its release; without it, list the whole database.",
        ),
        method: str | None = typer.Option(
            None,
            "--method",
            "-m",
            metavar="METHOD",
            help="Speculative method: dflash, eagle3, eagle, mtp, medusa, draft, ngram, etc.",
        ),
        runner: str | None = typer.Option(
            None,
            "--runner",
            metavar="v1|v2",
            help="Model runner / speculative worker (VLLM_USE_V2_MODEL_RUNNER, SGLANG_ENABLE_SPEC_V2).",
        ),
        fact: list[str] = typer.Option(
            [],
            "--fact",
            metavar="KEY=VALUE",
            help="A deployment fact (repeatable), e.g. pd_disaggregation=true, drafter_swa=mixed.",
        ),
        fmt: Format = FormatOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """Known engine bugs that affect a deployment, like pip-audit.

        Exit 1 when one affects the stated release, 0 when none does (or when listing the database)."""

        try:
            result = audit(engine=engine, method=method, runner=runner, facts=fact)
        except AuditUsageError as exc:
            raise UsageError(str(exc), hint=exc.hint) from None
        out = Output(fmt=fmt, path=output)
        out.show(result)
        if output and output != "-":
            out.info(summary(result))
        return int(ExitCode.PROBLEMS if result.affected else ExitCode.OK)
