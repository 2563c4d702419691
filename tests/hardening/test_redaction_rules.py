"""One test per redaction rule (issue 24): every entry of `redact.RULES` has examples here, its own pattern
matches them, and `redact_text` removes the secret (keeping what is no secret: a user name, a file, `pass:`)
in plain text, as a JSON string, in a Python and a JSON argv list; a rule without examples fails the suite.
Then the secrets that must never reach an error line: bearer tokens and passwords from files and environment
variables holding line breaks, CR, NUL or other control characters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dflash_doctor import redact as R
from tests.conftest import ROOT, run_cli
from tests.hardening import tally

S = "Kq7Wz2Xm9Lv4Tn8R"  # a secret: random-looking, so a hit is a leak
AWS_SECRET = "Wt5Lk8Zr3Qx7Nv2Jm9Hb/4Yc6Pd1Fs0Ga8Ke3Rw5"

# rule name -> [(text, secret, kept)]: `kept` must survive (not everything near a secret is one).
EXAMPLES: dict[str, list[tuple[str, str, str]]] = {
    "secret list": [("api_key: ['Pk3Wz8Qx2Lm7Vn4R', 'Tj5Hc9Yb1Ds6Fg0K']", "Tj5Hc9Yb1Ds6Fg0K", "api_key")],
    "quoted secret": [(f"password: 'two {S} words'", S, "password"), (f"--api-key 'a {S}'", S, "--api-key")],
    "flag in an argv list": [(f"['vllm', '--api-key', '{S}']", S, "'vllm'")],
    "flag in a YAML list": [(f"args:\n  - --api-key\n  - {S}\n", S, "- --api-key")],
    "key = value": [(f"HF_TOKEN={S}", S, "HF_TOKEN="), (f"PGPASSWORD={S} psql -h db", S, "psql -h db")],
    "curl user:password": [
        (f"curl -sf -u scraper:{S} http://127.0.0.1:8000/health", S, "scraper:"),
        (f"curl --user=alice:{S} x", S, "alice:"),
        (f"['curl', '-u', 'alice:{S}', 'http://x']", S, "'alice:"),
        # -u at the end of a cluster of short flags (found by hand, round three)
        (f"curl -su bob:{S} http://x", S, "bob:"),
        (f"curl -sSfu bob:{S} http://x", S, "-sSfu bob:"),
    ],
    "sshpass -p": [(f"sshpass -p {S} ssh gpu-7", S, "ssh gpu-7"), (f"sshpass -p'{S}' rsync", S, "rsync")],
    "registry login -p": [
        (f"docker login -u ci -p {S} registry.example.com", S, "registry.example.com"),
        (f"podman login --username ci -p={S} quay.io", S, "quay.io"),
    ],
    "mysql -pPASSWORD": [
        (f"mysql -h db -u eval -p{S} spec", S, "spec"),
        (f"mysqldump -uroot -p{S} db", S, "db"),
        # a quoted attached password (the shell removes the quotes; the log keeps them)
        (f'mysql -u root -p"{S}" spec', S, "spec"),
        (f"mysql -u root -p'{S}' spec", S, "-p'"),
    ],
    "ngrok authtoken": [(f"ngrok authtoken {S}", S, "ngrok"), (f"ngrok config add-authtoken {S}", S, "config")],
    "htpasswd -b FILE USER PASSWORD": [
        (f"htpasswd -b /etc/nginx/.htpasswd ops {S}", S, "/etc/nginx/.htpasswd ops"),
        (f"htpasswd -cb f ops {S}", S, "f ops"),
        # other options between -b and the file (-C takes a number)
        (f"htpasswd -b -B /etc/nginx/.htpasswd ops {S}", S, "/etc/nginx/.htpasswd ops"),
        (f"htpasswd -bB -C 12 f ops {S}", S, "f ops"),
        (f"['htpasswd', '-b', '-C', '10', 'f', 'ops', '{S}']", S, "'f', 'ops'"),
    ],
    "htpasswd -nb USER PASSWORD": [
        (f"htpasswd -nb ops {S}", S, "ops"),
        (f"htpasswd -n -b ops {S}", S, "ops"),
        (f"htpasswd -b -B -n ops {S}", S, "ops"),
    ],
    "redis-cli -a": [(f"redis-cli -h cache -a {S} ping", S, "ping")],
    "mongo -p": [(f"mongosh -u admin -p {S} --authenticationDatabase admin", S, "--authenticationDatabase")],
    "ldap -w": [(f"ldapsearch -x -D cn=admin -w {S} -b dc=x", S, "-b dc=x")],
    "sqlcmd / bcp -P": [(f"sqlcmd -S srv -U sa -P {S}", S, "-U sa")],
    "zip -P / 7z -p": [(f"zip -P {S} out.zip f", S, "out.zip"), (f"7z x -p{S} a.7z", S, "a.7z")],
    "smbclient -U user%password": [(f"smbclient //h/s -U bob%{S}", S, "bob%")],
    "lftp -u user,password": [(f"lftp -u bob,{S} ftp://h", S, "bob,")],
    "rabbitmqctl add_user USER PASSWORD": [(f"rabbitmqctl add_user bob {S}", S, "add_user bob")],
    "vault login TOKEN": [(f"vault login {S}", S, "vault login")],
    "aws configure set secret": [(f"aws configure set aws_secret_access_key {S}", S, "aws_secret_access_key")],
    "openssl pass:": [(f"openssl pkcs12 -in a.p12 -passin pass:{S}", S, "pass:")],
    "single-dash password flag": [
        (f"keytool -importkeystore -srcstorepass {S} -deststorepass x", S, "-srcstorepass"),
        (f"influx -username u -password {S}", S, "-username u"),
    ],
    "secret environment variable": [(f"SSHPASS={S} sshpass -e ssh h", S, "sshpass -e"), (f"REDISCLI_AUTH={S}", S, "")],
    "private key block (PEM, OpenSSH, PGP)": [
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Kq2Wm9Lv4Tn8Rb3Yc6\n-----END RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEAx7Kq2Wm9Lv4Tn8Rb3Yc6",
            "BEGIN RSA PRIVATE KEY",
        )
    ],
    "PuTTY private key": [
        (
            "Private-Lines: 1\nAAAAIPx7Kq2Wm9Lv4Tn8Rb3Yc6Pd1Hf5\nPrivate-MAC: 0a1b",
            "AAAAIPx7Kq2Wm9Lv4Tn8Rb3Yc6Pd1Hf5",
            "MAC",
        )
    ],
    "authorization header": [("Authorization: Basic YWRtaW46UXc4Wm00Vng=", "YWRtaW46UXc4Wm00Vng=", "Basic")],
    "bearer token": [(f"Authorization: Bearer {S}", S, "Bearer"), (f"curl --oauth2-bearer {S}", S, "curl")],
    "cookie header": [(f"Cookie: session={S}; theme=dark", S, "Cookie")],
    "password in a URL": [(f"redis://:{S}@cache:6379/0", S, "@cache:6379"), (f"https://u:{S}@h/x", S, "https://u:")],
    "signed URL": [(f"https://a.blob.core.windows.net/c?sv=1&sig={S}", S, "sv=1")],
    "Azure connection string": [(f"AccountName=a;AccountKey={S}==;EndpointSuffix=x", S, "AccountName=a")],
    "Slack webhook": [(f"https://hooks.slack.com/services/T0A1B2C3D/B0E4F5G6H/{S}", S, "hooks.slack.com")],
    "JSON web token": [("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4cTcifQ.Zk8Lm3Np", "Zk8Lm3Np", "jwt")],
    "Hugging Face token": [("hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1", "QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1", "")],
    "OpenAI / Anthropic key": [("sk-proj-Hq7Wc2Vn5Jx9Rt4Ym1Pk", "Hq7Wc2Vn5Jx9Rt4Ym1Pk", "")],
    "AWS secret key next to its key id": [(f"AKIAZ3XQ7W2N8VK5MT4R {AWS_SECRET}", AWS_SECRET, "")],
    "AWS secret key before its key id": [(f"{AWS_SECRET} AKIAZ3XQ7W2N8VK5MT4R", AWS_SECRET, "")],
    "AWS access key id": [("s3 creds AKIAQ7XZ4W2N8VK5MT3R", "AKIAQ7XZ4W2N8VK5MT3R", "s3 creds")],
    "AWS secret key after a redacted key id": [
        (json.dumps({"s3_id": R.REDACTED, "s3_key": AWS_SECRET}, indent=8), AWS_SECRET, "s3_key"),
        (f'"stray": ["{R.REDACTED}"],\n  "argv": [\n    "--s3-key",\n    "{AWS_SECRET}"\n  ]', AWS_SECRET, "--s3-key"),
    ],
    "GitHub token": [("ghp_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa", "Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa", "")],
    "GitLab token": [("glpat-Xq7Zk2Wm9Lv4Tn8Rb3Yc", "Xq7Zk2Wm9Lv4Tn8Rb3Yc", "")],
    "Slack token": [("xoxb-5821-Qz7Wk3Xn9Lv2", "Qz7Wk3Xn9Lv2", "")],
    "GCP API key": [("AIzaSyB7Xk2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks2Q", "SyB7Xk2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks2Q", "")],
    "GCP OAuth secret or token": [("GOCSPX-Gq8Wz3Lx7Kv2Nm5Rt9Yb4Pc1Hd6", "Gq8Wz3Lx7Kv2Nm5Rt9Yb4Pc1Hd6", "")],
    "Azure AD client secret": [("Abc8Q~Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2", "Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2", "")],
    "npm token": [("npm_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa8", "Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa8", "")],
    "PyPI token": [("pypi-AgEIcHlwaS5vcmc" + "Xk7Lm2Nq9R" * 6, "Xk7Lm2Nq9R" * 6, "")],
    "SendGrid key": [
        (
            "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",
            "Dd1Hf5Jg0Ks2Qa8Wz3Lx7Kv2Nm5Rt9Yb4Pc1Hd6Je0F",
            "",
        )
    ],
    "Stripe key": [("sk_live_Zq8Wk3Xm7Lv2Tn5Rb9Yc4Pd", "Zq8Wk3Xm7Lv2Tn5Rb9Yc4Pd", "")],
    "Twilio key": [("AC" + "0123456789abcdef" * 2, "0123456789abcdef" * 2, "")],
    "Mailchimp key": [("0123456789abcdef0123456789abcdef-us12", "0123456789abcdef0123456789abcdef", "")],
    "Square token": [("sq0atp-Xk7Lm2Nq9Rt4Vw8Zb3Yc6P", "Xk7Lm2Nq9Rt4Vw8Zb3Yc6P", "")],
    "Artifactory key": [("AKCp8Xk7Lm2Nq9Rt4Vw8Zb3", "p8Xk7Lm2Nq9Rt4Vw8Zb3", "")],
    "Discord bot token": [
        ("MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "ZnCjm1XVW7vRze4b7Cq4se7kKWs", "")
    ],
    "Telegram bot token": [
        ("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq", "")
    ],
}

# What must stay: flags that look alike but carry no secret.
BENIGN = [
    "docker run -p 8080:80 img",
    "mysql -u root -p mydb",
    "['mysql', '-p', 'mydb']",
    '["mysql", "-p", "mydb"]',
    "curl -u alice https://x",
    "openssl enc -pass env:PW -in f",
    "ssh -p 2222 host",
    "vault login -method=userpass username=x",
    "python -m pytest -p no:cacheprovider",
    "htpasswd -c file bob",
    "git log -p HEAD",
    "gpg --passphrase-file key.txt -d f",
    "vllm serve m --num-speculative-tokens 15 --max-num-batched-tokens 8192",
]


def test_every_rule_has_examples():
    """A rule added without a test of its own fails here."""
    names = [r.name for r in R.RULES]
    assert len(names) == len(set(names)), "two rules share a name"
    assert sorted(set(names) - set(EXAMPLES)) == []
    assert sorted(set(EXAMPLES) - set(names)) == []


def _forms(text: str) -> list[str]:
    return [text, json.dumps({"line": text}), json.dumps({"line": text}, indent=2), repr([text])]


@pytest.mark.parametrize("rule", [r.name for r in R.RULES])
def test_each_rule(rule):
    tally.hostile_input("redaction: rule examples", len(EXAMPLES[rule]))
    pattern = next(r for r in R.RULES if r.name == rule).pattern
    for text, secret, kept in EXAMPLES[rule]:
        assert pattern.search(text), f"{rule}: its own pattern misses {text!r}"
        for form in _forms(text):
            out = R.redact_text(form)
            assert secret not in out, (rule, form, out)
            assert R.redact_text(out) == out, (rule, form)  # idempotent
        out = R.redact_text(text)
        assert kept in out, (rule, text, out)
        json.loads(R.redact_text(json.dumps({"line": text})))  # a JSON document stays one


@pytest.mark.parametrize("text", BENIGN)
def test_lookalikes_are_kept(text):
    assert R.redact_text(text) == text


E2E_RULES = {
    "curl user:password",
    "sshpass -p",
    "registry login -p",
    "mysql -pPASSWORD",
    "ngrok authtoken",
    "htpasswd -b FILE USER PASSWORD",
    "redis-cli -a",
}


@pytest.mark.parametrize(
    "line", [text for rule in sorted(E2E_RULES) for text, _, _ in EXAMPLES[rule] if not text.startswith("[")]
)
def test_a_quoted_command_line_in_a_log_reaches_no_report(tmp_path, line):
    """The issue's list, end to end: a log line quoting the command (as an operator's script echoes it) and
    the same command given as --launch, through the JSON report (where argv words are separate strings)."""
    tally.hostile_input("redaction: CLI credential flag, end to end")
    log = tmp_path / "server.log"
    log.write_text(
        (ROOT / "fixtures/seed/vllm-0.20.1.log").read_text() + f"INFO 05-14 09:11:53 [api_server.py:1] ran: {line}\n"
    )
    res = run_cli("diagnose", "--log", str(log), "--launch", f"vllm serve m {line}", "--format", "json")
    assert res.returncode in (0, 1, 3), res.stderr
    assert S not in res.stdout + res.stderr


# -- secrets read from files and environment variables ------------------------------------------------------

BAD_TOKENS = {
    "LF": f"head\n{S}\n",
    "CRLF": f"head\r\n{S}",
    "CR": f"head\r{S}",
    "control": f"head\x01{S}",
    "tab inside": f"head\t{S}",
    "NUL": f"head\x00{S}",
}


@pytest.fixture(scope="module")
def http_server():
    """A plain HTTP server on loopback: the request gets as far as its headers being built."""
    from tests.sshd import free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import socket
    import time

    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait()


def _one_error_without_the_secret(res) -> None:
    assert res.returncode == 2, res.stderr
    assert S not in res.stdout + res.stderr, res.stderr
    assert res.stderr.count("error:") == 1 and "Traceback" not in res.stderr, res.stderr


@pytest.mark.parametrize("kind", list(BAD_TOKENS))
def test_a_bearer_token_file_with_a_line_break_is_never_echoed(tmp_path, http_server, kind):
    """Before: 'cannot read Prometheus …: Illegal header value b'Bearer head\\nKq7Wz2…'' on the terminal."""
    tally.hostile_input("secrets: bearer token file with control characters")
    tok = tmp_path / "token"
    tok.write_bytes(BAD_TOKENS[kind].encode())
    res = run_cli("fleet", "--prometheus", http_server, "--bearer-token-file", str(tok))
    _one_error_without_the_secret(res)


@pytest.mark.parametrize("kind", [k for k in BAD_TOKENS if k != "NUL"])  # (no environment holds a NUL)
def test_a_secret_env_var_with_a_control_character_is_never_echoed(http_server, kind):
    tally.hostile_input("secrets: env var with control characters")
    value = BAD_TOKENS[kind]
    for flags in (["--bearer-token-env", "DD_TOKEN"], ["--basic-auth-user", "u", "--basic-auth-env", "DD_TOKEN"]):
        res = run_cli("fleet", "--prometheus", http_server, *flags, env={"DD_TOKEN": value})
        _one_error_without_the_secret(res)


def test_a_bearer_token_outside_ascii_is_one_line(tmp_path, http_server):
    """No control character, but no header value either: before, an internal error (exit 3) quoting the
    HTTP library's UnicodeEncodeError, which names the character."""
    tally.hostile_input("secrets: bearer token outside ASCII", 2)
    tok = tmp_path / "token"
    tok.write_text(f"{S}\u00e9tail")
    _one_error_without_the_secret(run_cli("fleet", "--prometheus", http_server, "--bearer-token-file", str(tok)))
    res = run_cli("fleet", "--prometheus", http_server, "--bearer-token-env", "DD_TOKEN", env={"DD_TOKEN": f"{S}é"})
    _one_error_without_the_secret(res)
    assert "internal error" not in res.stderr and "é" not in res.stderr


def test_a_token_file_that_is_not_utf8_or_not_a_file(tmp_path, http_server):
    """Before: an internal error (UnicodeDecodeError) for bytes that are not UTF-8; a FIFO hung."""
    tally.hostile_input("secrets: token file not text / not a file")
    bad = tmp_path / "token.bin"
    bad.write_bytes(b"\xff\xfe" + S.encode())
    _one_error_without_the_secret(run_cli("fleet", "--prometheus", http_server, "--bearer-token-file", str(bad)))
    fifo = tmp_path / "token.fifo"
    os.mkfifo(fifo)
    res = run_cli("fleet", "--prometheus", http_server, "--bearer-token-file", str(fifo), timeout=30)
    assert res.returncode == 2 and "not a regular file" in res.stderr, res.stderr
