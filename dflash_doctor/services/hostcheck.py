"""The `check host`, `check bundle` and `collect` service: evidence from machines (or saved bundles) → a
report per machine, a bounded pool for several, and the fleet they make.

One host's failure never stops the others: an unreachable host, a collector crash or Ctrl-C becomes that
host's result. Progress is an observer (`on_done(result)`), so the CLI decides how it is shown.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from ..collect.host import HostOptions, collect_host, sanitize
from ..errors import DoctorError, ExitCode, UsageError
from ..evidence import EvidenceSet, Report, Verdict, now_iso
from ..evidence.payloads import HostSummary
from ..hosts import HostError
from ..hosts.bundle import BundleHost, RecordingHost
from ..hosts.connect import open_host
from ..probe.saved_result import attach_probe
from ..textsafe import command
from .doctor import build_report

# A host's state after the attempt; only "checked" carries a diagnosis worth reading.
STATES = ("checked", "unreachable", "failed", "interrupted")


@dataclass(frozen=True)
class HostResult:
    spec: str  # what the user typed (a host or a bundle path)
    report: Report
    state: str  # one of STATES
    error: str | None = None
    hint: str | None = None

    @property
    def status(self) -> str:
        """What the fleet table shows: the verdict of a checked host, else why it was not checked."""
        if self.state != "checked":
            return self.state
        return self.report.verdict.value

    @property
    def exit_code(self) -> int:
        if self.state == "interrupted":
            return int(ExitCode.INTERRUPTED)
        if self.state != "checked":
            return int(ExitCode.NOT_CHECKED)
        return self.report.exit_code

    def row(self) -> dict[str, Any]:
        acc = self.report.acceptance
        top = self.report.causes[0] if self.report.causes and self.state == "checked" else None
        plan = self.report.plan
        if plan is not None and top is not None:
            first = next((c for c in plan.causes if c.explained_by is None), None)
            top = next((c for c in self.report.causes if first is not None and c.id == first.id), top)
        step = (
            plan.steps[0].action if plan is not None and plan.steps and self.report.verdict == Verdict.PROBLEM else None
        )
        return {
            "host": self.spec,
            "status": self.status,
            "tau": round(acc.mean_acceptance_length, 2) if acc is not None else None,
            "top_cause": top.id if top else None,
            "confidence": round(top.confidence, 2) if top else None,
            "fix": step,
            "error": self.error,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class HostFleet:
    """Several hosts or bundles checked in one run."""

    results: tuple[HostResult, ...]
    kind: str = "host"  # "host" | "bundle"

    @property
    def exit_code(self) -> int:
        """Interrupted wins (nothing is judged complete), then any problem, then anything unchecked."""
        codes = [r.exit_code for r in self.results]
        for code in (int(ExitCode.INTERRUPTED), int(ExitCode.PROBLEMS), int(ExitCode.NOT_CHECKED)):
            if code in codes:
                return code
        return int(ExitCode.OK)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "dflash-doctor/fleet@1",
            "kind": self.kind,
            "hosts": [{**r.row(), "report": r.report.to_dict()} for r in self.results],
        }


@dataclass(frozen=True)
class HostCheck:
    """What to collect and how (the flags of `check host`)."""

    log: str | None = None
    pid: int | None = None
    timeout: float = 60.0
    accept_new_host_key: bool = False
    ssh_config: str | None = None
    known_hosts: str | None = None
    probe: Any = None  # probe.evidence.SavedProbe: a saved probe result for the served pair
    force_probe_pair: bool = False
    settings: Any = None
    invocation: tuple[str, ...] | None = None
    extra: dict = field(default_factory=dict)  # options a newer host layer takes (passed to open_host)


def refuse_paths_as_hosts(specs: Sequence[str]) -> None:
    """A local file or directory given where a host is expected is a mistake worth one line."""
    for spec in specs:
        if spec in ("local", "localhost-local") or "://" in spec or spec.startswith("bundle:"):
            continue
        if os.path.exists(spec):
            what = "directory" if os.path.isdir(spec) else "file"
            raise UsageError(
                f"{spec} is a {what} here, not a host",
                hint=f"did you mean `{command('dflash-doctor', 'check', 'bundle', spec)}`?",
            )


def _unreached(spec: str, why: str, kind: type = HostSummary, settings=None) -> Report:
    ev = EvidenceSet(label=spec)
    ev.could_not_collect(f"host {spec}", why, kind)
    return build_report(ev, settings=settings)[0]


def check_one(spec: str, opts: HostCheck, progress=None) -> HostResult:
    """One host: connect, collect (read-only), diagnose. Host problems become the result, never a raise."""

    try:  # first connect; what the diagnosis needs afterwards is imported while the host works
        host = open_host(
            spec,
            accept_new_host_key=opts.accept_new_host_key,
            ssh_config=opts.ssh_config,
            known_hosts=opts.known_hosts,
            **opts.extra,
        )
    except HostError as exc:
        return HostResult(
            spec, _unreached(spec, exc.message, settings=opts.settings), "unreachable", exc.message, exc.hint
        )

    try:
        with host:
            evidence = collect_host(
                host,
                HostOptions(log=opts.log, pid=opts.pid, timeout=opts.timeout),
                progress=progress,
            )
    except HostError as exc:
        return HostResult(spec, _unreached(spec, exc.message, settings=opts.settings), "failed", exc.message, exc.hint)
    return _diagnose(spec, evidence, opts, "interrupted" if evidence.interrupted else "checked")


def _diagnose(spec: str, evidence: EvidenceSet, opts: HostCheck, state: str) -> HostResult:
    if opts.probe is not None:
        attach_probe(evidence, opts.probe, force=opts.force_probe_pair)
    report, _ = build_report(evidence, settings=opts.settings, invocation=opts.invocation)
    return HostResult(spec, report, state)


def check_hosts(
    specs: Sequence[str], opts: HostCheck, parallel: int = 8, on_done: Callable[[HostResult], None] | None = None
) -> HostFleet:
    """Every host through a bounded pool; Ctrl-C keeps the hosts already checked and marks the rest."""

    results: dict[str, HostResult] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, parallel))
    futs = {pool.submit(check_one, spec, opts): spec for spec in specs}
    try:
        for fut in as_completed(futs):
            spec = futs[fut]
            try:
                res = fut.result()
            except Exception as exc:  # an unexpected bug on one host is that host's result
                why = f"internal error ({type(exc).__name__}: {exc})"
                res = HostResult(spec, _unreached(spec, why, settings=opts.settings), "failed", why)
            results[spec] = res
            if on_done is not None:
                on_done(res)
    except KeyboardInterrupt:
        for fut, spec in futs.items():
            fut.cancel()
            if spec not in results:
                why = "interrupted (Ctrl-C) before this host was checked"
                results[spec] = HostResult(spec, _unreached(spec, why, settings=opts.settings), "interrupted", why)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # all done, or Ctrl-C: do not wait for stragglers here
    return HostFleet(tuple(results[s] for s in specs), kind="host")


def check_bundle(path: str, opts: HostCheck) -> HostResult:
    """A saved bundle, replayed through the same collector and checks. A path that is no bundle: usage error."""

    if "://" in path and not os.path.exists(path):
        raise UsageError(
            f"{path} is a host, not a bundle", hint=f"did you mean `{command('dflash-doctor', 'check', 'host', path)}`?"
        )
    if not os.path.exists(path):
        raise UsageError(
            f"no such bundle: {path}",
            hint="a bundle is a directory or .tar.gz written by `dflash-doctor collect HOST -o PATH`",
        )
    try:
        host = BundleHost(path)
    except HostError as exc:
        raise DoctorError(exc.message, exc.hint, ExitCode.USAGE) from None
    options = host.manifest.options
    evidence = collect_host(host, HostOptions(log=options.log, pid=options.pid))
    return _diagnose(path, evidence, opts, "interrupted" if evidence.interrupted else "checked")


def check_bundles(paths: Sequence[str], opts: HostCheck) -> HostFleet:
    """Several bundles: a fleet of saved evidence. One that is not a bundle is that entry's result."""
    out = []
    for p in paths:
        try:
            out.append(check_bundle(p, opts))
        except DoctorError as exc:
            if len(paths) == 1:
                raise
            out.append(
                HostResult(p, _unreached(p, exc.message, settings=opts.settings), "failed", exc.message, exc.hint)
            )
    return HostFleet(tuple(out), kind="bundle")


@dataclass(frozen=True)
class Collected:
    path: str
    answers: int
    evidence: int


def collect_bundle(spec: str, out_path: str, opts: HostCheck, tool_version: str) -> Collected:
    """Save a host's evidence (secrets redacted) as a bundle to diagnose later with `check bundle`."""

    if os.path.lexists(out_path):
        raise UsageError(f"{out_path} already exists", hint="choose a new path; collect never overwrites")
    try:
        live = open_host(
            spec,
            accept_new_host_key=opts.accept_new_host_key,
            ssh_config=opts.ssh_config,
            known_hosts=opts.known_hosts,
            **opts.extra,
        )
    except HostError as exc:
        raise DoctorError(exc.message, exc.hint) from None
    rec = RecordingHost(live, sanitize=sanitize)
    with rec:
        evidence = collect_host(rec, HostOptions(log=opts.log, pid=opts.pid))
    try:
        rec.write_bundle(
            out_path,
            {
                "host": live.name,
                "tool_version": tool_version,
                "collected_at": now_iso(),
                "options": {"log": opts.log, "pid": opts.pid},
            },
        )
    except (OSError, FileExistsError) as exc:
        raise UsageError(f"cannot write {out_path}: {exc}") from None
    return Collected(out_path, len(rec.calls), len(evidence))
