"""Secret redaction: the one redactor. Every renderer passes its output through `redact_text` (and
`textsafe.plain` runs it on each untrusted field before escaping, wrapping or truncating it); collectors
redact structured values (argument dicts, environments) with `redact_mapping` as they gather them.

What it finds is the rule table below (`RULES`), one entry per kind of secret. The list follows the
plugins of Yelp's detect-secrets (keyword, basic auth, private key, JWT, AWS, Azure storage, GitHub,
GitLab, Slack, npm, PyPI, SendGrid, Stripe, Twilio, Mailchimp, Square, Artifactory, Discord,
Telegram, OpenAI) plus the prefixes this tool's users leak most (Hugging Face, Anthropic, GCP, Azure AD,
signed URLs, cookies). Entropy detectors are deliberately left out: reports cite sha256 digests of
weights and git revisions, which are evidence, not secrets.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REDACTED = "***REDACTED***"

# Key names whose values are secrets: the last word of the key decides (see is_secret_key).
_SECRET_KEY = re.compile(
    r"(?i)(api[_-]?key|hf[_-]?token|huggingface[_-]?hub[_-]?token|access[_-]?token|auth[_-]?token|"
    r"token|secret|password|passwd|passphrase|credential|private[_-]?key|aws_secret_access_key|authorization|"
    r"(?:session|account|master|encryption|signing)[_-]?key|pwd|sshpass|rediscli_auth)"
)
_PASS_KEY = re.compile(r"(?i)(?:^|[_.-])pass$")

# The last word of a key whose value is a secret. Matches start only where a key can start ((?<![\w.-]))
# and the key is at most 64 + a few characters, so a long run of word characters costs linear time with a
# small constant (measurements: docs/performance.md, "Redaction").
_ENDING = (
    r"(?:(?:api|access|private|secret|auth|session|account|master|encryption|signing)[_-]?key"
    r"|token|secret|password|passwd|passphrase|pass|pwd|credentials?)"
)
_KEY = r"(?<![\w.-])[\w.-]{0,64}" + _ENDING + r"(?![\w-])"
_FLAG = r"(?<![\w.-])--[\w.-]{0,64}" + _ENDING + r"(?![\w-])"

_GAP = r"(?:\s|\\[nrt])*"  # whitespace, also as a JSON string escapes it (an indented list inside a string)

_KEY_NAME = re.compile(r"[\w.-]+")
_PLAIN_LITERALS = {"null", "none", "true", "false"}


def _secret_name(pre: str) -> bool:
    names = _KEY_NAME.findall(pre)
    return is_secret_key(names[0].lstrip("-").replace("-", "_")) if names else False


def _list_value(m: re.Match) -> str:
    # Keep the list's own quote style so a JSON document stays JSON.
    if not _secret_name(m.group("pre")):
        return m.group(0)
    q = '"' if '"' in m.group(0)[len(m.group("pre")) :] else "'"
    return f"{m.group('pre')}[{q}{REDACTED}{q}]"


def _quoted_value(m: re.Match) -> str:
    if not _secret_name(m.group("pre")):
        return m.group(0)
    return f"{m.group('pre')}{m.group('q')}{REDACTED}{m.group('q')}"


def _after_key(m: re.Match) -> str:
    # `"num_speculative_tokens": null` or `max_tokens=1024` are not secrets, and replacing a JSON
    # null or number with an unquoted marker would break the JSON document being rendered.
    if not _secret_name(m.group("pre")) or m.group("val").lower() in _PLAIN_LITERALS:
        return m.group(0)
    return m.group("pre") + REDACTED


@functools.cache
def _rx(source: str) -> re.Pattern[str]:
    """A rule's regex, compiled when a text first needs it: most rules' gate literals are in no report,
    so most never are (compiling all ~100 took 14 ms of every command's start, `--version` included)."""
    return re.compile(source)


@dataclass(frozen=True)
class Rule:
    """One kind of secret. `gate`: lower-case literals one of which the text must hold for the rule to
    run at all (cheap `in` tests); None marks a key rule, run only in windows around key words.
    `need`: for a rule without a literal, a part of every match found far faster than the whole
    pattern (it starts with a literal or a small set of them): the rule runs only where it is found.
    Patterns are given as regex text; `pattern` and `need` are the compiled regexes."""

    name: str
    source: str
    repl: str | Callable[[re.Match], str]
    gate: tuple[str, ...] | None
    need_source: str | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        return _rx(self.source)

    @property
    def need(self) -> re.Pattern[str] | None:
        return None if self.need_source is None else _rx(self.need_source)


# A token starts here: not inside a longer word, but right after an escaped newline or tab (`\\n` in JSON).
_B = r"(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))"
_AFTER_MARKER = ("***redacted***",)  # the gate of a rule that reads what other rules wrote
_AWS_ID = r"(?:AKIA|ASIA)[A-Z0-9]{16}"
_AWS_SECRET = r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
# PEM-armoured private keys (PKCS#1/#8, OpenSSH, EC, DSA, encrypted, PGP, SSH2): the whole block up to
# its END line, or, cut short (a file read up to a byte cap), the armoured body that follows. The body
# may hold real or JSON-escaped newlines and header lines (Proc-Type, DEK-Info), never a quote, so a
# redacted JSON string stays a string.
_PEM_BODY = r"[A-Za-z0-9+/=\s:,.\\-]"
# (The dashes may have lost their start, or become underscores, where a launch line's words were read as flags.)
_PEM = (
    r"(?:-{4,5} ?)?BEGIN (?P<kind>[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?) ?[-_]{4,5}(?![-_])(?!\*\*\*REDACTED)"
    + _PEM_BODY
    + r"{0,65536}?(?:[-_]{4,5} ?END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?[-_]{4,5}"
    r"|(?=[^A-Za-z0-9+/=\s:,.\\-])|\Z)"
)

# -- credentials on the command lines of common tools (a log or a launch line quoting a shell command) -----
# Between two argv words: spaces, or a list's separator (`', '`, `", "`, JSON-escaped `\", \"`, a JSON list
# over lines, a YAML `- ` list): the previous word's closing quote is taken, the next word's opening one is not.
_ARGSEP = r"""(?:\\?['"])?(?:[ \t]*,\s*|\s*\n[ \t]*-[ \t]+|\s+)"""
# From a tool's name to its flag: the rest of the line, or of a list the command was split into (a new line
# counts only where it starts with a list item: a quote, or `- `).
_TOOL_GAP = r"""(?:[^\n]|\n[ \t]*(?=\\?['"]|-[ \t]))"""
_WORD = r"""(?:\\?['"])?[^\s'"\\]{1,256}"""  # a word before the value (a file, a user name), in any quoting


def _argval_rx(keep: str = "", bare: str = r"""[^\s'"\\]""") -> str:
    """A word's value: quoted (up to its closing quote, which stays) or bare (up to a space or a quote).
    `keep`: what it starts with that is no secret (curl's `user:`, openssl's `pass:`, htpasswd's file and
    user), after the opening quote."""
    return (
        r"""(?P<q>\\?['"])?(?P<keep>""" + keep + r""")"""
        r"""(?(q)(?:(?!(?P=q))[^\n]){1,256}?(?=(?P=q))|""" + bare + r"""{1,256})"""
    )


# An attached value (`-pPW`, `-p'PW'`, `-p"PW"`): a quoted one only where its closing quote ends the word (in
# `['mysql', '-p', 'db']` the quote after `-p` closes the flag's own word).
_ATTACHED_VALUE = r"""(?:(?P<q>\\?['"])(?P<keep>)[^'"\\\n]{1,256}(?=(?P=q)(?![^\s;|&)\]'",\\]))|[^\s'"\\]{1,256})"""


_BAD_NEWLINE = re.compile(r"""\n(?![ \t]*(?:\\?['"]|-[ \t]))""")


def _cli(
    name: str,
    tools: str,
    flags: str,
    gate: tuple[str, ...],
    *,
    attached: bool = True,
    attached_only: bool = False,
    keep: str = "",
    skip: int = 0,
    need: str | None = None,
) -> Rule:
    """The rule for `TOOL … FLAG VALUE` on one line (or one argv list), in any serialisation. `attached`:
    `-pVALUE` counts too (`attached_only`: only that); `keep`: what the value starts with that is no secret
    (curl's `user:`); `skip`: words between the flag and the value (htpasswd's file and user).

    The pattern starts at the flag; the tool's name is looked for in the 300 characters before it, back to
    a line break that does not start a list item, so the cost is linear whatever the text (a pattern starting
    at the tool, with a gap up to the flag, was not: docs/performance.md). It runs only where a tool name
    (`gate`) and the flag (`need`) are both present."""
    sep = "" if attached_only else r"""(?:=|""" + _ARGSEP + (r"|)" if attached else ")")
    words = f"(?:{_WORD}{_ARGSEP}){{{skip}}}" if skip else ""
    value = _ATTACHED_VALUE if attached_only else _argval_rx(keep)
    pattern = r"(?P<pre>(?<![\w-])(?:" + flags + r")" + sep + words + r")" + value
    if not tools:
        return Rule(name, pattern, _argval, gate, need or flags)
    tool = r"(?<![\w./-])(?:" + tools + r")(?![\w-])"

    def repl(m: re.Match) -> str:
        text, start = m.string, m.start()
        lo = max(0, start - 300)
        cut = max((b.start() for b in _BAD_NEWLINE.finditer(text, lo, start)), default=lo - 1)
        return _argval(m) if _rx(tool).search(text, cut + 1, start) else m.group(0)

    return Rule(name, pattern, repl, gate, need or flags)


def _argval(m: re.Match) -> str:
    g = m.groupdict()
    return g["pre"] + (g.get("q") or "") + (g.get("keep") or "") + REDACTED


# htpasswd's options before FILE [USER]: words of flags, `-C COST` / `-r ROUNDS` taking a number (at most 8 more
# words: bounded, so a line of many `-b` costs linear time).
_HT_Q = r"""(?:\\?['"])?"""  # a word's opening quote (in an argv list)
_HT_NUM = r"(?:(?<=[Cr])" + _ARGSEP + _HT_Q + r"\d{1,9})?"
_HT_MORE = "(?:" + _ARGSEP + _HT_Q + r"-[A-Za-z0-9]+" + _HT_NUM + "){0,8}"
_HT_B, _HT_N = r"-[A-Za-z0-9]*b[A-Za-z0-9]*", r"-[A-Za-z0-9]*n[A-Za-z0-9]*"
_HT_BETWEEN = "(?:" + _ARGSEP + _HT_Q + r"-[A-Za-z0-9]+" + _HT_NUM + "){0,8}?" + _ARGSEP + _HT_Q
_HTPASSWD_B = r"-(?![A-Za-z0-9]*n)[A-Za-z0-9]*b[A-Za-z0-9]*" + _HT_NUM + _HT_MORE
_HTPASSWD_NB = (
    r"(?:-(?=[A-Za-z0-9]*n)[A-Za-z0-9]*b[A-Za-z0-9]*|"  # -nb, -Bnb
    + _HT_N
    + _HT_BETWEEN
    + _HT_B  # -n -B -b
    + "|"
    + _HT_B
    + _HT_BETWEEN
    + _HT_N  # -b -n
    + ")"
    + _HT_NUM
    + _HT_MORE
)


_MIXED = re.compile(r"(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9])")


def _aws_secret_after_marker(m: re.Match) -> str:
    """An AWS secret's shape (40 base64 characters with upper case, lower case and a digit: not a hex digest)
    within 300 characters after a redaction marker (this rule runs after the key id's own)."""
    secret, start = m.group(), m.start()
    if _MIXED.match(secret) and m.string.find(REDACTED, max(0, start - 300 - len(REDACTED)), start) >= 0:
        return REDACTED
    return secret


RULES: tuple[Rule, ...] = (
    # -- key rules (windowed): values named by their key, in every serialisation ----------------------
    # 'api_key': ['k1', 'k2'] -> every element, not only the first (also a JSON list over several lines).
    Rule("secret list", r"(?i)(?P<pre>" + _KEY + r"""['"]?\s*[:=]\s*)\[[^\]]{0,4000}\]""", _list_value, None),
    # password: "several words", --api-key 'a b' -> the whole quoted value (also JSON-escaped: \"…\").
    Rule(
        "quoted secret",
        r"(?i)(?P<pre>(?:" + _KEY + r"""['"]?\s*[:=]\s*|""" + _FLAG + r"""(?:\s*=\s*|\s+)))"""
        r"""(?P<q>\\?['"])(?:\\.|[^'"\\\n]){1,4000}?(?P=q)""",
        _quoted_value,
        None,
    ),
    # argv as a list: ['--api-key', 'X'] (Python), ["--api-key", "X"] (JSON, also over lines), \"--api-key\", \"X\".
    Rule(
        "flag in an argv list",
        r"(?i)(?P<pre>"
        + _FLAG
        + r"""(?P<q>\\?['"])\s*,"""
        + _GAP
        + r"""(?P=q))(?P<val>(?:\\.|[^'"\\\n]){1,4000}?)(?=(?P=q))""",
        _after_key,
        None,
    ),
    # argv as a YAML block list (Kubernetes `args:`): `- --api-key` then `- X` on the next line.
    Rule(
        "flag in a YAML list",
        r"""(?i)(?P<pre>""" + _FLAG + r"""['"]?[ \t]*(?:\r?\n|\\n)[ \t]*-[ \t]+['"]?)(?P<val>[^\s'"\\]{1,4000})""",
        _after_key,
        None,
    ),
    # key=value / key: value / 'key': 'value' / --key value / --key=value.
    # "token" must be singular and end the key: max_num_batched_tokens=8192 or num_spec_tokens=15 are counts.
    Rule(
        "key = value",
        r"""(?ix)
        (?P<pre>(?:"""
        + _FLAG
        + r"""(?:\s*=\s*|\s+)
                 |"""
        + _KEY
        + r"""['"]?\s*[:=]\s*)
           (?:\[\s*)?['"]?)
        (?P<val>[^\s'",}\])]{3,})""",
        _after_key,
        None,
    ),
    # -- credentials given to common tools on their command line ------------------------------------------
    # (`--password X`, `--token X`, `--api-key X`, `--passphrase X`, `PGPASSWORD=X`, `MYSQL_PWD=X` are key rules.)
    # (`-u` may end a cluster of short flags: `curl -sSu alice:PW`)
    _cli(
        "curl user:password",
        "curl",
        r"-[A-Za-z]*[uU]|--user|--proxy-user",
        ("curl",),
        keep=r"[^\s:'\"\\]{0,256}:",
        need=r"-[A-Za-z]*[uU]|--user|--proxy-user",
    ),
    _cli("sshpass -p", "sshpass", "-p", ("sshpass",)),
    _cli(
        "registry login -p",
        r"(?:docker|podman|nerdctl|buildah|skopeo|oras|crane|helm|az|cf)(?![\w-])" + _TOOL_GAP + r"{0,60}?\blogin",
        "-p",
        ("login",),
    ),
    # (attached only: `mysql -p NAME` prompts for the password, and NAME is a database)
    _cli("mysql -pPASSWORD", r"mysql\w*|mariadb[\w-]*", "-p", ("mysql", "mariadb"), attached_only=True),
    _cli("ngrok authtoken", "ngrok", r"(?:add-)?authtoken", ("ngrok",), attached=False, need="authtoken"),
    # (other options may stand between `-b` and the file: `htpasswd -b -B -C 10 FILE USER PW`; `-n` may be a
    # word of its own: `htpasswd -n -b USER PW`)
    _cli("htpasswd -b FILE USER PASSWORD", "htpasswd", _HTPASSWD_B, ("htpasswd",), skip=2, need=r"-[A-Za-z0-9]*b"),
    _cli("htpasswd -nb USER PASSWORD", "htpasswd", _HTPASSWD_NB, ("htpasswd",), skip=1, need=r"-[A-Za-z0-9]*b"),
    _cli("redis-cli -a", r"redis-cli|keydb-cli|valkey-cli", "-a", ("-cli",), attached=False),
    _cli("mongo -p", r"mongo\w*", "-p", ("mongo",), attached=False),
    _cli("ldap -w", r"ldap\w+", "-w", ("ldap",), attached=False),
    _cli("sqlcmd / bcp -P", r"sqlcmd|bcp|osql|isql", "-P", ("sqlcmd", "bcp", "sql"), attached=False),
    _cli("zip -P / 7z -p", r"zip|unzip|zipcloak|7za?|7zz", "-[pP]", ("zip", "7z")),
    _cli(
        "smbclient -U user%password",
        r"smbclient|smbget|smbmap|rpcclient|smbcacls|net",
        r"-U|--user",
        ("smb", "rpcclient", "net "),
        keep=r"[^\s%'\"\\]{0,256}%",
    ),
    _cli("lftp -u user,password", "lftp", "-u", ("lftp",), attached=False, keep=r"[^\s,'\"\\]{0,256},"),
    _cli("rabbitmqctl add_user USER PASSWORD", "rabbitmqctl", r"add_user|change_password", ("rabbitmqctl",), skip=1),
    _cli("vault login TOKEN", "vault", r"login(?=[ \t]+(?!-)[^\s=]{8,}(?:\s|$))", ("vault",), attached=False),
    _cli(
        "aws configure set secret",
        "aws",
        r"(?:[\w-]+\.)?(?:aws_secret_access_key|aws_session_token)",
        ("aws_secret_access_key", "aws_session_token"),
        attached=False,
        need="aws_secret_access_key|aws_session_token",
    ),
    # openssl -passin/-passout/-pass pass:PW (env:VAR and file:PATH name no secret), keytool/jarsigner
    # -storepass/-keypass, and single-dash -password/-passwd of any tool (influx, java tools).
    _cli("openssl pass:", "", r"-(?:passin|passout|pass|kpass|passphrase)", ("pass:",), attached=False, keep="pass:"),
    _cli(
        "single-dash password flag",
        "",
        r"-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass|password|passwd)",
        (
            "-storepass",
            "-keypass",
            "-srcstorepass",
            "-deststorepass",
            "-srckeypass",
            "-destkeypass",
            "-password",
            "-passwd",
        ),
        attached=False,
    ),
    # Environment variables tools read their secret from, under names no key rule ends with (`sshpass -e`
    # reads SSHPASS, redis-cli REDISCLI_AUTH).
    Rule(
        "secret environment variable",
        r"""(?i)(?P<pre>(?<![\w.-])(?:SSHPASS|REDISCLI_AUTH)['"]?\s*[:=]\s*)""" + _argval_rx(bare=r"""[^\s'",}\]\\]"""),
        _argval,
        ("sshpass", "rediscli_auth"),
    ),
    # -- armoured keys ---------------------------------------------------------------------------------
    Rule(
        "private key block (PEM, OpenSSH, PGP)",
        _PEM,
        lambda m: f"-----BEGIN {m.group('kind')}-----{REDACTED}-----END {m.group('kind')}-----",
        ("private key",),
    ),
    Rule(
        "PuTTY private key",
        r"(?i)(Private-Lines:\s*\d+(?:\s|\\[nr])+)[A-Za-z0-9+/=\s\\]+?(?=Private-MAC|[^A-Za-z0-9+/=\s\\]|\Z)",
        r"\1" + REDACTED + " ",
        ("private-lines:",),
    ),
    # -- credentials in headers and URLs ---------------------------------------------------------------
    # Authorization: Basic/Digest <credentials> (Bearer is handled below, wherever it appears).
    Rule(
        "authorization header",
        r"""(?i)(authorization['"]?\s*[:=]\s*['"]?(?:basic|digest|token)\s+)[A-Za-z0-9._~+/=-]{6,}""",
        r"\1" + REDACTED,
        ("authorization",),
    ),
    Rule("bearer token", r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}", r"\1" + REDACTED, ("bearer",)),
    # (also when argv words were listed apart: `"Cookie:", "session=…"`)
    Rule(
        "cookie header",
        r"""(?i)((?<![\w-])(?:set-)?cookie['"]?\s*:(?:\s*\\?['"]\s*,"""
        + _GAP
        + r"""\\?['"]|\s*['"]?))[^\s'"\\][^\n'"\\]{5,4000}""",
        r"\1" + REDACTED,
        ("cookie",),
    ),
    # user:password@ in URLs of every scheme (redis://:PW@h, postgres://u:pa/ss@db, …). The password ends at
    # the '@' before the host (it may hold '/' or ':'); `host:8080/x?to=a@b` is a port, not a password.
    Rule(
        "password in a URL",
        r"""(?i)(?<![a-z0-9+.-])(?P<pre>[a-z][a-z0-9+.-]{0,30}://[^/\s:@'"<>]{0,256}:)"""
        r"""(?!\d{1,5}(?:[/?#\s'"<>]|$))[^\s'"<>@]{1,256}(?:@[^\s'"<>@/?#]{0,256}(?=@))*@""",
        r"\g<pre>" + REDACTED + "@",
        ("://",),
    ),
    Rule(
        "signed URL",
        r"""(?i)([?&;](?:sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|"""
        r"""x-goog-signature|x-goog-credential|client_secret|code)=)[^&\s'"#<>]{4,}""",
        r"\1" + REDACTED,
        ("sig=", "signature=", "credential=", "security-token=", "client_secret=", "code="),
    ),
    Rule(
        "Azure connection string",
        r"""(?i)((?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*)[^;\s'"]{8,}""",
        r"\1" + REDACTED,
        ("accountkey", "sharedaccess"),
    ),
    Rule(
        "Slack webhook",
        r"(?i)(https://hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_-]{8,}",
        r"\1" + REDACTED,
        ("hooks.slack.com",),
    ),
    # -- tokens recognisable by their prefix -----------------------------------------------------------
    Rule("JSON web token", _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*", REDACTED, ("eyj",)),
    Rule("Hugging Face token", _B + r"(?:hf_|api_org_)[A-Za-z0-9]{20,}", REDACTED, ("hf_", "api_org_")),
    # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-) and Anthropic (sk-ant-api03-, sk-ant-admin01-) keys.
    Rule("OpenAI / Anthropic key", r"\bsk-[A-Za-z0-9_-]{16,}\b", REDACTED, ("sk-",)),
    # An AWS secret key next to its access key id (a CSV row, `aws configure`, a boto3 call), either side.
    Rule(
        "AWS secret key next to its key id",
        r"(" + _AWS_ID + r"[^\n]{0,100}?)" + _AWS_SECRET,
        r"\1" + REDACTED,
        ("akia", "asia"),
    ),
    Rule(
        "AWS secret key before its key id",
        _AWS_SECRET + r"(?=[^\n]{0,100}?" + _AWS_ID + ")",
        REDACTED,
        ("akia", "asia"),
    ),
    Rule("AWS access key id", r"\b" + _AWS_ID + r"\b", REDACTED, ("akia", "asia")),
    # …and after one already redacted (this rule comes after the id's own): argv words and dict values are
    # redacted one by one (`AKIA…` alone, then the secret alone), and a report shows them as separate JSON
    # strings — `"s3_id": "***REDACTED***",\n  "s3_key": "wJal…"`, or the secret in another list a few lines
    # on. An AWS secret's shape (40 base64 characters with upper case, lower case and a digit: not a hex
    # digest) within 300 characters after a marker.
    Rule("AWS secret key after a redacted key id", _AWS_SECRET, _aws_secret_after_marker, _AFTER_MARKER),
    Rule(
        "GitHub token",
        _B + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
        REDACTED,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Rule(
        "GitLab token",
        _B + r"(?:gl(?:pat|dt|rt|cbt|ptt|ft|soat|oas|imt|agent|ffct)-|GR1348941)[A-Za-z0-9_-]{20,}",
        REDACTED,
        (
            "glpat-",
            "gldt-",
            "glrt-",
            "glcbt-",
            "glptt-",
            "glft-",
            "glsoat-",
            "gloas-",
            "glimt-",
            "glagent-",
            "glffct-",
            "gr1348941",
        ),
    ),
    Rule(
        "Slack token",
        r"\b(?:xox[abposer]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})",
        REDACTED,
        ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxe-", "xoxr-", "xapp-"),
    ),
    Rule("GCP API key", _B + r"AIza[0-9A-Za-z_-]{35}", REDACTED, ("aiza",)),
    Rule(
        "GCP OAuth secret or token",
        _B + r"(?:GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{20,})",
        REDACTED,
        ("gocspx-", "ya29.", "1//0"),
    ),
    Rule(
        "Azure AD client secret",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        REDACTED,
        ("q~",),
    ),
    Rule("npm token", _B + r"npm_[A-Za-z0-9]{36}", REDACTED, ("npm_",)),
    Rule("PyPI token", _B + r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", REDACTED, ("pypi-ageichlwas5vcmc",)),
    Rule("SendGrid key", _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", REDACTED, ("sg.",)),
    Rule("Stripe key", _B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", REDACTED, ("_live_", "_test_")),
    Rule("Twilio key", r"\b(?:AC|SK)[0-9a-f]{32}\b", REDACTED, (), r"(?:AC|SK)[0-9a-f]{32}"),
    Rule("Mailchimp key", r"\b[0-9a-f]{32}-us\d{1,2}\b", REDACTED, ("-us",)),
    Rule(
        "Square token",
        _B + r"(?:sq0(?:csp|atp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_-]{60})",
        REDACTED,
        ("sq0csp-", "sq0atp-", "eaaa"),
    ),
    Rule("Artifactory key", _B + r"AKC[a-zA-Z0-9]{10,}", REDACTED, ("akc",)),
    Rule(
        "Discord bot token",
        _B + r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}",
        REDACTED,
        (),
        r"\.[A-Za-z0-9_-]{27}",
    ),  # (its last part)
    Rule("Telegram bot token", r"(?<![\w:])\d{8,10}:[0-9A-Za-z_-]{35}", REDACTED, (), r":[0-9A-Za-z_-]{35}"),
)

# Run over a whole text, the key rules try 64 characters of key at every word start (the cost:
# docs/performance.md). None can match unless one of these words is present (a lower-cased `in` test is far
# cheaper), and each match holds a key word that ends a run of word characters, so they run only in windows
# around those (see _windowed_sub). Every other rule needs a literal (its gate) first.
_KEY_WORDS = ("key", "token", "secret", "pass", "pwd", "credential")
_KEY_ENDINGS = (
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "pass",
    "pwd",
    "credential",
    "credentials",
)
_WORD_RUN = re.compile(r"[\w-]*")
# From the end of a key word to where its value starts: an optional (escaped) quote, the separator (`:`,
# `=`, a list's `,` or whitespace), an opening quote, a list's `[` and all the whitespace around them (a
# key pattern's pre-value part always takes all of it, since a value starts with a non-space). A value
# then ends before the next newline (quoted values and plain runs never hold a raw newline), or at the
# first `]` of a list.
_SEP = re.compile(r"""\\?['"]?\s*(?:[:=,]|\s)?\s*(?:-[ \t]+)?(?:\\?['"])?(?:\[\s*)?""")
_BEFORE_KEY = 200  # a match starts at most `--` + 64 key characters before its key word (22 characters at most)
_LIST_MAX = 4003  # `[`, 4000 characters, `]`


def _key_ends(text: str) -> list[int] | None:
    """Where a key word can end: the end of each run of word characters that holds one of _KEY_WORDS
    and ends like a key (a key pattern's key word is followed by neither a word character nor '-').
    None when lower-casing changes the text's length (positions would not carry over)."""
    low = text.lower()
    if len(low) != len(text):
        return None
    ends = set()
    for w in _KEY_WORDS:
        p = low.find(w)
        while p >= 0:
            run = _WORD_RUN.match(text, p)
            assert run is not None  # (the pattern matches the empty string)
            ke = run.end()
            if low.endswith(_KEY_ENDINGS, 0, ke):
                ends.add(ke)
            p = low.find(w, max(ke, p + 1))
    return sorted(ends)


_UNKNOWN = object()


def _windowed_sub(pattern: re.Pattern[str], repl, text: str, ends=_UNKNOWN) -> str:
    """`pattern.sub(repl, text)` for a key pattern, run only where a match can be: windows around the
    key words, merged where they touch, searched in place (so look-behinds see the text before).
    `ends`: `_key_ends(text)` when the caller has it already."""
    if ends is _UNKNOWN:
        ends = _key_ends(text)
    if ends is None:
        return pattern.sub(repl, text)
    windows: list[list[int]] = []
    for ke in ends:
        s = max(0, ke - _BEFORE_KEY)
        sep = _SEP.match(text, ke)
        assert sep is not None  # (the pattern matches the empty string)
        v = sep.end()
        nl = text.find("\n", v)
        e = max(len(text) if nl < 0 else nl, text.find("]", v, v + _LIST_MAX)) + 2
        if windows and s <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], e)
        else:
            windows.append([s, e])
    if not windows:
        return text
    out, last = [], 0
    for s, e in windows:
        for mm in pattern.finditer(text, max(s, last), min(e, len(text))):
            out.append(text[last : mm.start()])
            out.append(repl(mm))
            last = mm.end()
    out.append(text[last:])
    return "".join(out)


def redact_text(text: str) -> str:
    low = text.lower()
    keys = any(w in low for w in _KEY_WORDS)
    ends = _UNKNOWN  # where key words end in `text` (found once; again only after a key rule changed it)
    for rule in RULES:
        if rule.gate is None:
            if keys:
                if ends is _UNKNOWN:
                    ends = _key_ends(text)
                new = _windowed_sub(rule.pattern, rule.repl, text, ends)
                if new != text:
                    ends = _UNKNOWN
                text = new
        elif rule.gate == _AFTER_MARKER:  # needs the markers earlier rules may just have written
            if REDACTED in text:
                text, ends = rule.pattern.sub(rule.repl, text), _UNKNOWN
        # Other replacements add no gate literal a rule could then match on: `low` stays good enough.
        # The gate's `in` tests first, then the `need` search, then the rule.
        elif rule.gate and not any(g in low for g in rule.gate):
            continue
        elif rule.need is None or rule.need.search(text):
            text, ends = rule.pattern.sub(rule.repl, text), _UNKNOWN  # (whatever the rules' order: ends are offsets)
    return text


def redact_words(words: Sequence[str]) -> list[str]:
    """An argv, each word redacted with the command line around it: `curl -u alice:PW` hides PW only beside
    `curl`, which a word alone does not show (the launch parser then filed `alice:PW` under `args.user`). The
    words are joined as a shell would read them, redacted, and split again; where that does not give back as
    many words, each word is redacted alone."""

    joined = " ".join(shlex.quote(w) for w in words)
    red = redact_text(joined)
    if red == joined:
        return list(words)
    try:
        back = shlex.split(red)
    except ValueError:
        back = []
    return back if len(back) == len(words) else [redact_text(w) for w in words]


def is_secret_key(key: str) -> bool:
    k = key.lower()
    if k in {
        "num_speculative_tokens",
        "max_num_batched_tokens",
        "max_tokens",
        "tokenizer",
        "tokenizer_mode",
        "skip_tokenizer_init",
        "max_model_len",
        "tokens",
        "speculative_num_draft_tokens",
    }:
        return False
    if k.endswith("_tokens") or "tokenizer" in k:
        return False
    return bool(_SECRET_KEY.search(k) or _PASS_KEY.search(k))


def redact_value(key: str, value: Any) -> Any:
    if is_secret_key(key) and value not in (None, "", False):
        return REDACTED
    return redact_any(value)


def redact_mapping(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: redact_value(str(k), v) for k, v in mapping.items()}


def redact_any(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return redact_mapping(value)
    if isinstance(value, (list, tuple)):
        return type(value)(redact_any(v) for v in value)
    return value
