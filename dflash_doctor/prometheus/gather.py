"""Prometheus history as diagnosis evidence: the same ACCEPTANCE summary a log gives (per-position
curve, drafts, τ over time per step, per engine) plus a METRICS item holding what Prometheus said
(window, queries, restarts, the change point), for `diagnose --prometheus URL --selector '{…}'`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ExitCode
from ..evidence import EvidenceSet, Source
from ..evidence.acceptance import AcceptanceSummary
from ..evidence.payloads import MetricsScrape
from ..parse.frame import summarize
from .client import PromAuth, PromClient, PrometheusError
from .fleet import (
    EngineRow,
    Fleet,
    FleetQuery,
    _iso,
    _key,
    _metric,
    _metrics_summary,
    _metrics_value,
    _num,
    _pair,
    read_fleet,
)
from .metrics import LCPP_DRAFT_TOKENS, LCPP_PER_POS, VLLM_DRAFT_TOKENS, VLLM_PER_POS, Series
from .queries import TAG, combined, promql_duration, selector_matchers


@dataclass(frozen=True)
class PromSource:
    url: str
    selector: str | None = None
    since: float = 6 * 3600.0
    step: float = 300.0
    until: float | None = None
    auth: PromAuth = field(default_factory=PromAuth)
    timeout: float = 30.0


def gather_prometheus(ev: EvidenceSet, src: PromSource) -> None:
    """Add the history of the engine(s) the selector matches. An unreachable Prometheus is a
    could-not-collect (the rest of the report still comes out); a malformed selector is a usage error."""
    client = PromClient(src.url, src.auth, src.timeout)
    q = FleetQuery(
        selector=src.selector,
        since=src.since,
        step=src.step,
        by=("instance",),
        peers=("model_name", "engine"),
        until=src.until,
    )
    where = f"prometheus {client.shown_url}"
    try:
        with client:
            fleet = read_fleet(client, q, diagnose=False)
            pos_steps = (
                _per_position_steps(client, fleet) if any(e.kind in ("vllm", "llamacpp") for e in fleet.engines) else []
            )
    except PrometheusError as exc:
        if exc.exit_code == ExitCode.USAGE:
            raise
        ev.could_not_collect(where, exc.message + (f" ({exc.hint})" if exc.hint else ""), MetricsScrape)
        return
    engines = [e for e in fleet.engines if e.kind != "unknown"]
    source = Source("url", f"{fleet.url} {src.selector or ''}".strip())
    if not engines:
        ev.could_not_collect(
            where,
            f"no spec-decode series match {src.selector or 'the (empty) selector'} over the "
            f"last {promql_duration(src.since)} (spec decoding off, metrics not scraped, or "
            "a selector that matches nothing)",
            MetricsScrape,
        )
        return
    ev.add(_metrics_summary(engines, fleet), source, _metrics_value(engines, fleet))
    if len(engines) > 1:
        ev.notes.append(
            f"the selector matches {len(engines)} engines ({'; '.join(e.name for e in engines)}): their "
            "counts are summed here (narrow --selector to one engine, or see `dflash-doctor fleet`)"
        )
    for e in engines:
        ev.notes.extend(f"{e.name}: {n}" for n in e.notes)
        if e.change:
            c = e.change
            ev.notes.append(
                f"{e.name}: τ {c['tau_before']:.2f} before {c['time']}, {c['tau_after']:.2f} after"
                + (f" (counter reset at {c['restart_time']}: a restart or deploy)" if c["after_restart"] else "")
            )
    rows = _rows_per_step([e for e in engines if e.kind != "invalid"], pos_steps, fleet)
    if not rows:
        ev.missing(AcceptanceSummary, "Prometheus holds no draft counts for the selected engine(s) in the window")
        return

    summary = summarize(rows)
    if summary is None or not summary.drafts > 0:
        ev.missing(AcceptanceSummary, "Prometheus holds no draft counts for the selected engine(s) in the window")
        return
    if ev.has(AcceptanceSummary):
        ev.notes.append(
            f"Prometheus gives τ {summary.mean_acceptance_length:.2f}; the log's acceptance is used for the checks"
        )
        return
    ev.add(
        f"τ {summary.mean_acceptance_length:.2f} over {summary.drafts:.0f} drafts "
        f"(Prometheus, {summary.intervals} steps of {promql_duration(fleet.query.step)})",
        source,
        summary,
    )
    ev.notes.extend(summary.notes)


def _per_position_steps(client: PromClient, fleet: Fleet) -> list[dict]:
    q = fleet.query
    series = (
        Series("pos", VLLM_PER_POS, "increase", per_position=True, alt=LCPP_PER_POS),
        Series("draft_tokens", VLLM_DRAFT_TOKENS, "increase", alt=LCPP_DRAFT_TOKENS),
    )
    step = fleet.engines[0].steps[1].t - fleet.engines[0].steps[0].t if len(fleet.engines[0].steps) > 1 else q.step
    return client.query_range(
        combined(series, selector_matchers(q.selector), q.group, step),
        start=fleet.start + step,
        end=fleet.end,
        step=step,
    )


def _rows_per_step(engines: list[EngineRow], pos_steps: list[dict], fleet: Fleet) -> list[tuple]:
    """SpecInterval field tuples (parse.frame.FIELDS), one per engine and step with drafts, in time order."""
    by_key = {tuple(e.labels.get(g, "") for g in fleet.query.group): e for e in engines}
    pos: dict[tuple, dict[float, dict[int, float]]] = {}
    drafted: dict[tuple, dict[float, float]] = {}
    for item in pos_steps:
        metric = _metric(item)
        key = _key(metric, fleet.query.group)
        values = item.get("values") if isinstance(item, dict) else None
        for t, v in (_pair(p) for p in (values if isinstance(values, list) else ())):
            tt, value = _num(t), _num(v)
            if tt is None or value is None or value < 0:
                continue
            if metric.get(TAG) == "pos":
                try:
                    p = int(metric.get("position", ""))
                except ValueError:
                    continue
                if 0 <= p < 64:
                    pos.setdefault(key, {}).setdefault(tt, {})[p] = value
            elif metric.get(TAG) == "draft_tokens":
                drafted.setdefault(key, {})[tt] = value
    rows: list[tuple] = []  # SpecInterval field tuples
    for key, e in by_key.items():
        fmt = f"{e.kind.split('-')[0]}-prometheus"
        for s in e.steps:
            ts = _iso(s.t)
            if s.drafts > 0:
                pp_counts = pos.get(key, {}).get(s.t, {})
                k = e.k or (max(pp_counts) + 1 if pp_counts else None)
                pp = (
                    tuple(min(1.0, max(0.0, pp_counts.get(i, 0.0) / s.drafts)) for i in range(k))
                    if pp_counts and k
                    else ()
                )
                dt = drafted.get(key, {}).get(s.t)
                rows.append(
                    (
                        fmt,
                        "prometheus",
                        None,
                        ts,
                        e.name,
                        s.drafts,
                        int(dt) if dt else None,
                        int(round(s.accepted)),
                        k,
                        pp,
                        None,
                        None,
                        None,
                        None,
                        None,
                        False,
                    )
                )
            elif e.kind == "sglang-gauges" and s.gauge_tau is not None and s.gauge_tau >= 1.0:
                rows.append(
                    (
                        fmt,
                        "prometheus",
                        None,
                        ts,
                        e.name,
                        1.0,
                        None,
                        s.gauge_tau - 1.0,
                        e.k,
                        (),
                        s.gauge_tau,
                        None,
                        None,
                        None,
                        None,
                        True,
                    )
                )
    rows.sort(key=lambda r: r[3])
    return rows
