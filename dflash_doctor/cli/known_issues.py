"""`dflash-doctor known-issues`: the known engine bugs that affect a deployment, like pip-audit for packages.

Exit 0 when nothing affects it (or when listing the database), 1 when a known issue affects the stated
release, 2 on usage errors. A match on the stated release that depends on one fact not given (the
drafter's layers, the topology) still counts as affecting it; one that depends on an unknown release or
on several facts not given is listed as possible and does not.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from ..render import Format
from .common import FormatOpt, OutputOpt


def register(app: typer.Typer) -> None:
    @app.command("known-issues")
    def known_issues(
        engine: Optional[str] = typer.Option(None, "--engine", "-e", help="NAME or NAME==VERSION (vllm, sglang, "
                                             "vllm-ascend, tensorrt-llm); without it, list the whole database."),
        method: Optional[str] = typer.Option(None, "--method", "-m", help="Speculative method: dflash, eagle3, "
                                             "eagle, mtp, medusa, draft, ngram, …"),
        runner: Optional[str] = typer.Option(None, "--runner", help="Model runner / speculative worker: v1 or v2 "
                                             "(VLLM_USE_V2_MODEL_RUNNER, SGLANG_ENABLE_SPEC_V2)."),
        fact: List[str] = typer.Option([], "--fact", help="KEY=VALUE deployment fact (repeatable), e.g. "
                                       "pd_disaggregation=true, drafter_swa=mixed, temperature_positive=true."),
        fmt: Format = FormatOpt,
        output: Optional[str] = OutputOpt,
    ) -> int:
        """List the known engine bugs that affect a deployment: exit 1 when one does, 0 when none does."""
        from ..errors import ExitCode, UsageError
        from ..rank.known_issues.audit import AuditUsageError, audit
        from ..render.known_issues import render_known_issues, summary
        from .output import Output

        try:
            result = audit(engine=engine, method=method, runner=runner, facts=fact)
        except AuditUsageError as exc:
            raise UsageError(str(exc), hint=exc.hint) from None
        out = Output(fmt=fmt, path=output)
        out.write(render_known_issues(result, fmt, color=out.color))
        if output and output != "-":
            out.info(summary(result))
        return int(ExitCode.PROBLEMS if result.affected else ExitCode.OK)
