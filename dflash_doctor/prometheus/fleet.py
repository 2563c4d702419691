"""The fleet service: every engine's spec-decode counters from Prometheus, each engine diagnosed, and
the engines that fell behind their peers flagged.

    fleet = read_fleet(client, FleetQuery(selector='{job="vllm"}', since=6 * 3600, step=300, by=("instance",)))

Queries (a fixed number, whatever the number of engines): buildinfo, one instant query for every
counter's increase() over the window and the gauges, one range query for τ per step and restarts.
An engine is one combination of the grouping labels (`--by`, plus the peer labels, model_name by
default). Each engine's counts become the same AcceptanceSummary a log gives, and go through the
diagnosis (checks, ranking) one engine at a time; outliers are judged on count-based intervals
(dflash_doctor.stats).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..evidence import EvidenceSet, Source, Verdict
from ..evidence.acceptance import AcceptanceSummary
from ..evidence.payloads import MetricsScrape
from ..interpret.signature import HEALTHY_RHO
from ..knowledge.causes import default_knowledge
from ..registry import load_checks
from ..services.doctor import build_report
from ..stats import Interval, change_point, tau_interval
from .client import PromAuth, PromClient
from .metrics import FLEET_SERIES, TREND_SERIES
from .queries import TAG, combined, selector_matchers

FLEET_SCHEMA = "dflash-doctor/fleet@1"
# Most points a range query asks for (Prometheus refuses more than 11,000 per series).
MAX_POINTS = 1500


@dataclass(frozen=True)
class FleetQuery:
    selector: str | None = None
    since: float = 6 * 3600.0  # window, seconds
    step: float = 300.0
    by: tuple[str, ...] = ("instance",)
    peers: tuple[str, ...] = ("model_name",)
    until: float | None = None  # evaluation time (unix seconds); None = now

    @property
    def group(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.by + self.peers))


@dataclass
class Step:
    t: float
    drafts: float = 0.0
    accepted: float = 0.0
    resets: float = 0.0
    gauge_tau: float | None = None  # SGLang's accept-length gauge, averaged over the step

    @property
    def tau(self) -> float | None:
        if self.drafts > 0:
            return 1.0 + self.accepted / self.drafts
        return self.gauge_tau


@dataclass
class EngineRow:
    """One engine's reading of the window and what the diagnosis made of it."""

    labels: dict[str, str]
    values: dict[str, float] = field(default_factory=dict)  # tag -> value over the window
    positions: dict[int, float] = field(default_factory=dict)  # accepted at position i (0-based)
    steps: list[Step] = field(default_factory=list)
    kind: str = "unknown"  # vllm | llamacpp | vllm-0.8.3 | vllm-v0 | sglang | sglang-gauges
    drafts: float | None = None
    accepted: float | None = None
    k: int | None = None
    tau: float | None = None
    interval: Interval | None = None
    rate: float | None = None  # accepted / draft tokens
    per_position: tuple[float, ...] = ()
    signature: str | None = None
    first_third: float | None = None
    last_third: float | None = None
    change: dict | None = None
    restarts: int = 0
    outlier: dict | None = None
    peers: int = 0  # engines it was compared with (same peer labels and k)
    verdict: str = "insufficient-data"
    reasons: list[str] = field(default_factory=list)
    top_cause: dict | None = None
    notes: list[str] = field(default_factory=list)
    report: Any = None  # the engine's diagnosis (evidence.Report), not serialised whole
    dropped_points: int = 0  # per-step points whose time lies outside the window (a broken or hostile server)
    invalid: set[str] = field(default_factory=set)  # series whose value cannot be true (a negative count)

    @property
    def name(self) -> str:
        shown = [f"{k}={v}" for k, v in self.labels.items() if v]
        return ", ".join(shown) or "(no labels)"

    def to_dict(self) -> dict[str, Any]:
        def r(x, n=4):
            return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else round(x, n)

        return {
            "labels": dict(self.labels),
            "engine_kind": self.kind,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "mean_acceptance_length": r(self.tau),
            "tau_interval": self.interval.to_dict() if self.interval else None,
            "drafts": r(self.drafts, 1),
            "accepted": r(self.accepted, 1),
            "draft_tokens": r(self.values.get("draft_tokens"), 1),
            "draft_acceptance_rate": r(self.rate),
            "k": self.k,
            "per_position": [round(x, 4) for x in self.per_position],
            "signature": self.signature,
            "trend": {
                "first_third": r(self.first_third),
                "last_third": r(self.last_third),
                "change_point": self.change,
                "series": [
                    {"time": _iso(s.t), "tau": r(s.tau), "drafts": r(s.drafts, 1)}
                    for s in self.steps
                    if s.tau is not None
                ],
            },
            "restarts": self.restarts,
            "outlier": self.outlier,
            "peers": self.peers,
            "top_cause": self.top_cause,
            "notes": list(self.notes),
        } | (
            # vLLM's generation counter over the same window: the share of the output from drafting steps
            # (checks/baseline.py drafted_share) — the speed of a lookup proposer that drafts on few steps
            {"generated_tokens": r(self.values["generation"], 1)} if "generation" in self.values else {}
        )


@dataclass
class Fleet:
    url: str
    query: FleetQuery
    start: float
    end: float
    engines: list[EngineRow]
    queries: int
    prometheus_version: str | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def verdict(self) -> str:
        if not self.engines:
            return "no-data"
        if any(e.verdict == "problem" for e in self.engines):
            return "problem"
        if any(e.verdict == "healthy" for e in self.engines):
            return "healthy"
        return "insufficient-data"

    def ordered(self) -> list[EngineRow]:
        """Outliers first, then other problems, then the rest; lowest τ first within each."""
        rank = {"problem": 1, "insufficient-data": 2, "could-not-check": 2, "healthy": 3}
        return sorted(
            self.engines,
            key=lambda e: (
                0 if e.outlier else rank.get(e.verdict, 2),
                e.tau if e.tau is not None else math.inf,
                e.name,
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": FLEET_SCHEMA,
            "prometheus": self.url,
            "prometheus_version": self.prometheus_version,
            "selector": self.query.selector or "",
            "window": {
                "start": _iso(self.start),
                "end": _iso(self.end),
                "seconds": self.end - self.start,
                "step_seconds": self.query.step,
            },
            "by": list(self.query.by),
            "peers": list(self.query.peers),
            "queries": self.queries,
            "verdict": self.verdict,
            "engines": [e.to_dict() for e in self.ordered()],
            "notes": list(self.notes),
        }


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).replace(microsecond=0).isoformat()


# --- reading --------------------------------------------------------------------------------------


def read_fleet(client: PromClient, q: FleetQuery, diagnose: bool = True) -> Fleet:
    t0 = time.perf_counter()
    end = q.until if q.until is not None else time.time()
    step = q.step
    notes: list[str] = []
    if q.since / step > MAX_POINTS:
        step = math.ceil(q.since / MAX_POINTS)
        notes.append(f"step raised to {step:g} s: {q.since:g} s at the asked step is more than {MAX_POINTS} points")
    start = end - q.since
    matchers = selector_matchers(q.selector)
    version = None
    info = client.buildinfo()
    if isinstance(info, dict):
        version = str(info.get("version") or "") or None
    group = q.group
    totals = client.query(combined(FLEET_SERIES, matchers, group, q.since), at=end)
    per_step = client.query_range(combined(TREND_SERIES, matchers, group, step), start=start + step, end=end, step=step)
    engines = _rows(totals, per_step, group, (start, end + step))
    dropped = sum(e.dropped_points for e in engines)
    if dropped:
        notes.append(
            f"{dropped} point(s) of the per-step series lie outside the window asked for (or have no usable "
            "time): not read"
        )
    for e in engines:
        if e.invalid:
            _mark_invalid(e)
        else:
            _read_engine(e)
    plain = [e for e in engines if e.kind == "unknown"]
    if plain:
        engines = [e for e in engines if e.kind != "unknown"]
        notes.append(
            f"{len(plain)} engine(s) generate tokens without any spec-decode series (speculative decoding "
            "off): not listed"
        )
    if engines:
        for label in q.by:
            if all(not e.labels.get(label) for e in engines):
                notes.append(
                    f"label {label!r} is on none of the spec-decode series: every engine shows it empty "
                    f"(group with --by on a label they carry, e.g. instance)"
                )
    fleet = Fleet(
        url=client.shown_url,
        query=q,
        start=start,
        end=end,
        engines=engines,
        queries=client.requests,
        prometheus_version=version,
        notes=notes,
    )
    if diagnose:
        diagnose_engines(fleet)
    fleet.seconds = time.perf_counter() - t0
    return fleet


def _metric(item: Any) -> dict:
    m = item.get("metric") if isinstance(item, dict) else None
    return m if isinstance(m, dict) else {}


def _pair(p: Any) -> tuple[Any, Any]:
    """A sample `[time, "value"]` as Prometheus gives it; anything else reads as no sample."""
    return (p[0], p[1]) if isinstance(p, list) and len(p) == 2 else (None, None)


def _add_total(e: EngineRow, tag: str, metric: dict, value: float) -> None:
    if value < 0:  # no count and no gauge read here can be negative: a broken exporter or a hostile server
        e.invalid.add(tag)
    elif tag == "pos":
        try:
            pos = int(metric.get("position", ""))
        except ValueError:
            return
        if 0 <= pos < 64:
            e.positions[pos] = e.positions.get(pos, 0.0) + value
    else:
        e.values[tag] = e.values.get(tag, 0.0) + value


def _add_step(st: Step, tag: str, value: float) -> None:
    if tag in ("drafts", "sgl_verify"):
        st.drafts += value
    elif tag == "accepted":
        st.accepted += value
    elif tag == "sgl_generation":
        st.accepted += value  # emitted; the verify calls and requests are taken off below
    elif tag == "sgl_requests":
        st.accepted -= value
    elif tag in ("resets", "sgl_resets"):
        st.resets += value
    elif tag == "sgl_len":
        st.gauge_tau = value


def _key(metric: dict, group: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(metric.get(label, "")) for label in group)


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _rows(
    totals: list[dict], per_step: list[dict], group: tuple[str, ...], window: tuple[float, float]
) -> list[EngineRow]:
    rows: dict[tuple[str, ...], EngineRow] = {}
    for item in totals:
        metric = _metric(item)
        tag = metric.get(TAG)
        value = _num(_pair(item.get("value"))[1])
        if tag is None or value is None:
            continue
        key = _key(metric, group)
        e = rows.setdefault(key, EngineRow(labels=dict(zip(group, key, strict=True))))
        _add_total(e, str(tag), metric, value)
    steps: dict[tuple[str, ...], dict[float, Step]] = defaultdict(dict)
    lo, hi = window
    for item in per_step:
        metric = _metric(item)
        tag = metric.get(TAG)
        key = _key(metric, group)
        if key not in rows or tag is None:
            continue  # a series seen per step but not over the window is noise at the edge
        values = item.get("values")
        for t, v in (_pair(p) for p in (values if isinstance(values, list) else ())):
            value, tt = _num(v), _num(t)
            if value is None or tt is None:
                continue
            if not lo <= tt <= hi:  # 1e20 or -1e13: a time no step of this window has (and no date can show)
                rows[key].dropped_points += 1
            elif value < 0:
                rows[key].invalid.add(f"{tag} per step")
            else:
                _add_step(steps[key].setdefault(tt, Step(tt)), str(tag), value)
    for key, by_t in steps.items():
        e = rows[key]
        ordered = [by_t[t] for t in sorted(by_t)]
        if "sgl_verify" in e.values:
            for st in ordered:  # SGLang counters: accepted = emitted − one bonus token per verify
                st.accepted = max(0.0, st.accepted - st.drafts)
        e.steps = ordered
    return list(rows.values())


def _mark_invalid(e: EngineRow) -> None:
    """A negative increase is no count at all (Prometheus' increase() never gives one): this engine's figures
    cannot be checked (a τ of −4.0 was printed), the others' still can."""
    e.kind = "invalid"
    e.notes.append(
        f"negative values in {', '.join(sorted(e.invalid))} (a broken exporter or a server that is not "
        "Prometheus): this engine's acceptance could not be checked"
    )


def _draft_rate(e: EngineRow, v: dict) -> float | None:
    """Accepted / drafted tokens over the window, where the engine counts both."""
    accepted = e.accepted if e.kind in ("vllm", "llamacpp") else v.get("accepted") if e.kind == "vllm-0.8.3" else None
    return min(1.0, accepted / v["draft_tokens"]) if v.get("draft_tokens") and accepted is not None else None


def _read_engine(e: EngineRow) -> None:
    """Counts -> τ, its interval, per-position rates and the trend, by what the engine exposes."""
    v = e.values
    pos = e.positions
    e.restarts = int(round(v.get("resets", 0.0) + v.get("sgl_resets", 0.0)))
    if "drafts" in v or pos:
        e.kind = "llamacpp" if "lcpp" in v else "vllm"
        e.drafts = v.get("drafts")
        e.accepted = v.get("accepted")
        if pos:
            e.k = max(pos) + 1
        elif e.drafts and v.get("draft_tokens"):
            e.k = round(v["draft_tokens"] / e.drafts) or None
        if e.drafts and e.drafts > 0 and pos:
            e.per_position = tuple(min(1.0, max(0.0, pos.get(i, 0.0) / e.drafts)) for i in range(max(pos) + 1))
    elif "v0_emitted" in v or "v0_rate" in v or "v0_efficiency" in v:
        e.kind = "vllm-v0"
        e.rate = v.get("v0_rate")
        e.notes.append(
            "vLLM V0 exposes since-start gauges only (its token counters add running totals, "
            "engine/metrics.py in 0.6–0.9): τ over the window cannot be counted"
        )
    elif "draft_tokens" in v:
        e.kind = "vllm-0.8.3"
        e.notes.append("vLLM 0.8.3–0.8.4 export no drafts counter: τ needs k, only the draft acceptance rate is read")
    elif "sgl_verify" in v:
        e.kind = "sglang"
        verify = v["sgl_verify"]
        emitted = v.get("sgl_generation", 0.0) - v.get("sgl_requests", 0.0)
        e.drafts = verify
        e.accepted = max(0.0, emitted - verify) if verify > 0 else None
        if v.get("sgl_k1"):
            e.k = max(1, int(round(v["sgl_k1"])) - 1)
        e.notes.append("SGLang: τ = (generated − requests) / verify calls, counted over finished requests")
    elif "sgl_len" in v:
        e.kind = "sglang-gauges"
        e.tau = v["sgl_len"] if v["sgl_len"] >= 1.0 else None
        e.notes.append(
            "SGLang before 0.5.13 exports only the accept-length gauge of the last decode interval: "
            "τ is its average over the window, without a draft count (no interval, no outlier test)"
        )
    e.rate = _draft_rate(e, v) if e.rate is None else e.rate
    if e.drafts and e.drafts > 0 and e.accepted is not None:
        e.accepted = min(e.accepted, e.drafts * (e.k or math.inf))
        e.tau = 1.0 + e.accepted / e.drafts
        e.interval = tau_interval(e.drafts, e.accepted, e.per_position, e.k)
    counted = [s for s in e.steps if s.drafts > 0]
    n = len(counted)
    if n >= 3:
        t = n // 3
        a, b = counted[:t], counted[n - t :]
        e.first_third = 1.0 + sum(s.accepted for s in a) / sum(s.drafts for s in a)
        e.last_third = 1.0 + sum(s.accepted for s in b) / sum(s.drafts for s in b)
        cp = change_point([s.drafts for s in counted], [s.accepted for s in counted], e.per_position, e.k)
        if cp is not None:
            at = counted[cp.index].t
            step = max(1.0, _step_of(e.steps))
            near = [t for t in restart_times(e.steps) if -step <= at - t <= 3 * step]
            e.change = {
                "time": _iso(at),
                "tau_before": round(cp.before.estimate, 3),
                "tau_after": round(cp.after.estimate, 3),
                "drop": round(cp.drop, 3),
                "after_restart": bool(near),
                "restart_time": _iso(near[-1]) if near else None,
            }
    elif e.kind == "sglang-gauges":
        gauges = [s.gauge_tau for s in e.steps if s.gauge_tau is not None]
        if len(gauges) >= 3:
            t = len(gauges) // 3
            e.first_third = sum(gauges[:t]) / t
            e.last_third = sum(gauges[-t:]) / t


def restart_times(steps: list[Step]) -> list[float]:
    """Steps where a counter reset first shows (each reset shows in two steps: see TREND_SERIES)."""
    return [s.t for i, s in enumerate(steps) if s.resets > 0 and (i == 0 or steps[i - 1].resets <= 0)]


def _step_of(steps: list[Step]) -> float:
    return steps[1].t - steps[0].t if len(steps) > 1 else 0.0


# --- diagnosis ------------------------------------------------------------------------------------


def diagnose_engines(fleet: Fleet) -> None:
    """Each engine through the diagnosis; then outliers against peers; then the fleet verdict per engine."""

    reg = load_checks()
    knowledge = default_knowledge()
    checks = [c for c in reg.checks if c.area == "acceptance"]
    fleet.notes.extend(reg.warnings)
    for e in fleet.engines:
        summary = acceptance_summary(e)
        if summary is None:
            continue
        ev = engine_evidence(e, summary, fleet)
        report, _ = build_report(ev, checks=checks, knowledge=knowledge)
        e.report = report
        sig = next(
            (
                o.name.split(":", 1)[1]
                for f in report.findings
                for o in f.observations
                if o.name.startswith("signature:")
            ),
            None,
        )
        e.signature = sig
        causes = [c for c in report.causes if c.confidence >= 0.5] or list(report.causes[:1])
        if causes:
            c = causes[0]
            e.top_cause = {
                "id": c.id,
                "title": c.title,
                "confidence": round(c.confidence, 3),
                "decided": c.confidence >= 0.5,
            }
    find_outliers(fleet.engines, fleet.query.peers)
    for e in fleet.engines:
        _verdict(e)


def engine_evidence(e: EngineRow, summary, fleet: Fleet) -> EvidenceSet:
    """One fleet engine as an EvidenceSet for the diagnosis."""
    ev = EvidenceSet(label=e.name)
    src = Source("url", f"{fleet.url} {fleet.query.selector or ''}".strip())
    ev.add(_metrics_summary([e], fleet), src, _metrics_value([e], fleet, rows=False))
    ev.add(
        f"τ {summary.mean_acceptance_length:.2f} over {summary.drafts:.0f} drafts (Prometheus, {len(e.steps)} steps)",
        src,
        summary,
    )
    return ev


def _metrics_summary(engines: list[EngineRow], fleet: Fleet) -> str:
    hours = (fleet.end - fleet.start) / 3600
    restarts = sum(e.restarts for e in engines)
    return (
        f"Prometheus {fleet.prometheus_version or ''} history over {hours:g} h: {len(engines)} engine(s) "
        f"({', '.join(sorted({e.kind for e in engines}))})" + (f", {restarts} counter reset(s)" if restarts else "")
    )


def _metrics_value(engines: list[EngineRow], fleet: Fleet, rows: bool = True) -> MetricsScrape:
    """What Prometheus said, for the report; `rows` adds each engine's whole reading (diagnose)."""
    restarts = tuple(sorted({_iso(t) for e in engines for t in restart_times(e.steps)}))
    history = {
        "prometheus": fleet.url,
        "prometheus_version": fleet.prometheus_version,
        "selector": fleet.query.selector or "",
        "window": {"start": _iso(fleet.start), "end": _iso(fleet.end), "step_seconds": fleet.query.step},
        "queries": fleet.queries,
    }
    return MetricsScrape(
        source=fleet.url,
        engines=tuple(e.to_dict() for e in engines) if rows else (),
        restarts=restarts,
        step_seconds=float(fleet.query.step),
        history=history,
    )


def acceptance_summary(e: EngineRow):
    """The engine's counts as the AcceptanceSummary a log gives (what the checks read)."""

    if e.tau is None or not e.drafts:
        return None
    counted = [(s, tau) for s in e.steps if s.drafts > 0 and (tau := s.tau) is not None]  # drafts > 0: a τ
    series = tuple(
        {
            "timestamp": _iso(s.t),
            "source": "prometheus",
            "tau": round(tau, 4),
            "drafts": round(s.drafts, 1),
            "intervals": 1,
        }
        for s, tau in counted
    )
    drafted = e.values.get("draft_tokens")
    return AcceptanceSummary(
        mean_acceptance_length=e.tau,
        per_position=e.per_position,
        drafts=e.drafts,
        drafted=int(drafted) if drafted else 0,
        accepted=int(round(e.accepted or 0.0)),
        k=e.k,
        draft_acceptance_rate=e.rate,
        intervals=len(counted),
        formats=(f"{e.kind}-prometheus",),
        engines=(e.name,),
        tau_first_third=e.first_third,
        tau_last_third=e.last_third,
        notes=tuple(e.notes),
        per_engine=(
            {
                "engine": e.name,
                "intervals": len(counted),
                "drafts": round(e.drafts, 1),
                "tau": round(e.tau, 4),
                "formats": [f"{e.kind}-prometheus"],
            },
        ),
        series=series,
    )


def find_outliers(engines: list[EngineRow], peers: tuple[str, ...]) -> None:
    """Flag engines whose τ interval lies wholly below that of the better half of their peers (same
    peer labels, same k), by more than the healthy band (signature.HEALTHY_RHO of the peers'
    accepted tokens per draft)."""

    groups: dict[tuple, list[EngineRow]] = defaultdict(list)
    for e in engines:
        if e.interval is not None and e.drafts and e.tau is not None:
            groups[(tuple(e.labels.get(p, "") for p in peers), e.k)].append(e)
    for members in groups.values():
        if len(members) < 2:
            continue
        for e in members:
            assert e.tau is not None and e.interval is not None  # grouped only with both
            others = [o for o in members if o is not e]
            e.peers = len(others)
            # every member has a τ and drafts (the grouping's condition): the filters below drop none
            peer_taus = [(o, o.tau) for o in others if o.tau is not None]
            taus = sorted(t for _, t in peer_taus)
            median = taus[(len(taus) - 1) // 2]
            ref = [o for o, t in peer_taus if t >= median]
            d = sum(o.drafts or 0.0 for o in ref)
            a = sum(o.accepted or 0.0 for o in ref)
            pp: tuple[float, ...] = ()
            if all(o.per_position and len(o.per_position) == len(e.per_position) for o in ref) and e.per_position:
                pp = tuple(
                    sum(o.per_position[i] * (o.drafts or 0.0) for o in ref) / d for i in range(len(e.per_position))
                )
            ref_iv = tau_interval(d, a, pp, e.k)
            rho = (e.tau - 1.0) / (ref_iv.estimate - 1.0) if ref_iv.estimate > 1.0 else 1.0
            if e.interval.high < ref_iv.low and rho < HEALTHY_RHO:
                e.outlier = {
                    "tau": round(e.tau, 3),
                    "interval": e.interval.to_dict(),
                    "peers": len(others),
                    "peer_tau": round(ref_iv.estimate, 3),
                    "peer_interval": ref_iv.to_dict(),
                    "share_of_peer": round(rho, 3),
                    "peer_labels": {p: e.labels.get(p, "") for p in peers},
                }


def _verdict(e: EngineRow) -> None:
    reasons = e.reasons
    report = e.report
    if e.outlier:
        o = e.outlier
        reasons.append(
            f"outlier: τ {o['tau']:.2f} [{o['interval']['low']:.2f}–{o['interval']['high']:.2f}] vs "
            f"{o['peer_tau']:.2f} [{o['peer_interval']['low']:.2f}–{o['peer_interval']['high']:.2f}] on "
            f"{o['peers']} peer(s) with the same model and k ({o['share_of_peer']:.0%} of their accepted tokens/draft)"
        )
    if e.change and e.change["drop"] > 0.15:
        c = e.change
        reasons.append(
            f"τ fell from {c['tau_before']:.2f} to {c['tau_after']:.2f} at {c['time']}"
            + (f", after a restart at {c['restart_time']}" if c["after_restart"] else "")
        )
    gen = e.values.get("generation", e.values.get("sgl_generation"))
    if e.drafts is not None and e.drafts <= 0 and gen and gen > 0:
        reasons.append(f"no drafts over the window while {gen:.0f} tokens were generated: speculative decoding stopped")
    if report is not None and report.verdict == Verdict.PROBLEM:
        failing = [f.message for f in report.findings if f.status.value == "fail"]
        if failing:
            reasons.extend(failing[:2])
        elif e.top_cause:
            reasons.append(f"diagnosis: {e.top_cause['title']}")
    if reasons:
        e.verdict = "problem"
        return
    if e.tau is None and e.kind in ("vllm-v0", "vllm-0.8.3", "unknown", "invalid"):
        e.verdict = "could-not-check"
        return
    if report is None or not report.acceptance or not report.acceptance.sufficient:
        e.verdict = "insufficient-data"
        if e.drafts is not None and e.drafts > 0:
            e.notes.append(f"only {e.drafts:.0f} drafts in the window")
        return
    if report.verdict == Verdict.HEALTHY:
        e.verdict = "healthy"
        return
    if e.peers:
        # No published baseline for the pair, but in line with peers serving the same model and k.
        e.verdict = "healthy"
        e.notes.append(
            f"in line with {e.peers} peer(s) serving the same model at the same k; no published "
            "baseline here to judge the level itself"
        )
    else:
        e.verdict = "insufficient-data"
        e.notes.append(
            "no peer serving the same model at the same k and no published baseline: the level of τ cannot be judged"
        )


def run_fleet(url: str, q: FleetQuery, auth=None, timeout: float = 30.0) -> Fleet:
    """The `fleet` command's service: connect, read, diagnose, close."""

    with PromClient(url, auth or PromAuth(), timeout) as client:
        return read_fleet(client, q)
