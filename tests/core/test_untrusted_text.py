"""Untrusted text from a log must print literally: no rich markup, no terminal escapes."""

from dflash_doctor.collect.inputs import FileInputs, gather_files
from dflash_doctor.render import Format, render
from dflash_doctor.services.doctor import build_report
from dflash_doctor.textsafe import plain

HOSTILE = (
    "INFO 05-14 09:00:00 [metrics.py:101] SpecDecoding metrics: [red]BOOM[/red] [link=http://evil]x[/link] "
    "\x1b[2J\x1b]8;;http://evil.example\x07click\x1b]8;;\x07 \u202eevil\x07\n"
)


def _report(tmp_path):
    log = tmp_path / "hostile.log"
    log.write_text(HOSTILE)
    report, _ = build_report(gather_files(FileInputs(logs=[str(log)])))
    return report


def test_markup_and_escapes_in_a_log_line_render_literally(tmp_path):
    out = render(_report(tmp_path), Format.TERMINAL, color=True)
    assert "[red]BOOM[/red]" in out  # markup shown as text, not applied
    assert "[link=http://evil]" in out
    assert "\x1b]8;;" not in out and "\x1b[2J" not in out  # no OSC hyperlink, no clear-screen
    assert "\u202e" not in out and "\x07" not in out


def test_markdown_escapes_untrusted_text(tmp_path):
    out = render(_report(tmp_path), Format.MARKDOWN)
    assert "[red]" not in out.replace("\\[red\\]", "")
    assert "\x1b" not in out


def test_plain_keeps_ordinary_text_and_neutralises_controls():
    assert plain("τ 1.18, [bold]x[/bold]") == "τ 1.18, [bold]x[/bold]"
    assert plain("a\x1b[31mb\x1b[0mc") == "abc"
    assert plain("x\x00y") == "x\\x00y"
