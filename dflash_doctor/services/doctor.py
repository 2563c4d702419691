"""The diagnosis service: evidence -> checks -> ranking -> Report. Every command goes through here."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from .. import __version__
from ..check import Check, declared_observations, run_checks
from ..collect.builder import EvidenceBuilder
from ..collect.inputs import gather_logs
from ..errors import DoctorError, ExitCode, UsageError
from ..evidence import Contribution, EvidenceSet, Finding, Kind, Report, Source, Status, Verdict, now_iso
from ..evidence.acceptance import AcceptanceSummary
from ..evidence.engine_facts import EngineSupport
from ..evidence.payloads import MIN_SERVER_LOG_LINES, EngineId, ScanStats, Workload
from ..evidence.serialise import to_jsonable
from ..interpret.advice import advise_k
from ..knowledge.causes import Knowledge
from ..models.launch_view import launch_method
from ..names import names_of
from ..probe.saved_result import add_probe_evidence
from ..rank.plan import Names, build_plan, fill
from ..rank.scoring import rank
from ..registry import load_checks
from ..settings import DEFAULT, Settings
from ..textsafe import command


def build_report(
    evidence: EvidenceSet,
    checks: Sequence[Check] | None = None,
    knowledge: Knowledge | None = None,
    areas: Sequence[str] | None = None,
    settings: Settings | None = None,
    invocation: Sequence[str] | None = None,
) -> tuple[Report, list[str]]:
    """Run checks over the evidence, rank causes and plan the fix. Returns the report and loader warnings.

    Knowledge and baselines come from `settings` (resolved once at the CLI) unless given; the knowledge's
    rules are validated against the observations the loaded checks declare. `invocation` (the command
    as typed, redacted) lets the plan's next command repeat it with the missing flag added."""
    settings = settings or DEFAULT
    warnings: list[str] = []
    full = checks is None
    if checks is None:
        reg = load_checks()
        checks, warnings = reg.checks, reg.warnings
    if knowledge is None:
        knowledge = settings.knowledge(frozenset(declared_observations(checks)) if full else None)
    if evidence._baselines is None:
        evidence.baselines = settings.baselines()
    if areas is not None:
        checks = [c for c in checks if c.area in areas]
    findings: list[Finding] = [
        Finding("inputs", Status.COULD_NOT_CHECK, f"could not check {what}: {reason}")
        for what, reason in evidence.collection_errors
    ]
    findings += run_checks(checks, evidence, _launch_method)
    ranking = rank(findings, evidence, knowledge)
    # a cause's advice follows the release (no runner toggle on a release that has one runner)
    release = names_of(evidence)
    ranking = dataclasses.replace(
        ranking,
        causes=tuple(
            dataclasses.replace(c, fix=fix, next_step=step)
            for c in ranking.causes
            for fix, step in (_release_advice(c, knowledge, release),)
        ),
    )
    extra_notes: tuple[str, ...] = ()
    try:
        plan = build_plan(ranking.causes, evidence, knowledge, invocation, healthy=ranking.verdict == Verdict.HEALTHY)
    except Exception as exc:  # the plan is advice built over the ranking: never let it cost the report
        plan = None
        extra_notes = (f"no fix plan: building it failed ({type(exc).__name__}: {exc})",)
    names = plan.names if plan is not None else Names()
    # The facts already collected go into every command the report suggests (fill: names, release).
    causes = tuple(
        dataclasses.replace(
            c,
            fix=fill(c.fix, names),
            next_step=fill(c.next_step, names),
            missing_evidence=tuple(fill(m, names) for m in c.missing_evidence),
        )
        for c in ranking.causes
    )
    findings = [dataclasses.replace(f, remedy=fill(f.remedy, names)) if f.remedy else f for f in findings]
    notes = tuple(dict.fromkeys(fill(n, names) for n in (*evidence.notes, *ranking.notes, *extra_notes)))
    report = Report(
        target=evidence.label,
        verdict=ranking.verdict,
        acceptance=evidence.get(AcceptanceSummary),
        findings=tuple(findings),
        causes=causes,
        evidence=tuple(evidence),
        missing=tuple(dataclasses.replace(m, reason=fill(m.reason, names)) for m in evidence.missing_items),
        notes=notes,
        tool_version=__version__,
        # the time of the newest evidence, not of this run: a replayed bundle reports when it was collected
        generated_at=max((e.collected_at for e in evidence), default=None) or now_iso(),
        advice={"num_speculative_tokens": k} if (k := advise_k(evidence)) else None,
        plan=plan,
        verdict_detail=_filled_detail(ranking.detail, names),
    )
    return stable_refs(report), warnings


def _release_advice(c, knowledge: Knowledge, names) -> tuple[str, str]:
    """The cause's fix and next step for this engine release (its general ones unless a release-specific one
    applies and no evidence named a more precise fix)."""
    spec = knowledge.causes.get(c.id)
    found = spec.fix_for(names.engine, names.engine_version) if spec is not None else None
    if found is None or spec is None or c.fix != spec.fix:  # found implies spec
        return c.fix, c.next_step
    return found


def _filled_detail(detail: dict, names) -> dict | None:
    """The ranking's verdict detail with the evidence's names put into its commands."""
    if not detail:
        return None
    out = dict(detail)
    for key in ("undecided", "separating_input"):
        if isinstance(out.get(key), dict):
            d = dict(out[key])
            for f in ("how", "step"):
                if d.get(f):
                    filled = fill(f"`{d[f]}`", names) if f == "how" else fill(d[f], names)
                    d[f] = filled.strip("`") if f == "how" else filled
            out[key] = d
    return out


# Evidence that only restates what the user typed: on its own, nothing was read.
_STATED = (EngineId, EngineSupport, Workload, ScanStats)


def _launch_method(evidence: EvidenceSet) -> str | None:
    return launch_method(evidence)[0]


def require_something_read(evidence: EvidenceSet) -> None:
    """A report only when something was read: a log that holds no engine line, an unreachable URL or an
    uncached model alone is one line and an exit code, not a page of "could not check"."""

    if any(not isinstance(e.value, _STATED) for e in evidence):
        return

    if any(
        s.intervals or s.malformed or (s.engine_log is not False and (s.lines or 0) >= MIN_SERVER_LOG_LINES)
        for s in (e.value for e in evidence.all(ScanStats))
    ):
        return
    if evidence.interrupted:
        # Ctrl-C (or SIGTERM/SIGHUP) before a line was read: the stop is what happened, not an unreadable input
        # (it was exit 3, "could not read log"); the CLI turns 130 into 143/129 for the other signals.
        raise DoctorError("interrupted before anything was read: nothing to report", exit_code=ExitCode.INTERRUPTED)
    if evidence.collection_errors:
        what, why = evidence.collection_errors[0]
        more = len(evidence.collection_errors) - 1
        raise DoctorError(
            f"could not read {what}: {why}" + (f" (and {more} more input(s))" if more else ""),
            hint="nothing else was given to diagnose",
            exit_code=ExitCode.NOT_CHECKED,
        )
    scans = [e for e in evidence.all(ScanStats)]
    if scans:
        where = ", ".join(dict.fromkeys(e.source.location for e in scans))
        lines = sum((e.value.lines or 0) for e in scans)
        empty = not any((e.value.lines or e.value.bytes) for e in scans)
        raise DoctorError(
            f"{where} is empty"
            if empty
            else f"{where} is not an engine log: no spec-decode metrics, no engine startup lines and no line an "
            f"inference server writes ({lines} line(s) read)",
            hint="give the server's own log (the lines with 'SpecDecoding metrics' or 'accept len'), or its /metrics "
            "(`dflash-doctor diagnose --metrics URL`)",
            exit_code=ExitCode.NOT_CHECKED,
        )
    if evidence.has(EngineId):
        eng = evidence.get(EngineId)
        assert eng is not None  # has() just said so
        raise UsageError(
            "an engine release alone is nothing to diagnose",
            hint="its known bugs: "
            + command(
                "dflash-doctor", "known-issues", "--engine", f"{eng.name}=={eng.version}" if eng.version else eng.name
            )
            + "; add --log server.log to diagnose",
        )
    raise UsageError("nothing to diagnose", hint="give a server log: dflash-doctor diagnose --log server.log")


_KIND_ORDER = {k: i for i, k in enumerate(Kind)}
_REF = re.compile(r"\bE(\d+)\b")


def stable_refs(report: Report) -> Report:
    """Evidence numbered by kind (acceptance first, as Kind lists them), then by the order it was gathered:
    the same inputs give the same E-numbers on every run, however the collector's threads finished."""
    order = sorted(range(len(report.evidence)), key=lambda i: (_KIND_ORDER[report.evidence[i].kind], i))
    mapping = {report.evidence[i].ref: f"E{n}" for n, i in enumerate(order, 1)}
    if all(k == v for k, v in mapping.items()):
        return report

    def refs(rs: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(mapping.get(r, r) for r in rs)

    def text(s: str) -> str:  # "(from E7)" in a derived source
        return _REF.sub(lambda m: mapping.get(m.group(0), m.group(0)), s)

    def contrib(c: Contribution) -> Contribution:
        return dataclasses.replace(c, refs=refs(c.refs))

    evidence = tuple(
        dataclasses.replace(
            report.evidence[i],
            ref=mapping[report.evidence[i].ref],
            source=dataclasses.replace(report.evidence[i].source, location=text(report.evidence[i].source.location)),
        )
        for i in order
    )
    findings = tuple(
        dataclasses.replace(
            f, refs=refs(f.refs), observations=tuple(dataclasses.replace(o, refs=refs(o.refs)) for o in f.observations)
        )
        for f in report.findings
    )
    causes = tuple(
        dataclasses.replace(
            c,
            evidence_for=tuple(contrib(x) for x in c.evidence_for),
            evidence_against=tuple(contrib(x) for x in c.evidence_against),
        )
        for c in report.causes
    )
    return dataclasses.replace(report, evidence=evidence, findings=findings, causes=causes)


def served_evidence(logs: list[str], settings: Settings | None = None) -> tuple[EvidenceSet, list[str]]:
    """The served side of `probe --log`: the logs' acceptance and the pair they name."""

    ev = EvidenceSet()
    gather_logs(ev, logs, settings=settings or DEFAULT)
    EvidenceBuilder(ev).engine_from_startup("the log names no engine")
    return ev, [f"{w}: {r}" for w, r in ev.collection_errors]


def compare_with_served(result: dict, served: EvidenceSet) -> list[dict]:
    """A fresh probe against the served τ (the probe-vs-served check): its findings."""

    add_probe_evidence(served, result, Source("command", "probe"))
    checks = [c for c in load_checks().checks if c.id == "probe-vs-served"]
    return [to_jsonable(f) for f in run_checks(checks, served, _launch_method)]
