"""Discovery of checks: the built-ins shipped as dflash_doctor.checks, plus third-party plugins
registered in the entry-point group ``dflash_doctor.checks``. A broken plugin is a warning."""

from __future__ import annotations

import errno
import importlib
import inspect
import os
import pkgutil
import sys
from dataclasses import dataclass, field

from .check import Check, describe_crash
from .safeio import NotRegularFile, read_regular

ENTRY_POINT_GROUP = "dflash_doctor.checks"


@dataclass
class CheckRegistry:
    checks: list[Check] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)  # check id -> "builtin" | plugin name

    def add(self, check_cls: type[Check], origin: str) -> None:
        cid = getattr(check_cls, "id", None)
        for attr in ("id", "area", "title"):
            if not isinstance(getattr(check_cls, attr, None), str):
                self.warnings.append(f"check {check_cls.__name__} from {origin} has no '{attr}'; skipped")
                return
        if cid in self.origins:
            self.warnings.append(f"check id '{cid}' from {origin} is already provided by {self.origins[cid]}; skipped")
            return
        try:
            check = check_cls()
        except BaseException as exc:  # a plugin's constructor may do anything, sys.exit() included
            if isinstance(exc, KeyboardInterrupt):
                raise
            self.warnings.append(f"check {cid} from {origin} failed to start and was skipped: {_what(exc)}")
            return
        self.checks.append(check)
        self.origins[cid] = origin


def _what(exc: BaseException) -> str:
    return describe_crash(exc)


class UnsafeEntryPoints(Exception):
    """An entry_points.txt that cannot be read safely: not a regular file, or larger than any real one."""


MAX_ENTRY_POINTS = 1 << 20


def group_declared(group: str) -> bool | None:
    """Whether an installed distribution declares entry points in `group`, read the way importlib.metadata
    finds them (each sys.path folder's *.dist-info / *.egg-info, an egg folder's EGG-INFO) without
    importing it (~10-20 ms a run, most of a `logs` run's plugin discovery). None when that reading may not
    be the whole answer (a sys.path entry that is no folder, a finder of distributions of its own): then
    importlib.metadata answers."""
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return None
    header = f"[{group}]"
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return None  # (a zip or an egg file: importlib.metadata reads inside it)
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        egg = folder.lower().endswith(".egg")  # (an egg on sys.path: its EGG-INFO)
        for name in names:
            low = name.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or egg and low == "egg-info"):
                continue
            ep = os.path.join(folder, name, "entry_points.txt")
            try:
                text = read_regular(ep, MAX_ENTRY_POINTS).decode("utf-8", "replace")
            except (NotRegularFile, OSError) as exc:
                # A FIFO hung every command here (and /dev/zero read until a MemoryError); importlib.metadata
                # would read the same file the same way: no plugin discovery at all then.
                if isinstance(exc, NotRegularFile) or exc.errno == errno.EFBIG:
                    raise UnsafeEntryPoints(f"{ep} is {exc.strerror}") from None
                continue
            if _declares(text, header):
                return True
    return False


def _declares(text: str, header: str) -> bool:
    """An entry_points.txt holds at least one entry under `header`."""
    inside = False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            inside = line == header
        elif inside and line and not line.startswith(("#", ";")):
            return True
    return False


def _check_classes(module) -> list[type[Check]]:
    found = []
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if (
            issubclass(obj, Check)
            and obj is not Check
            and not inspect.isabstract(obj)
            and obj.__module__ == module.__name__
        ):
            found.append(obj)
    return sorted(found, key=lambda c: c.id)


def load_checks(include_plugins: bool = True) -> CheckRegistry:
    reg = CheckRegistry()
    builtin = importlib.import_module("dflash_doctor.checks")
    for info in sorted(pkgutil.iter_modules(builtin.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"dflash_doctor.checks.{info.name}")
        except (Exception, SystemExit) as exc:  # pragma: no cover - a built-in that fails to import is a bug
            reg.warnings.append(f"built-in check module {info.name} failed to import: {_what(exc)}")
            continue
        for cls in _check_classes(module):
            reg.add(cls, "builtin")
    try:
        declared = group_declared(ENTRY_POINT_GROUP) if include_plugins else False
    except UnsafeEntryPoints as exc:
        reg.warnings.append(f"plugins not loaded: {exc} (reading it would block or exhaust memory)")
        declared = False
    if declared is not False:
        from importlib import metadata

        try:
            eps = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
        except Exception as exc:  # pragma: no cover
            reg.warnings.append(f"could not read entry points: {exc}")
            eps = []
        for ep in eps:
            origin = f"plugin {ep.name} ({ep.value})"
            try:
                obj = ep.load()
            except BaseException as exc:  # sys.exit() at import must not end the run (a gate passing on 0)
                if isinstance(exc, KeyboardInterrupt):
                    raise
                reg.warnings.append(f"{origin} failed to load and was skipped: {_what(exc)}")
                continue
            if inspect.isclass(obj) and issubclass(obj, Check):
                reg.add(obj, origin)
            elif inspect.ismodule(obj):
                classes = _check_classes(obj)
                if not classes:
                    reg.warnings.append(f"{origin} defines no checks")
                for cls in classes:
                    reg.add(cls, origin)
            else:
                reg.warnings.append(f"{origin} is neither a Check subclass nor a module; skipped")
    return reg
