"""`check host`, `check bundle` and `collect`: flags in, the hostcheck service, a rendered result out.

Exit codes: 0 healthy everywhere, 1 a problem on any host, 3 a host could not be checked (and no problem
elsewhere), 2 usage errors (a path given as a host, a file that is no bundle), 130 interrupted.
"""

from __future__ import annotations

import typer

from .. import __version__
from ..errors import DoctorError, ExitCode, UsageError
from ..hosts.inventory import read_hosts_file
from ..render import Format
from ..services.hostcheck import HostCheck, check_bundles, check_hosts, check_one, collect_bundle, refuse_paths_as_hosts
from ..textsafe import command
from .common import (
    AllowSSHExecOpt,
    ForcePairOpt,
    FormatOpt,
    OutputOpt,
    ProbeResultOpt,
    VerboseOpt,
    examples,
    invocation,
    number,
)
from .output import Output
from .progress import HostProgress
from .ranking_opts import resolve_settings, saved_probe

HOST = "local|ssh://USER@HOST[:PORT]|ALIAS"
LogOpt = typer.Option(None, "--log", metavar="PATH", help="The server log's path ON THE HOST (default: discovered).")
PidOpt = typer.Option(
    None,
    "--pid",
    metavar="PID",
    help="The serving process to examine when a host runs several.",
    parser=number("--pid", 1, 2**31 - 1, integer=True),
)
NewKeyOpt = typer.Option(
    False, "--accept-new-host-key", help="Trust and record UNKNOWN host keys (changed keys are always refused)."
)
SshConfigOpt = typer.Option(None, "--ssh-config", metavar="FILE", help="ssh_config file (default ~/.ssh/config).")
KnownHostsOpt = typer.Option(
    None, "--known-hosts", metavar="FILE", help="known_hosts file (default ~/.ssh/known_hosts)."
)


def register(app: typer.Typer) -> None:
    check_app = typer.Typer(help="Diagnose hosts (local, SSH, fleets) or saved bundles.", no_args_is_help=True)
    app.add_typer(check_app, name="check")

    @check_app.command(
        "host",
        epilog=examples(
            "dflash-doctor check host local",
            "dflash-doctor check host ssh://ops@gpu-7 --log /var/log/vllm.log",
            "dflash-doctor check host gpu-01 gpu-02 --hosts-file inventory.ini -j 16 --format json",
            "dflash-doctor check host ssh://ops@gpu-7 --probe-result probe.json",
        ),
    )
    def check_host(
        hosts: list[str] = typer.Argument(None, metavar=f"[{HOST}]...", help="Hosts to check (several allowed)."),
        log: str | None = LogOpt,
        hosts_file: str | None = typer.Option(
            None, "--hosts-file", metavar="FILE", help="Hosts, one per line, or an Ansible INI inventory."
        ),
        parallel: int = typer.Option(8, "--parallel", "-j", min=1, max=64, metavar="N", help="Hosts checked at once."),
        accept_new_host_key: bool = NewKeyOpt,
        pid: int | None = PidOpt,
        ssh_config: str | None = SshConfigOpt,
        known_hosts: str | None = KnownHostsOpt,
        allow_ssh_exec: bool = AllowSSHExecOpt,
        timeout: float = typer.Option(
            60.0,
            "--timeout",
            metavar="SECONDS",
            help="Time allowed per remote command.",
            parser=number("--timeout", 0, 86400, above=True),
        ),
        probe_result: str | None = ProbeResultOpt,
        force_probe_pair: bool = ForcePairOpt,
        verbose: int = VerboseOpt,
        fmt: Format = FormatOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """Diagnose hosts where they run, read-only.

        Collect evidence from each host and rank causes; several hosts make a fleet table. Exit 1 problem
        on any host, 0 healthy, 3 a host could not be checked."""

        specs = list(dict.fromkeys([*(hosts or []), *(read_hosts_file(hosts_file) if hosts_file else [])]))
        if not specs:
            raise UsageError(
                "no host given", hint="dflash-doctor check host local | ssh://user@host | --hosts-file FILE"
            )
        refuse_paths_as_hosts(specs)
        out = Output(fmt=fmt, path=output, verbose=verbose)
        opts = HostCheck(
            log=log,
            pid=pid,
            timeout=timeout,
            accept_new_host_key=accept_new_host_key,
            ssh_config=ssh_config,
            known_hosts=known_hosts,
            probe=saved_probe(probe_result),
            force_probe_pair=force_probe_pair,
            settings=resolve_settings(),
            invocation=invocation(),
            extra={"allow_ssh_exec": allow_ssh_exec},
        )
        if len(specs) == 1:
            res = check_one(specs[0], opts)
            if res.state in ("unreachable", "failed"):  # nothing was read: one line, not a report
                assert res.error is not None  # these states always carry the host's error
                # (a host's own errors start with its name already: said once)
                error = res.error if res.error.startswith(specs[0]) else f"{specs[0]}: {res.error}"
                raise DoctorError(error, res.hint, ExitCode.NOT_CHECKED)
            out.info(next((e.summary for e in res.report.evidence if e.kind.value == "host"), ""))
            out.show(res.report)
            return res.exit_code
        with HostProgress(out, len(specs)) as progress:
            fleet = check_hosts(specs, opts, parallel, on_done=progress)
        out.show(fleet)
        return fleet.exit_code

    @check_app.command(
        "bundle",
        epilog=examples(
            "dflash-doctor check bundle fixtures/hosts/seed",
            "dflash-doctor check bundle gpu-7.tar.gz --probe-result probe.json",
            "dflash-doctor check bundle gpu-*.tar.gz --format json",
        ),
    )
    def check_bundle(
        bundles: list[str] = typer.Argument(
            ...,
            metavar="BUNDLE...",
            help="Bundles written by `dflash-doctor collect` (directories or .tar.gz); several make a fleet.",
        ),
        probe_result: str | None = ProbeResultOpt,
        force_probe_pair: bool = ForcePairOpt,
        verbose: int = VerboseOpt,
        fmt: Format = FormatOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """Diagnose saved bundles, offline.

        The same collector and checks, replayed from the bundles' data; several make a fleet table."""

        out = Output(fmt=fmt, path=output, verbose=verbose)
        paths = list(dict.fromkeys(bundles))
        opts = HostCheck(
            probe=saved_probe(probe_result),
            force_probe_pair=force_probe_pair,
            settings=resolve_settings(),
            invocation=invocation(),
        )
        fleet = check_bundles(paths, opts)
        out.show(fleet.results[0].report if len(paths) == 1 else fleet)
        return fleet.exit_code

    @app.command(
        "collect",
        epilog=examples(
            "dflash-doctor collect ssh://ops@gpu-7 -o gpu-7.tar.gz", "dflash-doctor check bundle gpu-7.tar.gz"
        ),
    )
    def collect(
        host_spec: str = typer.Argument(..., metavar=HOST, help="The host to read."),
        out_path: str = typer.Option(
            ..., "--output", "-o", metavar="DIR|FILE.tar.gz", help="Bundle to write: a new directory, or FILE.tar.gz."
        ),
        log: str | None = LogOpt,
        accept_new_host_key: bool = NewKeyOpt,
        pid: int | None = PidOpt,
        ssh_config: str | None = SshConfigOpt,
        known_hosts: str | None = KnownHostsOpt,
        allow_ssh_exec: bool = AllowSSHExecOpt,
    ) -> int:
        """Save a host's evidence as a bundle.

        Secrets redacted; diagnose it later, anywhere, with `check bundle`."""

        refuse_paths_as_hosts([host_spec])
        done = collect_bundle(
            host_spec,
            out_path,
            HostCheck(
                log=log,
                pid=pid,
                accept_new_host_key=accept_new_host_key,
                ssh_config=ssh_config,
                known_hosts=known_hosts,
                extra={"allow_ssh_exec": allow_ssh_exec},
            ),
            __version__,
        )
        Output().info(
            f"bundle written to {done.path}: {done.answers} recorded answers, {done.evidence} pieces of "
            f"evidence; diagnose it with: {command('dflash-doctor', 'check', 'bundle', done.path)}"
        )
        return 0
