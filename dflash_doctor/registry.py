"""Discovery of checks: the built-ins shipped as dflash_doctor.checks, plus third-party plugins
registered in the entry-point group ``dflash_doctor.checks``. A broken plugin is a warning."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import stat
import sys
from dataclasses import dataclass, field
from importlib import metadata

from .check import Check, describe_crash
from .evidence import PAYLOAD_TYPES

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
        assert isinstance(cid, str)  # (its id was checked just above)
        wanted = (*getattr(check_cls, "needs", ()), *getattr(check_cls, "wants", ()))
        if not all(k in PAYLOAD_TYPES.values() for k in wanted):  # a Kind or a name: the runner could not look it up
            self.warnings.append(f"check {cid} from {origin} needs something that is not a payload type; skipped")
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


MAX_ENTRY_POINTS = 1 << 20


def unsafe_entry_points() -> str | None:
    """An installed distribution's entry_points.txt that importlib.metadata must not read, said as one phrase:
    one that is not a regular file (a FIFO hung every command; one linked to /dev/zero read until a MemoryError)
    or is larger than any real one. Only stat is used, which neither blocks nor reads."""
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:
            continue  # (not a folder: a zip or an egg file, read by importlib.metadata itself)
        for name in names:
            if not name.lower().endswith((".dist-info", ".egg-info")):
                continue
            ep = os.path.join(folder, name, "entry_points.txt")
            try:
                st = os.stat(ep)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                return f"{ep} is not a regular file"
            if st.st_size > MAX_ENTRY_POINTS:
                return f"{ep} is larger than {MAX_ENTRY_POINTS} bytes"
    return None


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
    unsafe = unsafe_entry_points() if include_plugins else None
    if unsafe:
        reg.warnings.append(f"plugins not loaded: {unsafe} (reading it would block or exhaust memory)")
    if include_plugins and not unsafe:
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
