"""Terminal text made of records: one record per logical line, wrapped only on a terminal.

On a terminal (or with COLUMNS set) a record wraps at the width with its continuation lines indented
under the record's text (a hanging indent); piped, a record is exactly one line, so `grep` finds it whole.
A command (a `Cmd` part, or text in backticks) is never broken: it is one word, moved whole to the next line,
and one longer than the width stands on its own line past the edge (a terminal shows it soft-wrapped, and
it pastes whole). No line ends in spaces. Colour comes from rich styles and is dropped entirely when not allowed.

Untrusted text always enters as plain text (`textsafe.plain`), never as markup.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from ..textsafe import plain
from .style import Style

__all__ = ["Cmd", "Page", "Style", "t", "rstrip_lines", "TABLE_WIDTH_PIPED"]


class Cmd(str):
    """A command to paste: laid out as one unbreakable word."""


Part = str | tuple[str, str] | Text


def t(text: object, style: str = "") -> Text:
    """Untrusted text as one inert field: no escapes, no newline that could forge a record of its own."""
    return Text(plain(text).replace("\r", " ").replace("\n", " ⏎ "), style=style)


def _text(parts: Iterable[Part]) -> tuple[Text, list[tuple[int, int]]]:
    """The record's text, and the spans (start, end) of the commands in it."""
    out = Text()
    keep: list[tuple[int, int]] = []
    for p in parts:
        start = len(out.plain)
        if isinstance(p, Text):
            out.append_text(p)
        elif isinstance(p, tuple):
            out.append_text(t(p[0], p[1]))
            if isinstance(p[0], Cmd):
                keep.append((start, len(out.plain)))
        else:
            out.append_text(t(p))
            if isinstance(p, Cmd):
                keep.append((start, len(out.plain)))
    return out, keep


_WORD = re.compile(r"\S+\s*")
_TICKED = re.compile(r"`[^`\n]+`")


def _masked(s: str, keep: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """`s` with the spaces inside commands (given, or in backticks) made part of one word, and those spans."""
    spans = sorted({*keep, *((m.start(), m.end()) for m in _TICKED.finditer(s))})
    chars = list(s)
    for a, b in spans:
        for i in range(a, b):
            if chars[i] == " ":
                chars[i] = "_"
    return "".join(chars), spans


def _breaks(s: str, width: int, hang: int, keep: list[tuple[int, int]] | None = None) -> list[int]:
    """Offsets where a new line starts: greedy word wrap; a word longer than a line is folded, unless it is
    (or holds) a command: that is never cut."""
    s, spans = _masked(s, keep or [])
    offsets: list[int] = []
    col = len(s) - len(s.lstrip(" "))
    has_word = False
    for m in _WORD.finditer(s):
        word = m.group().rstrip()
        start = m.start()
        if has_word and col + cell_len(word) > width:
            offsets.append(start)
            col, has_word = hang, False
        i = 0
        whole = any(a < start + len(word) and start < b for a, b in spans)
        while not whole and col + cell_len(word[i:]) > width and len(word) - i > 1:
            room, take, used = width - col, 0, 0
            while i + take < len(word) - 1 and used + cell_len(word[i + take]) <= room:
                used += cell_len(word[i + take])
                take += 1
            i += max(1, take)
            offsets.append(start + i)
            col = hang
        col += cell_len(word[i:]) + len(m.group()) - len(word)
        has_word = True
    return sorted({o for o in offsets if 0 < o < len(s)})


class Page:
    """Records in, text out."""

    def __init__(self, style: Style):
        self.style = style
        self._out: list[Text] = []

    def blank(self) -> None:
        if self._out and self._out[-1].plain != "":
            self._out.append(Text(""))

    def line(self, *parts: Part, hang: int | None = None) -> None:
        """One record. `hang`: the column continuation lines start at (default: where the text after the
        record's leading spaces and first marker word starts)."""
        text, keep = _text(parts)
        text.rstrip()
        width = self.style.width
        if width is None or cell_len(text.plain) <= width:
            self._out.append(text)
            return
        s = text.plain
        if hang is None:  # under the text after the record's indent and a short marker ("✓ ", "1. ", "+ ")
            m = re.match(r"\s*(?:\S{1,3}\s+)?", s)
            hang = max(2, len(m.group()) if m else 0)
        hang = min(hang, max(0, width // 2))
        offsets = _breaks(s, width, hang, keep)
        pieces = text.divide(offsets) if offsets else [text]
        for i, piece in enumerate(pieces):
            if i:
                piece = Text(" " * hang) + _lstrip(piece)
            piece.rstrip()
            self._out.append(piece)

    def text(self) -> str:
        buf = io.StringIO()
        color = self.style.color
        console = Console(
            file=buf,
            force_terminal=color,
            color_system="standard" if color else None,
            no_color=not color,
            width=100_000,
            soft_wrap=True,
            highlight=False,
            markup=False,
            emoji=False,
        )
        while self._out and self._out[-1].plain == "":
            self._out.pop()
        for line in self._out:
            console.print(line, soft_wrap=True)
        return "\n".join(x.rstrip(" ") for x in buf.getvalue().rstrip("\n").split("\n"))


def _lstrip(text: Text) -> Text:
    n = len(text.plain) - len(text.plain.lstrip(" "))
    return text[n:] if n else text


# Rich tables need a width; piped (no wrapping asked for) they get a wide one, and lose their padding spaces.
TABLE_WIDTH_PIPED = 200


def rstrip_lines(text: str) -> str:
    """No line ends in spaces (rich pads table cells)."""
    return "\n".join(line.rstrip(" ") for line in text.split("\n"))
