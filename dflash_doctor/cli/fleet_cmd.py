"""`dflash-doctor fleet --prometheus URL`: every engine's acceptance from Prometheus, outliers first.

Exit 0 all engines healthy (or too few drafts to judge), 1 any engine has a problem, 3 nothing could
be read (Prometheus unreachable, or no spec-decode series match), 2 usage errors.
"""

from __future__ import annotations

import typer

from ..errors import ExitCode, UsageError
from ..prometheus.fleet import FleetQuery, run_fleet
from ..prometheus.queries import parse_duration, parse_labels
from ..render import Format
from .common import FormatOpt, OutputOpt, examples
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
    choose_step,
    make_auth,
    parse_until,
)


def register(app: typer.Typer) -> None:
    @app.command(
        "fleet",
        epilog=examples(
            "dflash-doctor fleet --prometheus http://prometheus:9090",
            "dflash-doctor fleet --prometheus http://prometheus:9090 --selector '{job=\"vllm\"}' --since 6h --by pod",
            "dflash-doctor fleet --prometheus https://prom.internal --bearer-token-file token --format json",
        ),
    )
    def fleet(
        prometheus: str = typer.Option(
            ..., "--prometheus", metavar="URL", help="Prometheus base URL, e.g. http://prometheus:9090."
        ),
        selector: str | None = SelectorOpt,
        since: str = SinceOpt,
        step: str | None = StepOpt,
        by: str = typer.Option(
            "instance",
            "--by",
            metavar="LABEL[,LABEL]",
            help="Label(s) that name an engine: instance, pod, model_name, or several: instance,engine.",
        ),
        peers: str = typer.Option(
            "model_name",
            "--peers",
            metavar="LABEL[,LABEL]",
            help="Label(s) engines must share to be compared for outliers (they must also share k).",
        ),
        until: str | None = UntilOpt,
        timeout: float = TimeoutOpt,
        bearer_token_file: str | None = BearerFileOpt,
        bearer_token_env: str | None = BearerEnvOpt,
        basic_auth_user: str | None = BasicUserOpt,
        basic_auth_file: str | None = BasicFileOpt,
        basic_auth_env: str | None = BasicEnvOpt,
        ca_file: str | None = CaFileOpt,
        insecure_skip_verify: bool = InsecureOpt,
        fmt: Format = FormatOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """Every engine's acceptance from Prometheus, outliers first.

        τ with its interval, the curve, the trend and the verdict per engine. Exit 1 when an engine has a
        problem, 0 otherwise, 3 when nothing could be read."""

        out = Output(fmt=fmt, path=output)
        if timeout <= 0:
            raise UsageError("--timeout must be positive")
        window = parse_duration(since, "--since")
        q = FleetQuery(
            selector=selector,
            since=window,
            step=choose_step(step, window),
            by=parse_labels(by, "--by"),
            peers=parse_labels(peers, "--peers"),
            until=parse_until(until),
        )
        auth = make_auth(
            bearer_token_file,
            bearer_token_env,
            basic_auth_user,
            basic_auth_file,
            basic_auth_env,
            ca_file,
            insecure_skip_verify,
        )
        result = run_fleet(prometheus, q, auth, timeout)
        out.show(result)
        if not result.engines:
            out.warn(
                f"no spec-decode series match {selector or 'any selector'} in the window "
                "(spec decoding off, the engines not scraped, or a selector that matches nothing)"
            )
            return int(ExitCode.NOT_CHECKED)
        return int(ExitCode.PROBLEMS if result.verdict == "problem" else ExitCode.OK)
