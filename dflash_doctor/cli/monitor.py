"""`dflash-doctor monitor rules|grafana`: Prometheus alerting rules (YAML) and a Grafana dashboard
(JSON) for spec-decode acceptance, one alert series per engine."""

from __future__ import annotations

import typer

from .common import OutputOpt, examples, number

monitor_app = typer.Typer(
    name="monitor",
    help="Alerting rules and a Grafana dashboard for acceptance.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)

MinTauOpt = typer.Option(
    2.0,
    "--min-acceptance-length",
    metavar="TAU",
    help="Alert when τ (mean acceptance length) is below X.",
    parser=number("--min-acceptance-length", 1, 1000, above=True),
)
ByOpt = typer.Option(
    "instance", "--by", metavar="LABEL[,LABEL]", help="Label(s) each alert is grouped by (one alert per engine)."
)
SelectorOpt = typer.Option(
    None, "--selector", metavar="SELECTOR", help="Label matchers for the engines' series, e.g. '{job=\"vllm\"}'."
)
FirstPosOpt = typer.Option(
    0.3,
    "--min-first-position",
    metavar="RATE",
    help="Alert when position-1 acceptance falls below this rate.",
    parser=number("--min-first-position", 0, 1, above=True),
)
DropOpt = typer.Option(
    0.2,
    "--max-drop",
    metavar="SHARE",
    help="Alert when accepted tokens per draft fall by more than this share against the engine's own past.",
    parser=number("--max-drop", 0, 1, above=True),
)
OffsetOpt = typer.Option(
    "1d", "--offset", metavar="DURATION", help="How far back the engine's own past is (PromQL offset)."
)
WindowOpt = typer.Option("10m", "--window", metavar="DURATION", help="Range each alert measures over.")


def _settings(min_tau, by, selector, first, drop, offset, window, for_="10m", min_drafts=200):
    from ..errors import UsageError
    from ..prometheus.queries import parse_duration, parse_labels, promql_duration, selector_matchers
    from ..prometheus.rules import RuleSettings

    if min_tau <= 1.0:
        raise UsageError("--min-acceptance-length must be above 1 (τ counts the bonus token)")
    if not 0 < first < 1:
        raise UsageError("--min-first-position is a rate between 0 and 1")
    if not 0 < drop < 1:
        raise UsageError("--max-drop is a share between 0 and 1, e.g. 0.2")
    if min_drafts < 1:
        raise UsageError("--min-drafts must be at least 1")
    selector_matchers(selector)  # validated here, so a bad one is a usage error before any output
    return RuleSettings(
        min_acceptance_length=min_tau,
        first_position_min=first,
        drop=drop,
        offset=promql_duration(parse_duration(offset, "--offset")),
        window=promql_duration(parse_duration(window, "--window")),
        for_=promql_duration(parse_duration(for_, "--for")) if for_ not in ("0", "0s") else "0s",
        min_drafts=min_drafts,
        by=parse_labels(by, "--by"),
        selector=selector,
    )


@monitor_app.command(
    "rules",
    epilog=examples(
        "dflash-doctor monitor rules --min-acceptance-length 2 --by instance > dflash-rules.yml",
        "promtool check rules dflash-rules.yml",
    ),
)
def rules(
    min_acceptance_length: float = MinTauOpt,
    for_: str = typer.Option(
        "10m", "--for", metavar="DURATION", help="How long a condition must hold before the alert fires."
    ),
    by: str = ByOpt,
    selector: str | None = SelectorOpt,
    min_first_position: float = FirstPosOpt,
    max_drop: float = DropOpt,
    offset: str = OffsetOpt,
    window: str = WindowOpt,
    min_drafts: int = typer.Option(
        200,
        "--min-drafts",
        metavar="N",
        help="No alert on fewer drafts than this in the window.",
        parser=number("--min-drafts", 1, 10**15, integer=True),
    ),
    output: str | None = OutputOpt,
) -> int:
    """Print Prometheus alerting rules (YAML): low τ, position-1 collapse, drafts stopped, τ drop vs own past."""
    from ..prometheus.rules import AlertRules, alert_rules
    from .output import Output

    s = _settings(min_acceptance_length, by, selector, min_first_position, max_drop, offset, window, for_, min_drafts)
    Output(path=output).show(AlertRules(alert_rules(s)))
    return 0


@monitor_app.command(
    "grafana", epilog=examples("dflash-doctor monitor grafana --min-acceptance-length 2 > dflash-dashboard.json")
)
def grafana(
    min_acceptance_length: float = MinTauOpt,
    by: str = ByOpt,
    selector: str | None = SelectorOpt,
    min_first_position: float = FirstPosOpt,
    max_drop: float = DropOpt,
    offset: str = OffsetOpt,
    title: str = typer.Option("Speculative decoding acceptance", "--title", metavar="TEXT", help="Dashboard title."),
    output: str | None = OutputOpt,
) -> int:
    """Print a Grafana dashboard (JSON).

    τ per engine, per-position curves, draft rate, alert thresholds."""
    from ..prometheus.rules import Dashboard, grafana_dashboard
    from .output import Output

    s = _settings(min_acceptance_length, by, selector, min_first_position, max_drop, offset, "10m")
    Output(path=output).show(Dashboard(grafana_dashboard(s, title=title)))
    return 0


def register(app: typer.Typer) -> None:
    app.add_typer(monitor_app, name="monitor")
