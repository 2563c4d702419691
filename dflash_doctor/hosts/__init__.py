"""Hosts: where evidence is collected — this machine, SSH hosts, or a saved bundle.

interface.py  the Host interface every transport implements (run, read, list — with timeouts)
local.py      this machine
ssh.py        an SSH host (paramiko, host keys checked against known_hosts)
bundle.py     a saved bundle, replayed as a host
connect.py    open_host(spec): the transport a spec names

A new kind of host is a module here implementing interface.Host, and a branch in connect.open_host.
"""

from __future__ import annotations

from .interface import CommandResult, Host, HostError

__all__ = ["CommandResult", "Host", "HostError"]
