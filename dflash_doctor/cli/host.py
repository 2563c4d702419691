"""`dflash-doctor check host`, `check bundle` and `collect`: evidence from machines, not files.

    check host [local|ssh://user@host[:port]|ALIAS]… [--log PATH] [--hosts-file F] [--parallel N]
    check bundle FILE
    collect HOST -o FILE

Exit codes (README "Exit codes"): 0 nothing wrong found on any host; 1 problems found on at least
one host; 3 nothing could be checked on some host (unreachable, no serving process and no log) and
no problems elsewhere; 2 usage errors. `check host local` on a machine with no engine, GPU or cache
prints a report where every item says "not found" and exits 3.
"""

from __future__ import annotations

import re
from typing import List, Optional

import typer

from ..render import Format
from .common import AllowSSHExecOpt, FormatOpt, OutputOpt, dumb_terminal

check_app = typer.Typer(help="Diagnose a running deployment: a host (local or SSH), several hosts, or a saved bundle.",
                        no_args_is_help=True)

_INI_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]\s*$")


def read_hosts_file(path: str) -> list[str]:
    """One host per line, or an Ansible INI inventory (ansible_host / ansible_user / ansible_port)."""
    from ..errors import UsageError

    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20)
    except OSError as exc:
        raise UsageError(f"cannot read --hosts-file {path}: {exc.strerror or exc}") from None
    hosts: list[str] = []
    section = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith(";") else ""
        if not line:
            continue
        m = _INI_SECTION.match(line)
        if m:
            section = m.group("name")
            continue
        if section and (section.endswith(":vars") or section.endswith(":children")):
            continue
        words = line.split()
        name, kv = words[0], dict(w.split("=", 1) for w in words[1:] if "=" in w)
        if name in ("local", "localhost") and kv.get("ansible_connection") == "local":
            spec = "local"
        elif kv:
            host = kv.get("ansible_host", name)
            user = kv.get("ansible_user")
            port = kv.get("ansible_port")
            spec = "ssh://" + (f"{user}@" if user else "") + host + (f":{port}" if port else "")
        else:
            spec = name
        if spec not in hosts:
            hosts.append(spec)
    return hosts


def _label(spec: str) -> str:
    return spec


def _collect_one(spec: str, log: Optional[str], accept_new: bool, ssh_config: Optional[str],
                 known_hosts: Optional[str], pid: Optional[int], timeout: float, progress=None,
                 probe_result: Optional[str] = None, settings=None, allow_ssh_exec: bool = False):
    """(report, status, error) for one host. Never raises for host problems: they become the report."""
    from ..hosts import HostError, open_host

    try:  # first connect; what the diagnosis needs afterwards is imported while the host works
        host = open_host(spec, accept_new_host_key=accept_new, ssh_config=ssh_config, known_hosts=known_hosts,
                         allow_ssh_exec=allow_ssh_exec)
    except HostError as exc:
        from ..doctor import build_report
        from ..evidence import EvidenceSet, Kind

        ev = EvidenceSet(label=spec)
        ev.could_not_collect(f"host {spec}", exc.message + (f" ({exc.hint})" if exc.hint else ""), Kind.HOST)
        for kind in (Kind.ACCEPTANCE, Kind.PROCESS, Kind.LAUNCH, Kind.ENGINE):
            ev.missing(kind, f"{spec} could not be reached")
        report, _ = build_report(ev, settings=settings)
        return report, "unreachable", exc
    from ..collect.host import HostOptions, collect_host
    from ..evidence import EvidenceSet, Kind

    opts = HostOptions(log=log, pid=pid, timeout=timeout)
    try:
        with host:
            evidence = collect_host(host, opts, progress=progress, meanwhile=_warm)
    except HostError as exc:
        from ..doctor import build_report

        ev = EvidenceSet(label=spec)
        ev.could_not_collect(f"host {spec}", exc.message, Kind.HOST)
        report, _ = build_report(ev, settings=settings)
        return report, "failed", exc
    from ..doctor import build_report

    _add_probe_result(evidence, probe_result)
    report, _ = build_report(evidence, settings=settings)
    return report, ("interrupted" if evidence.interrupted else "checked"), None


def _add_probe_result(evidence, probe_result: Optional[str]) -> None:
    """A saved `probe --format json` result for the pair the host serves: served vs probe becomes evidence."""
    if probe_result:
        from ..probe.evidence import gather_probe_result

        gather_probe_result(evidence, probe_result)


def _status_of(report, state: str) -> str:
    from ..evidence import Verdict

    if state != "checked":
        return state
    return {Verdict.PROBLEM: "problem", Verdict.HEALTHY: "healthy"}.get(report.verdict, "insufficient data")


def _exit_for(results) -> int:
    from ..errors import ExitCode
    from .common import exit_code_for

    if any(state == "interrupted" for _, _, state, _ in results):
        return int(ExitCode.INTERRUPTED)  # Ctrl-C: what was gathered was printed, but nothing is judged complete
    codes = [int(exit_code_for(r)) if state == "checked" else int(ExitCode.NOT_CHECKED) for _, r, state, _ in results]
    if int(ExitCode.PROBLEMS) in codes:
        return int(ExitCode.PROBLEMS)
    if int(ExitCode.NOT_CHECKED) in codes:
        return int(ExitCode.NOT_CHECKED)
    return int(ExitCode.OK)


def fleet_rows(results) -> list[dict]:
    rows = []
    for spec, report, state, err in results:
        acc = report.acceptance
        top = report.causes[0] if report.causes else None
        rows.append({"host": spec, "status": _status_of(report, state),
                     "tau": round(acc.mean_acceptance_length, 2) if acc is not None else None,
                     "top_cause": top.id if top else None,
                     "confidence": round(top.confidence, 2) if top else None,
                     "error": err.message if err is not None else None})
    return rows


def render_fleet(results, fmt: Format, color: bool, width: int) -> str:
    from ..render import render

    from ..textsafe import plain

    rows = fleet_rows(results)
    if fmt == Format.JSON:
        doc = {"schema": "dflash-doctor/fleet@1", "hosts": [
            {**row, "report": report.to_dict()} for row, (_, report, _, _) in zip(rows, results)]}
        from ..render.json_report import dumps_safe
        return dumps_safe(doc)
    parts = []
    for spec, report, state, err in results:
        body = render(report, fmt, color=color, width=width)
        parts.append(body if fmt == Format.MARKDOWN else f"━━ {plain(spec)} ━━\n{body}")
    if fmt == Format.MARKDOWN:
        from ..render.markdown import md
        table = ["## Fleet", "", "| host | status | τ | top cause |", "|---|---|---|---|"]
        for r in rows:
            cause = f"{r['top_cause']} ({r['confidence']:.2f})" if r["top_cause"] else "—"
            table.append(f"| {md(r['host'])} | {r['status']} | {r['tau'] if r['tau'] is not None else '—'} | {cause} |")
        return "\n\n".join(parts) + "\n" + "\n".join(table) + "\n"
    from io import StringIO

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ..textsafe import plain

    table = Table(title="fleet", show_lines=False)
    for col in ("host", "status", "τ", "top cause", "error"):
        table.add_column(col)
    for r in rows:
        cause = f"{r['top_cause']} ({r['confidence']:.2f})" if r["top_cause"] else "—"
        table.add_row(Text(plain(r["host"])), Text(r["status"]), Text("—" if r["tau"] is None else f"{r['tau']:.2f}"),
                      Text(cause), Text(plain(r["error"] or "", 80)))
    buf = StringIO()
    Console(file=buf, force_terminal=color, no_color=not color, width=width).print(table)
    return "\n".join(parts) + "\n" + buf.getvalue()


def _completed_or_interrupted(futs, results, settings=None):
    """as_completed, except that Ctrl-C ends the wait: hosts not finished yet are reported as interrupted
    (their commands end at their timeouts) and the hosts already checked are kept."""
    from concurrent.futures import as_completed

    from ..doctor import build_report
    from ..evidence import EvidenceSet, Kind

    try:
        yield from as_completed(futs)
    except KeyboardInterrupt:
        for fut, spec in futs.items():
            fut.cancel()
            if spec not in results:
                ev = EvidenceSet(label=spec)
                ev.could_not_collect(f"host {spec}", "interrupted (Ctrl-C) before this host was checked", Kind.HOST)
                results[spec] = (spec, build_report(ev, settings=settings)[0], "interrupted", None)


def run_fleet(specs: list[str], parallel: int, show_progress: bool, **kw):
    """Collect from every host with a bounded pool; one host's failure never stops the others."""
    import sys
    import time
    from concurrent.futures import ThreadPoolExecutor

    from ..textsafe import plain

    results: dict[str, tuple] = {}
    progress = None
    if show_progress and sys.stderr.isatty() and not dumb_terminal():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress = Progress(TextColumn("[bold]checking hosts"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=True)
    t0 = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=max(1, parallel))
    try:
        futs = {pool.submit(_collect_one, spec, **kw): spec for spec in specs}
        task = progress.add_task("hosts", total=len(specs)) if progress else None
        if progress:
            progress.start()
        try:
            for fut in _completed_or_interrupted(futs, results, kw.get("settings")):
                spec = futs[fut]
                try:
                    report, state, err = fut.result()
                except Exception as exc:  # an unexpected bug on one host is that host's result
                    from ..evidence import EvidenceSet, Kind
                    from ..doctor import build_report
                    from ..hosts import HostError
                    ev = EvidenceSet(label=spec)
                    ev.could_not_collect(f"host {spec}", f"internal error ({type(exc).__name__}: {exc})", Kind.HOST)
                    report, _ = build_report(ev, settings=kw.get("settings"))
                    state, err = "failed", HostError(f"internal error ({type(exc).__name__}: {exc})")
                results[spec] = (spec, report, state, err)
                if progress:
                    progress.advance(task)
                elif show_progress:
                    # A host name is the user's text (or a hosts file's): escapes in it must not reach the terminal.
                    print(f"{plain(spec)}: {_status_of(report, state)} ({time.monotonic() - t0:.1f} s)", file=sys.stderr)
        finally:
            if progress:
                progress.stop()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # all done, or Ctrl-C: do not wait for stragglers here
    return [results[s] for s in specs]


def register(app: typer.Typer) -> None:
    app.add_typer(check_app, name="check")

    @check_app.command("host")
    def check_host(
        hosts: List[str] = typer.Argument(None, help="local, ssh://[user@]host[:port], or an ~/.ssh/config alias (several allowed)."),
        log: Optional[str] = typer.Option(None, "--log", help="The server log's path ON THE HOST (default: discovered)."),
        hosts_file: Optional[str] = typer.Option(None, "--hosts-file", help="Hosts, one per line, or an Ansible INI inventory."),
        parallel: int = typer.Option(8, "--parallel", "-j", min=1, max=64, help="Hosts checked at once."),
        accept_new_host_key: bool = typer.Option(False, "--accept-new-host-key",
                                                 help="Trust and record UNKNOWN host keys (changed keys are always refused)."),
        pid: Optional[int] = typer.Option(None, "--pid", help="The serving process to examine when a host runs several."),
        ssh_config: Optional[str] = typer.Option(None, "--ssh-config", help="ssh_config file (default ~/.ssh/config)."),
        known_hosts: Optional[str] = typer.Option(None, "--known-hosts", help="known_hosts file (default ~/.ssh/known_hosts)."),
        allow_ssh_exec: bool = AllowSSHExecOpt,
        timeout: float = typer.Option(60.0, "--timeout", help="Seconds allowed per remote command."),
        probe_result: Optional[str] = typer.Option(None, "--probe-result",
                                                   help="A saved `dflash-doctor probe --format json` result for the pair served."),
        fmt: Format = FormatOpt,
        output: Optional[str] = OutputOpt,
    ) -> int:
        """Collect evidence from hosts (read-only) and rank causes for each; a fleet table for several."""
        from ..errors import UsageError
        from .output import Output

        specs = list(hosts or [])
        if hosts_file:
            specs += [h for h in read_hosts_file(hosts_file) if h not in specs]
        if not specs:
            raise UsageError("no host given", hint="dflash-doctor check host local | ssh://user@host | --hosts-file FILE")
        from .ranking_opts import resolve_settings

        out = Output(fmt=fmt, path=output)
        kw = dict(log=log, accept_new=accept_new_host_key, ssh_config=ssh_config, known_hosts=known_hosts, pid=pid,
                  timeout=timeout, probe_result=probe_result, settings=resolve_settings(),
                  allow_ssh_exec=allow_ssh_exec)
        if len(specs) == 1:
            report, state, err = _collect_one(specs[0], **kw)
            if err is not None:
                out.warn(err.message + (f" — {err.hint}" if getattr(err, "hint", None) else ""))
            _note_transfer(out, report)
            out.report(report)
            return _exit_for([(specs[0], report, state, err)])
        results = run_fleet(specs, parallel, show_progress=True, **kw)
        out.write(render_fleet(results, fmt, out.color, out.width))
        return _exit_for(results)

    @check_app.command("bundle")
    def check_bundle(
        bundle: str = typer.Argument(..., help="A bundle written by `dflash-doctor collect` (directory or .tar.gz)."),
        probe_result: Optional[str] = typer.Option(None, "--probe-result",
                                                   help="A saved `dflash-doctor probe --format json` result for the pair served."),
        fmt: Format = FormatOpt,
        output: Optional[str] = OutputOpt,
    ) -> int:
        """Diagnose a saved bundle: the same collector and checks, replayed from the bundle's data."""
        from ..collect.host import HostOptions, collect_host
        from ..doctor import build_report
        from ..errors import DoctorError, ExitCode
        from ..hosts import HostError
        from ..hosts.bundle import BundleHost
        from .common import exit_code_for
        from .output import Output

        from .ranking_opts import resolve_settings

        out = Output(fmt=fmt, path=output)
        settings = resolve_settings()
        try:
            host = BundleHost(bundle)
        except HostError as exc:
            raise DoctorError(exc.message, exc.hint, ExitCode.USAGE) from None
        opts = host.manifest.get("options") if isinstance(host.manifest.get("options"), dict) else {}
        evidence = collect_host(host, HostOptions(log=opts.get("log"), pid=opts.get("pid")), meanwhile=_warm)
        _add_probe_result(evidence, probe_result)
        report, warnings = build_report(evidence, settings=settings)
        for w in warnings:
            out.warn(w)
        out.report(report)
        return int(exit_code_for(report))

    @app.command("collect")
    def collect(
        host_spec: str = typer.Argument(..., metavar="HOST", help="local, ssh://[user@]host[:port] or an alias."),
        out_path: str = typer.Option(..., "--output", "-o", help="Bundle to write: a new directory, or FILE.tar.gz."),
        log: Optional[str] = typer.Option(None, "--log", help="The server log's path ON THE HOST (default: discovered)."),
        accept_new_host_key: bool = typer.Option(False, "--accept-new-host-key", help="Trust and record UNKNOWN host keys."),
        pid: Optional[int] = typer.Option(None, "--pid", help="The serving process to examine."),
        ssh_config: Optional[str] = typer.Option(None, "--ssh-config", help="ssh_config file (default ~/.ssh/config)."),
        known_hosts: Optional[str] = typer.Option(None, "--known-hosts", help="known_hosts file."),
        allow_ssh_exec: bool = AllowSSHExecOpt,
    ) -> int:
        """Save a host's evidence as a bundle (secrets redacted) to diagnose later with `check bundle`."""
        import os

        from .. import __version__
        from ..collect.host import HostOptions, collect_host, sanitize
        from ..errors import DoctorError, UsageError
        from ..evidence import now_iso
        from ..hosts import HostError, open_host
        from ..hosts.bundle import RecordingHost
        from .output import Output

        out = Output()
        if os.path.lexists(out_path):
            raise UsageError(f"{out_path} already exists", hint="choose a new path; collect never overwrites")
        try:
            live = open_host(host_spec, accept_new_host_key=accept_new_host_key, ssh_config=ssh_config,
                             known_hosts=known_hosts, allow_ssh_exec=allow_ssh_exec)
        except HostError as exc:
            raise DoctorError(exc.message, exc.hint) from None
        rec = RecordingHost(live, sanitize=sanitize)
        with rec:
            evidence = collect_host(rec, HostOptions(log=log, pid=pid))
        try:
            rec.write_bundle(out_path, {"host": live.name, "tool_version": __version__, "collected_at": now_iso(),
                                        "options": {"log": log, "pid": pid}})
        except (OSError, FileExistsError) as exc:
            raise UsageError(f"cannot write {out_path}: {exc}") from None
        out.info(f"bundle written to {out_path}: {len(rec.calls)} recorded answers, {len(evidence)} pieces of evidence; "
                 f"diagnose it with: dflash-doctor check bundle {out_path}")
        return 0


def _note_transfer(out, report) -> None:
    from ..evidence import Kind

    for ev in report.evidence:
        if ev.kind == Kind.HOST:
            out.info(ev.summary)


def _warm() -> None:
    """Run on the collector's pool while the host works: import the diagnosis (doctor.warm_imports)."""
    from ..doctor import warm_imports

    warm_imports()
