"""~/.ssh/config for paramiko, with the two things paramiko gets wrong for us.

* `Include` is honoured (paramiko ignores it): files are read in place, globs in lexical order,
  relative paths under ~/.ssh, at most 16 levels deep (OpenSSH's limits). An Include inside a Host
  or Match block applies only where that block does, as in OpenSSH: the included file's own Host and
  Match lines become Match lines that carry the enclosing block's condition too.
* `Match exec "CMD"` runs CMD through a shell to decide which settings apply. paramiko runs it; we
  refuse it unless the user passed `--allow-ssh-exec`, and even then only for host names that hold
  none of the characters OpenSSH ≥ 9.6 refuses (see `check_host_name`), so `%h` cannot inject a command.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import subprocess
import unicodedata

from ..textsafe import plain
from .interface import HostError

MAX_INCLUDE_DEPTH = 16
MAX_CONFIG_BYTES = 4 << 20
_SETTING = re.compile(r"^\s*(\S+?)(?:\s*=\s*|\s+)(.*?)\s*$")
# What OpenSSH's ssh(1) refuses in a host or user name given on the command line (shell
# metacharacters, quotes, whitespace, ',' and a leading '-'), since `%h`/`%r`/`%u` end up in
# `Match exec` and ProxyCommand shell commands.
_OPENSSH_REFUSED = set("'`\"$\\;&<>|(){},")


class ExecRefused(HostError):
    pass


def check_host_name(what: str, name: str, spec: str) -> None:
    """Refuse a host or user name that OpenSSH would refuse, or that could drive a terminal."""
    bad = sorted({c for c in name if c in _OPENSSH_REFUSED or c.isspace() or unicodedata.category(c).startswith("C")})
    if bad or name.startswith("-"):
        shown = ", ".join(repr(c) for c in bad) if bad else "a leading '-'"
        raise HostError(
            f"{_safe(spec)!r} is not a valid SSH target: its {what} holds {shown}",
            hint="host and user names may not hold shell metacharacters, quotes, whitespace, control "
            "characters or ','; nor start with '-' (the same rule as OpenSSH's ssh)",
        )


def _safe(spec: str) -> str:
    return plain(re.sub(r"(://[^:@/]+:)[^@]*@", r"\1***@", spec)[:200])


def _header(tokens: list[str]) -> str:
    return "Match " + (" ".join(shlex.quote(t) for t in tokens) if tokens else "all")


def _criteria(key: str, value: str, where: str) -> list[str]:
    """A Host or Match line as Match criteria (Host patterns are matched against the name as typed,
    which is what `originalhost` does)."""
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise HostError(f"cannot read {where}: {exc}") from None
    if key == "host":
        return ["originalhost", ",".join(words)] if words else ["originalhost", "!*"]
    # `all` is true; combined with other criteria paramiko refuses it, so it is simply dropped.
    return [w for w in words if w.lower() != "all"]


def expand(path: str, scope: list[str] | None = None, depth: int = 0, seen_bytes: list[int] | None = None) -> list[str]:
    """The lines of `path` with every Include replaced by the files it names; `scope` is the condition
    of the block the Include sat in (Match criteria), carried into the included lines."""
    if depth > MAX_INCLUDE_DEPTH:
        raise HostError(f"{path}: Include nested more than {MAX_INCLUDE_DEPTH} levels deep (a loop?)")
    seen_bytes = seen_bytes if seen_bytes is not None else [0]
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise HostError(f"cannot read {path}: {exc.strerror or exc}") from None
    seen_bytes[0] += len(text)
    if len(text) > MAX_CONFIG_BYTES or seen_bytes[0] > 4 * MAX_CONFIG_BYTES:
        raise HostError(f"{path}: ssh_config (with its Includes) larger than {MAX_CONFIG_BYTES >> 20} MiB")
    scope = list(scope or [])
    block: list[str] | None = None  # the criteria of the current Host/Match block of this file
    out: list[str] = []
    for no, raw in enumerate(text.splitlines(), 1):
        m = _SETTING.match(raw)
        if not raw.strip() or raw.lstrip().startswith("#") or not m:
            out.append(raw)
            continue
        key, value = m.group(1).lower(), m.group(2)
        where = f"{path} line {no}"
        if key in ("host", "match"):
            block = _criteria(key, value, where)
            # Unchanged at the top level; under an Include's condition, a Match carrying both.
            out.append(raw if not scope else _header(scope + block))
        elif key == "include":
            try:
                names = shlex.split(value)
            except ValueError as exc:
                raise HostError(f"cannot read {where}: {exc}") from None
            inner = scope + (block or [])
            for name in names:
                name = os.path.expanduser(name)
                if not os.path.isabs(name):
                    name = os.path.join(os.path.expanduser("~/.ssh"), name)
                for found in sorted(glob.glob(name)):
                    if os.path.isfile(found):
                        out += expand(found, inner, depth + 1, seen_bytes)
            # back to the block the Include sat in (OpenSSH restores it after the included files)
            out.append(_header(scope + (block or [])) if block is not None or scope else "Host *")
        else:
            out.append(raw)
    return out


def read_config(path: str, allow_exec: bool):
    """A paramiko SSHConfig for `path` with Includes expanded and `Match exec` guarded."""
    import paramiko

    text = "\n".join(expand(path)) + "\n"

    def refused(param: str, target: str) -> ExecRefused:
        return ExecRefused(
            f"{path}: `Match exec {param}` would run a command to choose the settings for {target}; "
            f"dflash-doctor runs no command from ssh_config",
            hint="pass --allow-ssh-exec to let it run (as ssh "
            "would), or use an ssh_config without it (--ssh-config FILE)",
        )

    class GuardedConfig(paramiko.SSHConfig):
        def _does_match(self, match_list, target_hostname, canonical, final, options):
            # The criteria one by one, as paramiko (and OpenSSH) do: the first that fails ends the test, so
            # an exec runs only when every criterion before it held. Exec is ours: refused, or run with
            # stdin and stdout closed (paramiko's runner would hand it our stdin).
            matched = []
            for c in match_list:
                if c.get("type") != "exec":
                    r = super()._does_match([c], target_hostname, canonical, final, options)
                    if r is True or not r:  # `all` (a hard pass), or a failed criterion
                        return r
                    matched += r
                    continue
                if not allow_exec:
                    raise refused(c.get("param"), target_hostname)
                cmd = self._tokenize(options, target_hostname, "match-exec", c["param"])
                passed = _run_exec(cmd)
                if passed == bool(c.get("negate")):
                    return False
                matched.append(c)
            return matched

    guardable = hasattr(paramiko.SSHConfig, "_does_match") and hasattr(paramiko.SSHConfig, "_tokenize")
    if not guardable and re.search(r"(?im)^\s*match\s.*\bexec\b", text):
        # A paramiko whose matching we cannot take over: no Match exec at all, allowed or not.
        raise refused("…", "any host")
    try:
        return GuardedConfig.from_text(text)
    except Exception as exc:  # paramiko's ConfigParseError and friends: the user's file to fix
        raise HostError(f"cannot read {path}: {exc}") from None


def _run_exec(cmd: str) -> bool:
    """`Match exec`'s command as ssh runs it (through sh here), its stdout discarded; true on exit 0."""

    try:
        res = subprocess.run(["/bin/sh", "-c", cmd], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0


def lookup(alias: str, path: str | None, allow_exec: bool = False) -> dict:
    """Settings for `alias` from `path` (default ~/.ssh/config); {} when there is no config file."""
    path = os.path.expanduser(path or "~/.ssh/config")
    if not os.path.isfile(path):
        return {}
    cfg = read_config(path, allow_exec)
    try:
        return dict(cfg.lookup(alias))
    except HostError:
        raise
    except Exception as exc:  # a Match exec that could not run, a token paramiko cannot expand, …
        raise HostError(f"cannot use {path} for {alias}: {type(exc).__name__}: {exc}") from None
