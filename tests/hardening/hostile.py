"""Hostile text and the checks that output is inert: shared by the terminal and secrets suites."""

from __future__ import annotations

import json
import re

# Each string tries one way to take over a terminal, a Markdown page or a JSON consumer.
HOSTILE_STRINGS = [
    "\x1b[2J\x1b[H",  # clear screen, cursor home
    "\x1b]8;;http://evil.example\x07click me\x1b]8;;\x07",  # OSC 8 hyperlink (BEL)
    "\x1b]8;;http://evil.example\x1b\\x\x1b]8;;\x1b\\",  # OSC 8 hyperlink (ST)
    "\x1b]52;c;cm0gLXJmIH4=\x07",  # OSC 52: write the clipboard
    "\x1b]0;pwned title\x07",  # window title
    "\x1bP+q544e\x1b\\",  # DCS request
    "\x9b31mC1 CSI red\x9b0m",  # 8-bit CSI
    "\x1b[6n",  # cursor position report (answerback)
    "\x1b[?1049h",  # alternate screen
    "\x1bc",  # full reset
    "\u202eevil\u202c txt.exe",  # bidi override
    "\u2066isolate\u2069 \u2067rtl\u2069",  # bidi isolates
    "\u200fRLM \u200eLRM \u061cALM",
    "nul\x00byte bell\x07 backspace\x08\x08 del\x7f vt\x0b ff\x0c",
    "cr\rOVERWRITE",
    "[bold red]MARKUP[/bold red] [link=http://evil]link[/link] [/]",
    "<script>alert(1)</script> <img src=x onerror=alert(1)>",
    "[click](javascript:alert(1)) ![img](http://evil/x.png)",
    "`code` ``` fence | pipe | ~~strike~~ **bold** __u__ &#x202e;entity",
    "line1\n[✓] spoofed-check: everything is fine\n",
    "lone \ud800 surrogate",
    "\ufeffBOM \u200bzero-width \u2028LS \u2029PS",
]

# What must never reach a terminal: C0 controls except \t and \n, DEL, C1, bidi, lone surrogates.
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
SGR = re.compile(r"\x1b\[[0-9;]*m")  # colour, which our own renderer emits when colour is on


def terminal_violations(text: str, color: bool) -> list[str]:
    """Escape sequences or controls in terminal output that did not come from our own colouring."""
    rest = SGR.sub("", text) if color else text
    return sorted({repr(m.group()) for m in FORBIDDEN.finditer(rest)})


def json_violations(text: str) -> list[str]:
    json.loads(text)
    text.encode("utf-8")  # strict: a lone surrogate cannot be written
    return sorted({repr(m.group()) for m in FORBIDDEN.finditer(text)})


def markdown_violations(text: str) -> list[str]:
    bad = sorted({repr(m.group()) for m in FORBIDDEN.finditer(text)})
    # Each construct counts only when its first character is not backslash-escaped.
    for raw in ("<script>", "<img ", "](javascript:", "[link=http", "[bold red]", "&#x202e;", "![img]"):
        if re.search(r"(?<!\\)" + re.escape(raw), text):
            bad.append(f"unescaped {raw!r}")
    return bad
