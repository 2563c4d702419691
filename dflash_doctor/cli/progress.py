"""Progress on stderr, as observers of the services: a bar on a terminal, plain lines otherwise, nothing
with TERM=dumb's escapes. The report itself never goes here."""

from __future__ import annotations

import re
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..textsafe import plain


def _bars_allowed(out) -> bool:
    try:
        return sys.stderr.isatty() and not out.quiet and out.settings.color
    except (AttributeError, ValueError):
        return False


class HostProgress:
    """One tick per host checked (hostcheck.check_hosts' on_done)."""

    def __init__(self, out, total: int):
        self.out, self.total = out, total
        self.bar: Progress | None = None
        self.task: TaskID | None = None  # set with the bar
        self.t0 = time.monotonic()

    def __enter__(self):
        if _bars_allowed(self.out):
            self.bar = Progress(
                TextColumn("[bold]checking hosts"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.task = self.bar.add_task("hosts", total=self.total)
            self.bar.start()
        return self

    def __call__(self, result) -> None:
        if self.bar is not None:
            assert self.task is not None  # set with the bar
            self.bar.advance(self.task)
        else:  # a host name is the user's text: escapes in it must not reach the terminal
            self.out.info(f"{plain(result.spec)}: {result.status} ({time.monotonic() - self.t0:.1f} s)")

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


class ProbeProgress:
    """Progress of a probe run, local or streamed back from a host: a rich bar per pass
    ("<label>: prompt i/n") on a terminal, plain lines on stderr otherwise."""

    _STEP = re.compile(r"^(?P<label>.+?): prompt (?P<i>\d+)/(?P<n>\d+)")

    def __init__(self, out):
        self.out = out
        self.bar = None
        self.tasks: dict[str, int] = {}

    def __enter__(self):
        if _bars_allowed(self.out):
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True, markup=False),
                transient=True,
            )
            self.bar.start()
        return self

    def __call__(self, line: str) -> None:
        m = self._STEP.match(line)
        if self.bar is None or m is None:
            self.out.info(line)
            return

        label = plain(m.group("label"), 60)
        if label not in self.tasks:
            self.tasks[label] = self.bar.add_task(Text(label), total=int(m.group("n")))
        self.bar.update(self.tasks[label], completed=int(m.group("i")))

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()
