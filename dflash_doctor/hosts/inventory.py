"""Host lists for fleets: one host per line, or an Ansible INI inventory (ansible_host / ansible_user /
ansible_port; `ansible_connection=local` is this machine)."""

from __future__ import annotations

import re

from ..errors import UsageError

_INI_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]\s*$")


def read_hosts_file(path: str) -> list[str]:
    """One host per line, or an Ansible INI inventory (ansible_host / ansible_user / ansible_port)."""
    from ..safeio import read_regular

    try:
        text = read_regular(path, 1 << 20).decode("utf-8", "replace")
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
