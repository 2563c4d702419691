"""Hosts: where evidence is collected — this machine, SSH hosts, or a saved bundle."""

from __future__ import annotations

from .interface import CommandResult, Host, HostError


def open_host(
    spec: str,
    *,
    accept_new_host_key: bool = False,
    ssh_config: str | None = None,
    known_hosts: str | None = None,
    connect_timeout: float | None = None,
    allow_ssh_exec: bool = False,
) -> Host:
    """`local`, `ssh://[user@]host[:port]` (or `user@host`, or an ssh_config alias), or `bundle:PATH`.
    `allow_ssh_exec`: let `Match exec` lines of ssh_config run their command (refused otherwise)."""
    if spec in ("local", "localhost-local"):
        from .local import LocalHost

        return LocalHost()
    if spec.startswith("bundle:"):
        from .bundle import BundleHost

        return BundleHost(spec[len("bundle:") :])
    from .ssh import SSHHost

    return SSHHost(
        spec,
        accept_new_host_key=accept_new_host_key,
        ssh_config=ssh_config,
        known_hosts=known_hosts,
        connect_timeout=connect_timeout,
        allow_exec=allow_ssh_exec,
    )


__all__ = ["CommandResult", "Host", "HostError", "open_host"]
