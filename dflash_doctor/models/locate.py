"""Turn what the user typed (a directory, a config.json, or a Hugging Face repo id) into a checkpoint
directory, without touching the network.

Repo ids resolve only in the local Hugging Face cache, through huggingface_hub's cache API
(`try_to_load_from_cache`), honouring HF_HUB_CACHE and HF_HOME as they are when we are called.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass

from ..errors import DoctorError, ExitCode, UsageError
from ..textsafe import command
from .files import FileAccess, LocalFiles, describe_os_error

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")


@dataclass(frozen=True)
class Checkpoint:
    spec: str  # what the user typed
    directory: str
    config_path: str
    repo_id: str | None = None  # set when resolved from the HF cache
    revision_dir: str | None = None


def hf_cache_dir(files: FileAccess | None = None) -> str:
    """The hub cache dir this machine's files are looked up in: the one Settings resolved (HF_HUB_CACHE >
    HF_HOME/hub > XDG_CACHE_HOME/huggingface/hub), else huggingface_hub's own default."""
    cache = getattr(files, "hf_cache", None)
    if cache:
        return cache
    from huggingface_hub.constants import HF_HUB_CACHE

    return HF_HUB_CACHE


def locate(spec: str, files: FileAccess | None = None, role: str = "drafter") -> Checkpoint:
    files = files or LocalFiles()
    path = os.path.expanduser(spec) if isinstance(files, LocalFiles) else spec
    if files.exists(path):
        if files.is_dir(path):
            return Checkpoint(spec, path, posixpath.join(path, "config.json"))
        if posixpath.basename(path).endswith(".json"):
            return Checkpoint(spec, posixpath.dirname(path) or ".", path)
        raise UsageError(
            f"{role} {spec!r} is neither a checkpoint directory nor a config.json",
            hint="give the checkpoint directory, its config.json, or a cached repo id (org/name)",
        )
    if isinstance(files, LocalFiles) and _REPO_ID.match(spec) and not spec.startswith((".", "/")):
        return _from_hf_cache(spec, role, hf_cache_dir(files))
    raise UsageError(
        f"{role} {spec!r} not found",
        hint="give a checkpoint directory, its config.json, or a repo id already in the local Hugging Face cache",
    )


def _from_hf_cache(repo_id: str, role: str, cache: str) -> Checkpoint:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - a declared dependency
        raise DoctorError(
            "huggingface_hub is not installed, so repo ids cannot be resolved",
            hint="pass the checkpoint directory instead",
        ) from None
    download = command("hf", "download", repo_id, "--include", "*.json", "*.safetensors", "README.md")
    fetch = (
        f"fetch it first (this tool never downloads): {download}  (or huggingface-cli download …), "
        "or pass the checkpoint directory"
    )
    try:
        found = try_to_load_from_cache(repo_id, "config.json", cache_dir=cache)
    except OSError as exc:
        raise DoctorError(
            f"{role} {repo_id}: cannot read the Hugging Face cache at {cache}: {describe_os_error(exc)}",
            hint=fetch,
            exit_code=ExitCode.NOT_CHECKED,
        ) from None
    except Exception as exc:  # invalid repo id by the hub's rules, corrupt refs
        raise UsageError(f"{role} {repo_id!r} cannot be looked up in the cache: {type(exc).__name__}: {exc}") from None
    if not isinstance(found, str):
        broken = _broken_snapshot_link(cache, repo_id)
        if broken:
            raise DoctorError(
                f"{role} {repo_id}: config.json in the Hugging Face cache is unusable ({broken})",
                hint=f"repair the cache entry: {fetch}",
                exit_code=ExitCode.NOT_CHECKED,
            )
        raise DoctorError(
            f"{role} {repo_id} is not in the local Hugging Face cache ({cache})",
            hint=fetch,
            exit_code=ExitCode.NOT_CHECKED,
        )
    snapshot = os.path.dirname(found)
    return Checkpoint(repo_id, snapshot, found, repo_id=repo_id, revision_dir=snapshot)


def _broken_snapshot_link(cache: str, repo_id: str) -> str | None:
    """Why a cached config.json exists as a link but cannot be opened (loop, dangling), if it does.

    try_to_load_from_cache reports such a file as simply absent; saying "not in the cache" would send
    the user to download again when the cache itself is damaged.
    """
    from huggingface_hub.constants import REPO_ID_SEPARATOR

    snaps = os.path.join(cache, "models" + REPO_ID_SEPARATOR + repo_id.replace("/", REPO_ID_SEPARATOR), "snapshots")
    try:
        revisions = sorted(os.listdir(snaps))[:64]
    except OSError:
        return None
    for rev in revisions:
        path = os.path.join(snaps, rev, "config.json")
        if os.path.lexists(path) and not os.path.isfile(path):
            try:
                os.stat(path)
            except OSError as exc:
                return f"{path}: {describe_os_error(exc)}"
            return f"{path}: not a regular file"
    return None
