"""Open the host a spec names: `local`, `ssh://[user@]host[:port]` (or `user@host`, or an ssh_config alias),
or `bundle:PATH`. Kept apart from the package's __init__ so that code needing only the Host interface (the
model readers) does not load every transport."""

from __future__ import annotations

from .bundle import BundleHost
from .interface import Host
from .local import LocalHost
from .ssh import SSHHost


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
        return LocalHost()
    if spec.startswith("bundle:"):
        return BundleHost(spec[len("bundle:") :])
    return SSHHost(
        spec,
        accept_new_host_key=accept_new_host_key,
        ssh_config=ssh_config,
        known_hosts=known_hosts,
        connect_timeout=connect_timeout,
        allow_exec=allow_ssh_exec,
    )
