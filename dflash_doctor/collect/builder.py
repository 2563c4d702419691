"""One evidence builder that every source feeds.

Whatever read the bytes — `diagnose` on files, `check host` over SSH, `check bundle` replaying a host —
hands its log scan, its Prometheus scrapes and its engine facts to the same methods here, so the same
bytes give the same LOG_SCAN / ACCEPTANCE / STARTUP / ENGINE / METRICS / ENGINE_SUPPORT evidence
(tests/core/test_one_builder.py asserts it over every fixture log and bundle).

Acceptance comes from the log when the log has drafts; otherwise from /metrics (a file, a URL, or the
host's own scrape); a source that has no usable numbers records why, never a τ over zero drafts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..evidence import EvidenceSet, Source
from ..evidence.acceptance import AcceptanceSummary, StartupFacts
from ..evidence.engine_facts import EngineSupport
from ..evidence.model_facts import DrafterFacts
from ..evidence.payloads import (
    EngineFailures,
    EngineId,
    LaunchConfig,
    MalformedLine,
    MetricsScrape,
    ScanStats,
    Workload,
)
from ..models.engine_support import lookup
from ..models.launch_view import server_default_temperature
from ..parse.fast.routes import route
from ..parse.formats import BY_FMT
from ..parse.frame import summarize
from ..parse.logscan import aggregate
from ..parse.metrics_text import MetricsError, intervals_from_scrapes, parse_text
from ..textsafe import command

if TYPE_CHECKING:
    from ..parse.logscan import LogScan
    from ..parse.metrics_text import Scrape


def _size(scan: LogScan) -> str:
    if scan.lines is not None:
        return f"{scan.lines} lines"
    return f"{scan.bytes / (1 << 20):.0f} MiB"


def scan_stats(
    scan: LogScan,
    filtered_on_host: bool = False,
    lines: int | None = None,
    lines_kept: int | None = None,
    engine_log: bool | None = None,
) -> ScanStats:
    return ScanStats(
        lines=lines if lines is not None else scan.lines,
        bytes=scan.bytes,
        candidate_lines=scan.candidate_lines,
        intervals=scan.n_intervals,
        formats=dict(scan.formats),
        malformed=scan.malformed_count,
        malformed_examples=tuple(
            MalformedLine(m.source, m.line_no, m.offset, m.where, m.reason, m.text, m.rejected)
            for m in scan.malformed[:5]
        ),
        notes=tuple(scan.notes),
        mean_normalised=scan.mean_normalised,
        sglang_rate_meaning=scan.sglang_rate_meaning,
        release_bounds=dict(scan.release_bounds),
        sources=tuple(scan.sources),
        filtered_on_host=filtered_on_host,
        lines_kept=lines_kept,
        rejected=scan.rejected_count,
        foreign=scan.foreign_count,
        foreign_examples=tuple(
            MalformedLine(m.source, m.line_no, m.offset, m.where, m.reason, m.text) for m in scan.foreign[:5]
        ),
        salvaged=tuple(s.to_dict() for s in scan.salvaged),
        salvaged_count=scan.salvaged_count,
        interrupted=scan.interrupted,
        engine_log=engine_log,
    )


class EvidenceBuilder:
    def __init__(self, ev: EvidenceSet, host: str | None = None):
        self.ev = ev
        self.host = host

    def src(self, kind: str, location: str) -> Source:
        return Source(kind, location, host=self.host)

    # -- logs -------------------------------------------------------------------------------------
    def k_hint(self) -> tuple[int | None, str | None]:
        """The k the launch command (or, for DFlash, the drafter's block) gives, for log lines that print none."""
        launch = self.ev.get(LaunchConfig)
        if launch is not None and launch.num_speculative_tokens:
            return launch.num_speculative_tokens, "the launch command"
        d = self.ev.get(DrafterFacts)
        if d is not None and d.is_dflash and d.block_size:
            return d.block_size - 1, "the drafter's block size − 1"
        return None, None

    def add_log_scan(
        self,
        scan: LogScan,
        where: str,
        filtered_on_host: bool = False,
        lines: int | None = None,
        lines_kept: int | None = None,
        filtered_bytes: int = 0,
        engine_log: bool | None = None,
    ) -> None:
        """LOG_SCAN, then ACCEPTANCE (or why there is none) and STARTUP from one scan."""

        ev = self.ev
        src = self.src("file", where)
        stats = scan_stats(scan, filtered_on_host, lines, lines_kept, engine_log)
        if filtered_on_host:
            summary = (
                f"filtered on the host: {stats.lines} spec-decode/startup lines "
                f"({filtered_bytes / 1024:.1f} KiB), {stats.intervals} intervals, {stats.malformed} malformed"
            )
        else:
            summary = f"scanned {_size(scan)}, {stats.intervals} spec-decode intervals, {stats.malformed} malformed"
        ev.add(summary, src, stats)
        k, k_from = self.k_hint()
        acc = aggregate(scan, k_hint=k, k_hint_source=k_from)
        if acc is None:
            ev.missing(AcceptanceSummary, f"the log ({where}) holds no spec-decode metrics lines")
        elif acc.drafts > 0:
            read_from = "; ".join(
                d["label"] for d in acc.format_details if d["used"]
            )  # the format each number came from
            ev.add(
                (
                    f"τ {acc.mean_acceptance_length:.2f}, a per-request average (not drafts-weighted)"
                    if acc.per_request
                    else f"τ {acc.mean_acceptance_length:.2f} over {acc.drafts:.0f} drafts ({acc.intervals} intervals)"
                )
                + (f", from {read_from}" if read_from else ""),
                src,
                acc,
            )
            ev.notes.extend(acc.notes)
        else:
            ev.missing(AcceptanceSummary, "; ".join(acc.notes) or "no drafts count in the log")
        st = scan.startup
        if st.engine or st.args or st.architecture:
            ev.add(
                f"{st.engine or 'engine'} {st.version or '(version not logged)'}"
                + (f", method {st.method}" if st.method else "")
                + (f", drafter {st.drafter}" if st.drafter else ""),
                src,
                st,
            )
            launched = ", ".join(
                f"{k} {v}"
                for k, v in (
                    ("engine", st.engine),
                    ("version", st.version),
                    ("model", st.model),
                    ("method", st.method),
                    ("drafter", st.drafter),
                    ("k", st.num_speculative_tokens),
                    ("architectures", ", ".join(st.architectures)),
                )
                if v
            )
            if launched:
                ev.notes.insert(0, "launched: " + launched)
        if scan.mean_normalised:
            ev.notes.append(
                f"{scan.mean_normalised} vLLM 0.8.5 line(s) print the mean length without the bonus "
                "token; normalised to 1 + accepted/drafts"
            )
        ev.notes.extend([n for n in scan.notes if n not in ev.notes])

    def add_server_sampling(self, launch: LaunchConfig, src: Source) -> None:
        """The server's default temperature (--override-generation-config) as the workload's, when the user
        stated none: requests that set no temperature sample at it."""
        if self.ev.get(Workload) is not None:
            return
        t = server_default_temperature(launch)
        if t is not None:
            self.ev.add(
                f"workload: server default temperature {t:g} (--override-generation-config; requests that set "
                "none sample at it)",
                src,
                Workload(temperature=t),
            )

    def add_engine_failures(self, failures, where: str) -> None:
        """The engine's failure lines (parse/engine_failures.py) of a log with no spec-decode interval."""
        if not failures:
            return
        items = tuple((f.kind, f.detail, f.line, f.lineno) for f in failures)
        kinds = ", ".join(dict.fromkeys(f.kind for f in failures))
        self.ev.add(f"engine failure lines: {kinds}", self.src("file", where), EngineFailures(items, where))

    # -- Prometheus ---------------------------------------------------------------------------------
    def add_metrics(
        self, scrapes: list[Scrape], src: Source, scraped_on_host: bool = False, text: str | None = None
    ) -> None:
        """METRICS from one or more scrapes of one server (several: consecutive, differenced), and
        ACCEPTANCE from them when nothing better (a log with drafts) gave it."""

        ev = self.ev
        with_series = [sc for sc in scrapes if sc.engines]
        if not with_series:
            ev.could_not_collect(
                f"metrics {src.location}",
                "no spec-decode series in the scrape (spec decoding off, or metrics disabled)",
                MetricsScrape,
            )
            return
        st = ev.get(StartupFacts)
        launch = ev.get(LaunchConfig)
        k_hint = (st.num_speculative_tokens if st is not None else None) or (
            launch.num_speculative_tokens if launch is not None else None
        )
        rows, notes, table = intervals_from_scrapes(with_series, k_hint)
        acc = summarize(rows) if rows else None
        engines = tuple({"engine": name, **row} for name, row in table.items())
        what = f"{src.location} scraped on the host" if scraped_on_host else f"{len(with_series)} scrape(s)"
        ev.add(
            f"{what}: {len(engines)} engine series" + (f", τ {acc.mean_acceptance_length:.2f}" if acc else ""),
            src,
            MetricsScrape(
                source=src.location,
                scrapes=len(with_series),
                engines=engines,
                acceptance=acc,
                notes=tuple(notes),
                scraped_on_host=scraped_on_host,
                text=text,
            ),
        )
        ev.notes.extend(notes)
        if acc is None or not acc.drafts > 0:
            idle = (
                f"no drafts between the {len(with_series)} scrapes: the engine was idle in the window (send "
                "traffic, or widen --window)"
                if len(with_series) > 1
                else "no drafts since the server started: it has served no speculative request yet"
            )
            ev.missing(AcceptanceSummary, idle)
        if acc is not None and acc.drafts > 0:
            logged = ev.get(AcceptanceSummary)
            if logged is not None and not logged.per_position and acc.per_position:
                # llama-server prints its per-position rates only at trace verbosity (-lv 4): the counters have them
                ev.notes.append(
                    f"the log gives τ {logged.mean_acceptance_length:.2f} without per-position rates; the /metrics "
                    f"counters (τ {acc.mean_acceptance_length:.2f}, per-position counts) are used for the checks"
                )
                ev.add(f"τ {acc.mean_acceptance_length:.2f} over {acc.drafts:.0f} drafts (from /metrics)", src, acc)
            elif ev.has(AcceptanceSummary):
                ev.notes.append(
                    f"metrics give τ {acc.mean_acceptance_length:.2f}; the log's acceptance is used "
                    "for the checks (it has per-interval detail)"
                )
            else:
                ev.add(
                    f"τ {acc.mean_acceptance_length:.2f} over {acc.drafts:.0f} drafts (from /metrics)",
                    src,
                    acc,
                )

    def add_metrics_text(self, text: str, src: Source, scraped_on_host: bool = False) -> None:
        try:
            scrape = parse_text(text, src.location)
        except MetricsError as exc:
            self.ev.could_not_collect(f"metrics {src.location}", str(exc), MetricsScrape)
            return
        self.add_metrics([scrape], src, scraped_on_host=scraped_on_host, text=text)

    # -- engine -------------------------------------------------------------------------------------
    def add_engine(self, engine: EngineId, summary: str, src: Source) -> None:
        self.ev.add(summary, src, engine)

    def engine_from_startup(self, reason_unknown: str) -> None:
        """ENGINE from the log's startup lines when no better source named it."""
        ev = self.ev
        if ev.has(EngineId):
            return
        st = ev.get(StartupFacts)
        launch = ev.get(LaunchConfig)
        tagged = launch if launch is not None and launch.engine and launch.image_version else None
        if st is not None and st.engine and (st.version or tagged is None or tagged.engine != st.engine):
            ev.add(
                f"{st.engine} {st.version or '(version not logged)'}",
                self.src("derived", "log startup lines"),
                EngineId(st.engine, st.version, version_from="the log's startup lines" if st.version else None),
            )
        elif tagged is not None and tagged.engine:
            # the release the container image's tag names (what the log's startup lines would state)
            where = f"the image tag in the launch command ({tagged.image})"
            ev.add(
                f"{tagged.engine} {tagged.image_version}",
                self.src("flag", f"--launch image {tagged.image}"),
                EngineId(tagged.engine, tagged.image_version, version_from=where),
            )
        elif (engine := _engine_of_formats(ev.get(AcceptanceSummary))) is not None:
            # the metrics lines are one engine's own (their format says which): the engine is known, its release not
            ev.add(
                f"{engine} (release not logged)",
                self.src("derived", "the log's metrics format"),
                EngineId(engine, None),
            )
        else:
            ev.missing(EngineId, reason_unknown)

    def add_engine_support(self) -> None:
        """ENGINE_SUPPORT: the support-table row for the engine and version named by any source."""

        ev = self.ev
        eng = ev.item(EngineId)
        if eng is None:
            ev.missing(EngineSupport, "engine and release unknown (`--engine NAME==VERSION`)")
            return
        name, version = eng.value.name, eng.value.version
        if not version:
            ev.missing(EngineSupport, f"{name} release unknown (`--engine {command(name)}==VERSION`)")
            return
        row = lookup(name, version)
        if row is None:
            ev.missing(EngineSupport, f"{name} {version} is not in the engine-support table")
            return
        swa = row.drafter_swa or "n/a"
        ev.add(
            f"{name} {version}: DFlash {'yes' if row.dflash else 'no'}, target_layer_ids "
            f"{row.layer_map or 'n/a'}, drafter SWA {swa}"
            + (f" (verified in {row.verified} source)" if row.verified else " (from the reference)"),
            Source("derived", f"engine_support.toml row {row.range} (from {eng.ref})"),
            row,
        )


def _engine_of_formats(acc) -> str | None:
    """The engine whose own metrics lines the acceptance was read from, when they are one engine's (a client's
    benchmark summary, the generic reader or several engines name none)."""
    if acc is None:
        return None
    engines = set()
    for fmt in acc.formats:
        f = BY_FMT.get(fmt)
        if f is None or f.standing != "engine" or not route(f).server or not f.engine:
            return None
        engines.add(f.engine)
    return engines.pop() if len(engines) == 1 else None
