"""redact_text runs its key patterns only in windows around key words, and its literal patterns only
when their literal is present. Its output must be exactly what running every pattern over the whole
text gives (the plain definition, kept here as the reference)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from dflash_doctor import redact as R

ROOT = Path(__file__).resolve().parents[2]


def reference(text: str) -> str:
    for rule in R.RULES:
        text = rule.pattern.sub(rule.repl, text)
    return text


KEYS = [
    "api_key",
    "API-KEY",
    "--api-key",
    "--hf-token",
    "hf_token",
    "token",
    "tokens",
    "num_speculative_tokens",
    "password",
    "passwd",
    "secret",
    "DB_PASS",
    "bypass",
    "pwd",
    "--pass",
    "AccountKey",
    "session_key",
    "client_secret",
    "secret_key",
    "credentials",
    "credential",
    "AUTH_KEY",
    "private-key",
    "access_token",
    "tokenizer",
    "x.token",
    "İ_token",
    "keys",
    "monkey",
    "authorization",
    "Authorization: Basic",
    "Bearer",
    '"password"',
    "'token'",
]
SEPS = [
    ":",
    "=",
    " ",
    "  ",
    "\n",
    "\n\n   ",
    "'",
    '"',
    "[",
    "]",
    ", ",
    "\\",
    "{",
    "}",
    "\t",
    ": [",
    "=\n  ",
    '\\"',
    "', '",
    '",\n    "',
    '\\", \\"',
    "\n  - ",
    "\n- '",
]
VALUES = [
    "Wt5Lk8Zr3Qx7Nv2Jm9Hb/4Yc6Pd1Fs0Ga8Ke3Rw5",
    "Cookie: a=b",
    "-----BEGIN EC PRIVATE KEY-----",
    "sk-abcdefghijklmnopqrstu",
    "hf_ABCDEFGHIJKLMNOPQRSTUVWX",
    "abc",
    "x y z",
    "null",
    "8192",
    "A" * 300,
    "AKIAABCDEFGHIJKLMNOP",
    "ghp_" + "a" * 36,
    "xoxb-1234567890",
    "https://u:pw@host/x",
    "s3cr3t!",
    "'a', 'b'",
    '"q\\"uoted"',
    "-" * 40,
    "x" * 5000,
    # the rules without a literal (run only where their `need` is found)
    "AC" + "0123456789abcdef" * 2,
    "SK" + "0123456789abcdef" * 2,
    "AC0123456789abcdef",
    "MTk4NjIyNDgzNDcxOTI1MjQ4." + "Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    ".ZnCjm1XVW7vRze4b7Cq4se7kKWs-x",
    "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
    "12345678:",
    ":" + "A" * 40,
]
FILL = ["INFO ", "launched with ", "the ", "é", "\u0130", "0.155, 0.018", "(APIServer pid=1) ", "\n"]

fragments = st.sampled_from(KEYS + SEPS + VALUES + FILL)


@given(st.lists(fragments, max_size=40))
def test_windows_give_what_the_whole_text_gives(parts):
    text = "".join(parts)
    assert R.redact_text(text) == reference(text)


@given(st.text(alphabet=st.sampled_from(list("atokenkeysecrpwd_-:= \n'\"[]\\,{}x0İ")), max_size=300))
def test_windows_on_dense_key_soup(text):
    assert R.redact_text(text) == reference(text)


def test_each_need_is_a_part_of_every_match_of_its_rule():
    samples = {
        "Twilio key": ["AC" + "0123456789abcdef" * 2, "x SK" + "f" * 32 + " y"],
        "Discord bot token": [
            "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
            "\\nN" + "a" * 25 + ".bbbbbb." + "c" * 38,
        ],
        "Telegram bot token": ["123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq", "x 1234567890:" + "-" * 35],
    }
    # the command-line credential rules: their examples in the one-test-per-rule table
    from tests.hardening.test_redaction_rules import EXAMPLES

    for rule in R.RULES:
        if rule.need is not None and rule.name not in samples:
            samples[rule.name] = [text for text, _, _ in EXAMPLES.get(rule.name, ())]
    for rule in R.RULES:
        if rule.need is None:
            continue
        assert samples.get(rule.name), f"{rule.name}: a `need` without samples here"
        for text in samples[rule.name]:
            m = rule.pattern.search(text)
            assert m, (rule.name, text)
            assert rule.need.search(m.group(0)), (rule.name, text)
            assert R.REDACTED in R.redact_text(text)


def test_every_fixture_and_rendered_report_is_redacted_the_same():
    files = [
        p
        for d in ("fixtures", "tests/golden", "docs")
        for p in (ROOT / d).rglob("*")
        if p.is_file() and p.suffix in (".log", ".txt", ".json", ".jsonl", ".md", ".toml", ".prom")
    ]
    assert len(files) > 20
    for p in files:
        text = p.read_text("utf-8", "replace")
        assert R.redact_text(text) == reference(text), p


def test_a_long_gap_of_whitespace_between_key_and_value():
    text = "api_key" + " " * 9000 + "=" + "\n" * 300 + "  'sk-abcdefghijklmnopqrstu' and then " + "y" * 2000
    assert R.redact_text(text) == reference(text)
    assert "sk-abc" not in R.redact_text(text)


def test_a_list_opened_before_a_newline():
    """`key: [` then the value on the next line: the window must reach past the newline after `[`."""
    text = "api_key: [\n0.155, 0.018\nother: 1"
    assert R.redact_text(text) == reference(text)
    assert "0.155" not in R.redact_text(text)
