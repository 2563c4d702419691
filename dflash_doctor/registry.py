"""Discovery of checks: the built-ins shipped as dflash_doctor.checks, plus third-party plugins
registered in the entry-point group ``dflash_doctor.checks``. A broken plugin is a warning."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field
from importlib import metadata

from .check import Check

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
        except (Exception, SystemExit) as exc:  # a plugin's constructor may do anything, sys.exit() included
            self.warnings.append(f"check {cid} from {origin} failed to start and was skipped: {_what(exc)}")
            return
        self.checks.append(check)
        self.origins[cid] = origin


def _what(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


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
    if include_plugins:
        try:
            eps = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
        except Exception as exc:  # pragma: no cover
            reg.warnings.append(f"could not read entry points: {exc}")
            eps = []
        for ep in eps:
            origin = f"plugin {ep.name} ({ep.value})"
            try:
                obj = ep.load()
            except (Exception, SystemExit) as exc:  # sys.exit() at import must not end the run (a gate passing on 0)
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
