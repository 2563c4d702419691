"""A corpus of secrets, planted wherever a deployment leaks them (the server's non-default args,
startup and metrics lines, config.json, the model card, flags, error messages), run through every
output format and output path: nothing of any secret may come out."""

from __future__ import annotations

import json
import re
import string
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dflash_doctor.evidence import EvidenceSet, Source
from dflash_doctor.evidence.payloads import Environment, LaunchConfig
from dflash_doctor.redact import redact_any, redact_text
from dflash_doctor.render import Format, render
from dflash_doctor.services.doctor import build_report
from tests.conftest import FIXTURES, run_cli
from tests.hardening import tally

# (how it appears in the wild, the secret itself). Values are random-looking so a hit is a leak.
CORPUS = [
    ("--api-key sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N", "sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N"),
    ("OPENAI_API_KEY=sk-proj-Hq7Wc2Vn5Jx9Rt4Ym1Pk", "sk-proj-Hq7Wc2Vn5Jx9Rt4Ym1Pk"),
    ("HF_TOKEN=hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1", "hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1"),
    ("loading with token hf_Ke4Nw8Pz2Rb6Tq9Xm3Vc7Ys1Lj5Hd0", "hf_Ke4Nw8Pz2Rb6Tq9Xm3Vc7Ys1Lj5Hd0"),
    (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4cTcifQ.Zk8Lm3Np",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4cTcifQ.Zk8Lm3Np",
    ),
    ("Authorization: Basic YWRtaW46UXc4Wm00Vng=", "YWRtaW46UXc4Wm00Vng="),
    ("metrics at https://scraper:Wq9Xv4Zt7Lp2@prom.internal:9090/metrics", "Wq9Xv4Zt7Lp2"),
    ("s3 creds AKIAQ7XZ4W2N8VK5MT3R", "AKIAQ7XZ4W2N8VK5MT3R"),
    ("aws_secret_access_key = Zr8Kq2Wn5Xv7Lp4Tm9Hc3Jb6Yd1Fs0GaQe5Rw7T", "Zr8Kq2Wn5Xv7Lp4Tm9Hc3Jb6Yd1Fs0GaQe5Rw7T"),
    ("GITHUB_TOKEN=ghp_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa", "ghp_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa"),
    ("slack xoxb-5821-Qz7Wk3Xn9Lv2", "xoxb-5821-Qz7Wk3Xn9Lv2"),
    ("password=Qx7!Vb3Kz9mW", "Qx7!Vb3Kz9mW"),
    ('db password: "Zq4 Wx8 Tn2 Lk6"', "Zq4 Wx8 Tn2 Lk6"),
    # Credentials in URLs of every scheme, passwords holding '/' or '@', no user name at all.
    ("cache at redis://:Rd7Kq2Xw9Lm4Vp8Z@cache.internal:6379/0", "Rd7Kq2Xw9Lm4Vp8Z"),
    ("DATABASE_URL=postgres://svc:Pg4Vn7Tz/Wx8Zq2Lm7Rb@db.internal/app", "Pg4Vn7Tz/Wx8Zq2Lm7Rb"),
    ("broker amqp://guest:Am8Rq3Zx@7Wk2Lv5Tp@rabbit:5672/", "Am8Rq3Zx@7Wk2Lv5Tp"),
    ("mongodb+srv://app:Mg5Tq8Wz3Lx7Kv2N@cluster0.example.net/db", "Mg5Tq8Wz3Lx7Kv2N"),
    # argv in every serialisation: a Python list, JSON, a quoted shell word.
    ("argv ['vllm', 'serve', 'Qwen/Qwen3-8B', '--api-key', 'Lq8Zx3Vm7Wk2Tp5R']", "Lq8Zx3Vm7Wk2Tp5R"),
    ('cmdline ["vllm", "serve", "--hf-token", "Jn4Wq9Xz2Lv7Km3T"]', "Jn4Wq9Xz2Lv7Km3T"),
    ("launched: vllm serve m --api-key 'Sh5Kq8Wz Lx7Vn2Qm' --port 8000", "Sh5Kq8Wz Lx7Vn2Qm"),
    # Tokens known by their prefix, whatever the key around them says.
    (
        "GH_PAT=github_pat_11AQ7XZ4W0Kp3Lm8Vn2Rq5_Tz9Wx4Jb7Hc2Mk6Pd1Qs8Lv3Zn5Yg0Fr4Te7Wu2Xi9Ob6Ac1Sd8Ef3",
        "github_pat_11AQ7XZ4W0Kp3Lm8Vn2Rq5_Tz9Wx4Jb7Hc2Mk6Pd1Qs8Lv3Zn5Yg0Fr4Te7Wu2Xi9Ob6Ac1Sd8Ef3",
    ),
    ("clone with glpat-Xq7Zk2Wm9Lv4Tn8Rb3Yc", "glpat-Xq7Zk2Wm9Lv4Tn8Rb3Yc"),
    ("notify xoxp-3821-9917-Qz7Wk3Xn9Lv2Tb5", "xoxp-3821-9917-Qz7Wk3Xn9Lv2Tb5"),
    (
        "alerts to https://hooks.slack.com/services/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",
        "Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1",
    ),
    ("org hf api_org_Kq7Wz2Xm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks", "api_org_Kq7Wz2Xm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks"),
    ("judge uses sk-ant-api03-Qw7Zx2Lm9Vk4Tn8Rb3Yc6Pd1Hf5Jg0Ks2Qa", "sk-ant-api03-Qw7Zx2Lm9Vk4Tn8Rb3Yc6Pd1Hf5Jg0Ks2Qa"),
    ("eval with sk-svcacct-Hz8Wq3Xk7Lm2Vn5Rt9Yb4Pc", "sk-svcacct-Hz8Wq3Xk7Lm2Vn5Rt9Yb4Pc"),
    ("aws AKIAZ3XQ7W2N8VK5MT4R Wt5Lk8Zr3Qx7Nv2Jm9Hb/4Yc6Pd1Fs0Ga8Ke3Rw5", "Wt5Lk8Zr3Qx7Nv2Jm9Hb/4Yc6Pd1Fs0Ga8Ke3Rw5"),
    ("gcs AIzaSyB7Xk2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks2Q", "AIzaSyB7Xk2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks2Q"),
    ("oauth client GOCSPX-Gq8Wz3Lx7Kv2Nm5Rt9Yb4Pc1Hd6", "GOCSPX-Gq8Wz3Lx7Kv2Nm5Rt9Yb4Pc1Hd6"),
    ("gcloud ya29.a0AfH6SMBx7Kq2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0", "a0AfH6SMBx7Kq2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Az7Xk2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks2QaZe5Rw7Tz9Wx4Jb7"
        "Hc2Mk6Pd1Qs8Lv3Zn5Yg0Fr4Te7Wu2Xi9Ob6A==;EndpointSuffix=core.windows.net",
        "Az7Xk2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks2QaZe5Rw7Tz9Wx4Jb7Hc2Mk6Pd1Qs8Lv3Zn5Yg0Fr4Te7Wu2Xi9Ob6A",
    ),
    (
        "weights from https://acct.blob.core.windows.net/c/m.safetensors?sv=2022-11-02&sig=Sg7Kq2Wx9Lm4Vp8Zr3Tn6Yb%2FQ",
        "Sg7Kq2Wx9Lm4Vp8Zr3Tn6Yb",
    ),
    ("azure app Abc8Q~Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2", "Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2"),
    ("publish npm_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa8", "npm_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa8"),
    ("billing sk_live_Zq8Wk3Xm7Lv2Tn5Rb9Yc4Pd", "sk_live_Zq8Wk3Xm7Lv2Tn5Rb9Yc4Pd"),
    (
        "mail 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",
        "Dd1Hf5Jg0Ks2Qa8Wz3Lx7Kv2Nm5Rt9Yb4Pc1Hd6Je0F",
    ),
    ("jwt=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ6cTgifQ.Jw7Kq2Xz9Lm4Vp8R", "Jw7Kq2Xz9Lm4Vp8R"),
    ("Cookie: session=Ck7Wq2Xz9Lm4Vp8R; theme=dark", "Ck7Wq2Xz9Lm4Vp8R"),
    ("DB_PASS=Dp3Kw8Zq2Xm7Lv5T", "Dp3Kw8Zq2Xm7Lv5T"),
    # Credentials on the command lines of common tools (a log quoting an operator's shell history).
    ("healthcheck: curl -sf -u scraper:Cu7Rq2Wz9Lx4Km8T http://127.0.0.1:8000/health", "Cu7Rq2Wz9Lx4Km8T"),
    ("deploy: sshpass -p Sp4Wq8Xz2Lm7Kv3N ssh gpu-7", "Sp4Wq8Xz2Lm7Kv3N"),
    ("docker login -u ci -p Dl3Vq8Wz2Xm7Lk4R registry.example.com", "Dl3Vq8Wz2Xm7Lk4R"),
    ("results db: mysql -h db -u eval -pMy6Tq2Wz8Xk4Lv9N spec", "My6Tq2Wz8Xk4Lv9N"),
    ("tunnel: ngrok authtoken 2Ng7Kq3Wz8Xm4Lv9Tp5Rb1", "2Ng7Kq3Wz8Xm4Lv9Tp5Rb1"),
    ("htpasswd -b /etc/nginx/.htpasswd ops Ht5Wq9Xz3Lm8Kv2N", "Ht5Wq9Xz3Lm8Kv2N"),
    ("cache: redis-cli -h cache -a Rc8Wq3Xz7Lm2Kv5N ping", "Rc8Wq3Xz7Lm2Kv5N"),
    ("SSHPASS=Ss9Kq4Wz7Xm2Lv6T sshpass -e rsync", "Ss9Kq4Wz7Xm2Lv6T"),
    ("gpg --batch --passphrase Gp2Wq7Xz5Lm9Kv3N -d weights.tar.gpg", "Gp2Wq7Xz5Lm9Kv3N"),
    (
        "s3 sync --s3-id AKIAQ2XZ7W4N8VK5MT6R --s3-key Xq7Zk2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks2QaZe5Rw",
        "Xq7Zk2Wm9Lv4Tn8Rb3Yc6Pd1Hf5Jg0Ks2QaZe5Rw",
    ),
    # A key block as JSON holds it (a service-account file, a config value): escaped newlines, no END line needed.
    (
        '"blob": "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAx7Kq2Wm9Lv4Tn8Rb3Yc6\\nPd1Hf5Jg0Ks2QaZe5\\n'
        '-----END RSA PRIVATE KEY-----\\n"',
        "MIIEowIBAAKCAQEAx7Kq2Wm9Lv4Tn8Rb3Yc6",
    ),
]

# Secrets that span lines (a key file, a YAML argument list): redacted wherever the text holds them whole.
MULTILINE = [
    (
        "-----BEGIN OPENSSH PRIVATE "
        "KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1\n"
        "-----END OPENSSH PRIVATE KEY-----\n",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
    ),
    (
        "key file (cut at the byte cap):\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIPx7Kq2Wm9Lv4Tn8Rb3Yc6Pd1\nHf5Jg0",
        "MHcCAQEEIPx7Kq2Wm9Lv4Tn8Rb3Yc6Pd1",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: x\n\nlQOYBGQx7Kq2Wm9Lv4Tn8Rb3\n=Ab1c\n-----END PGP PRIVATE "
        "KEY BLOCK-----",
        "lQOYBGQx7Kq2Wm9Lv4Tn8Rb3",
    ),
    (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\nAAAAIPx7Kq2Wm9Lv4Tn8Rb3Yc6Pd1Hf5\n"
        "Private-MAC: 0a1b",
        "AAAAIPx7Kq2Wm9Lv4Tn8Rb3Yc6Pd1Hf5",
    ),
    ("containers:\n- args:\n  - --api-key\n  - Ym4Kq8Wz3Lx7Tn2V\n", "Ym4Kq8Wz3Lx7Tn2V"),
    ('cmd = [\n    "vllm",\n    "--api-key",\n    "Yj5Wq9Xz2Lv7Km3T"\n]', "Yj5Wq9Xz2Lv7Km3T"),
]

# The same kind of secrets as vLLM prints them in `non-default args` (a Python dict repr).
ARGS = {
    "model": "Qwen/Qwen3.6-27B",
    "api_key": ["Pk3Wz8Qx2Lm7Vn4R", "Tj5Hc9Yb1Ds6Fg0K"],
    "hf_token": "Rq8Lx3Wv7Mz2Np5T",
    "speculative_config": {
        "method": "dflash",
        "model": "z-lab/Qwen3.6-27B-DFlash",
        "num_speculative_tokens": 15,
        "secret": "Nz6Kw1Qy4Xb9Lc3V",
    },
    "ssl_keyfile_password": "Gh2Vm7Zq5Wt9Lx4K",
}
ARG_SECRETS = ["Pk3Wz8Qx2Lm7Vn4R", "Tj5Hc9Yb1Ds6Fg0K", "Rq8Lx3Wv7Mz2Np5T", "Nz6Kw1Qy4Xb9Lc3V", "Gh2Vm7Zq5Wt9Lx4K"]
ALL_SECRETS = (
    [s for _, s in CORPUS] + [s for _, s in MULTILINE] + ARG_SECRETS + ["AKIAZ3XQ7W2N8VK5MT4R", "AKIAQ2XZ7W4N8VK5MT6R"]
)

METRICS = (
    "INFO 05-14 09:13:47 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 1.19, Accepted "
    "throughput: 33.70 tokens/s, Drafted throughput: 2626.50 tokens/s, Accepted: 337 tokens, Drafted: 26265 "
    "tokens, Per-position acceptance rate: 0.172, 0.020, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, "
    "0.000, 0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 1.3%\n"
)


def leaks(text: str) -> list[str]:
    """Secrets, or any 8+ character piece of one, found in text."""
    found = []
    for s in ALL_SECRETS:
        pieces = [s] + [p for p in re.split(r"[^A-Za-z0-9]+", s) if len(p) >= 8]
        if any(p in text for p in pieces):
            found.append(s)
    return found


def _record(fmt: str, text: str) -> list[str]:
    leaked = leaks(text)
    tally.secrets(fmt, len(ALL_SECRETS), len(leaked))
    return leaked


def plant(tmp_path):
    """A log, a drafter checkpoint and a target config that carry the whole corpus."""
    lines = [
        f"(APIServer pid=1) INFO 05-14 09:11:52 [utils.py:189] non-default args: {ARGS!r}\n",
        "(APIServer pid=1) INFO 05-14 09:11:52 [utils.py:253] vLLM API server version 0.20.1\n",
    ]
    for ctx, _ in CORPUS:
        lines.append(f"INFO 05-14 09:11:53 [api_server.py:1] version check {ctx}\n")  # a startup-looking line
        lines.append(f"INFO 05-14 09:12:00 [metrics.py:101] SpecDecoding metrics: garbled {ctx}\n")  # malformed
    lines += [METRICS] * 4
    log = tmp_path / "secrets.log"
    log.write_text("".join(lines))
    drafter = tmp_path / "drafter"
    drafter.mkdir()
    cfg = json.loads((FIXTURES / "models/Qwen3.6-27B-DFlash/config.json").read_text())
    cfg.update(
        {
            "_name_or_path": "https://scraper:Wq9Xv4Zt7Lp2@prom.internal/model",
            "hf_token": "Rq8Lx3Wv7Mz2Np5T",
            "model_type": "sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N",
            "architectures": ["DFlashDraftModel", "hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1"],
        }
    )
    (drafter / "config.json").write_text(json.dumps(cfg))
    card = "# Drafter\n" + "".join(f"This checkpoint is still under training; {ctx}\n" for ctx, _ in CORPUS)
    (drafter / "README.md").write_text(card)
    return log, drafter


def test_the_redactor_removes_every_secret_of_the_corpus():
    for ctx, _secret in CORPUS + MULTILINE:
        assert not leaks(redact_text(ctx)), ctx
        assert redact_text(redact_text(ctx)) == redact_text(ctx), ctx  # redacting twice changes nothing
    assert not leaks(json.dumps(redact_any(ARGS)))
    assert not leaks(redact_text(repr(ARGS)))
    # as JSON strings (a report holds log lines and configs as strings) and as a Python repr
    for ctx, _ in CORPUS + MULTILINE:
        assert not leaks(redact_text(json.dumps({"line": ctx}))), ctx
        assert not leaks(redact_text(json.dumps({"line": ctx}, indent=2, ensure_ascii=False))), ctx
        assert not leaks(redact_text(repr([ctx]))), ctx
        json.loads(redact_text(json.dumps({"line": ctx})))  # and the document stays JSON
    tally.secrets("redactor", len(ALL_SECRETS), 0)


@pytest.mark.parametrize("fmt", [f.value for f in Format])
def test_no_secret_reaches_stdout_or_stderr_in_any_format(tmp_path, fmt):
    log, drafter = plant(tmp_path)
    res = run_cli(
        "diagnose",
        "--log",
        str(log),
        "--drafter",
        str(drafter),
        "--target",
        str(FIXTURES / "models/Qwen3.6-27B"),
        "--engine",
        "vllm==0.20.1",
        "--format",
        fmt,
        "--launch",
        "vllm serve Qwen/Qwen3.6-27B " + " ".join(c for c, _ in CORPUS),
    )
    assert res.returncode in (0, 1, 3), res.stderr
    assert "REDACTED" in res.stdout or fmt == "terminal"  # the secrets were there, and were replaced
    assert not _record(fmt, res.stdout + res.stderr)


@pytest.mark.parametrize("fmt", [f.value for f in Format])
def test_no_secret_reaches_a_report_file(tmp_path, fmt):
    log, drafter = plant(tmp_path)
    out = tmp_path / f"report.{fmt}"
    res = run_cli("diagnose", "--log", str(log), "--drafter", str(drafter), "--format", fmt, "-o", str(out))
    assert res.returncode in (0, 1, 3), res.stderr
    assert not _record(f"{fmt} --output", out.read_text() + res.stdout + res.stderr)


def test_no_secret_reaches_an_error_message():
    # What the user typed is echoed in errors: a URL with a password, a token as a path.
    res = run_cli(
        "diagnose",
        "--drafter",
        "https://scraper:Wq9Xv4Zt7Lp2@prom.internal/model",
        "--target",
        "hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1",
        "--log",
        "/nonexistent/sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N",
        "--format",
        "json",
    )
    assert not _record("error messages", res.stdout + res.stderr)
    assert res.returncode == 2 and res.stdout == "" and res.stderr.startswith("error: --log ")  # one redacted line


def test_no_secret_survives_in_evidence_built_by_any_collector():
    # Evidence values hold whatever a collector stored; the renderers must still catch what it missed.
    ev = EvidenceSet("local")
    for ctx, _ in CORPUS:
        ev.add(ctx, Source("command", ctx), Environment({"line": ctx, "HF_TOKEN": ctx}))
    ev.add(
        "args",
        Source("flag", "--launch"),
        LaunchConfig(engine="vllm", model=None, args=ARGS, speculative=ARGS["speculative_config"]),
    )
    report, _ = build_report(ev, checks=[])
    for fmt in Format:
        text = render(report, fmt)
        assert not _record(f"{fmt.value} (unredacted evidence)", text)
        if fmt == Format.JSON:
            json.loads(text)  # redaction must not break the document (a list, a null, a quoted value)


PROSE = st.text(alphabet=string.ascii_letters + string.digits + " .,;:()-/", max_size=40)


@given(st.sampled_from(CORPUS + MULTILINE), PROSE, PROSE)
def test_a_secret_inside_any_prose_is_redacted(item, before, after):
    tally.example("redactor:secret-in-prose")
    ctx, secret = item
    out = redact_text(f"{before} {ctx} {after}")
    tally.secrets("redactor (fuzzed context)", 1, int(secret in out))
    assert secret not in out


@given(st.text(alphabet="aZ09-_:=/'\"[]{}\\ @.%\n\thfskAIKtoenpswrd", min_size=1, max_size=8))
def test_redaction_time_is_linear_in_the_line_length(unit):
    # A hostile or merely long line (a logged prompt, a base64 blob) must not stall the report:
    # before the fix, 16 KB of "a" took 13 s in the key=value pattern.
    tally.example("redactor:long-lines")
    text = unit * (32_000 // len(unit))
    start = time.perf_counter()
    redact_text(text)
    assert time.perf_counter() - start < 2.0, f"{unit!r} x {len(text) // len(unit)} is slow"


def test_no_secret_reaches_a_bundle_or_its_replay(tmp_path):
    """`collect` writes a bundle that may be attached to a public issue; `check bundle` replays it."""
    import tarfile

    log, _ = plant(tmp_path)
    bundle = tmp_path / "host.tar.gz"
    res = run_cli("collect", "local", "--log", str(log), "-o", str(bundle), timeout=180)
    assert res.returncode in (0, 1, 3), res.stderr
    texts = [res.stdout, res.stderr]
    with tarfile.open(bundle) as tar:
        for m in tar.getmembers():
            if m.isreg():
                texts.append(tar.extractfile(m).read().decode("utf-8", "replace"))
    assert "REDACTED" in "\n".join(texts)  # the planted lines were collected, and filtered
    assert not _record("bundle files (collect)", "\n".join(texts))
    for fmt in ("terminal", "json", "markdown"):
        out = run_cli("check", "bundle", str(bundle), "--format", fmt, timeout=180)
        assert out.returncode in (0, 1, 3), out.stderr
        assert not _record(f"check bundle ({fmt})", out.stdout + out.stderr)


# -- every other output path ----------------------------------------------------------------------------
URL_SECRET = "Wq9Xv4Zt7Lp2"


@pytest.fixture
def metrics_url():
    """A /metrics endpoint (a saved vLLM scrape) on loopback, addressed with a user:password URL."""
    import http.server
    import threading

    body = (FIXTURES / "logs/vllm-metrics-2.prom").read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://scraper:{URL_SECRET}@127.0.0.1:{server.server_address[1]}/metrics"
    server.shutdown()


@pytest.mark.parametrize("fmt", ["terminal", "json", "markdown"])
def test_no_secret_reaches_the_github_step_summary_or_annotations(tmp_path, metrics_url, fmt):
    """Before: the step summary printed the /metrics URL with its password."""
    summary = tmp_path / "summary.md"
    junit = tmp_path / "gate.xml"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    texts = []
    for url in (metrics_url, metrics_url.replace("127.0.0.1:", "127.0.0.1:1")):  # measured, and unreachable
        res = run_cli(
            "gate",
            "--metrics",
            url,
            "--min-acceptance-length",
            "9",
            "--min-drafts",
            "1",
            "--format",
            fmt,
            "--junit",
            str(junit),
            env=env,
        )
        assert res.returncode in (1, 3), res.stderr
        texts += [res.stdout, res.stderr, summary.read_text(), junit.read_text()]
    assert "scraper:" in texts[2]  # the URL is shown, without its password
    assert URL_SECRET not in "\n".join(texts)
    assert not _record(f"GitHub summary + annotations + JUnit ({fmt})", "\n".join(texts))


@pytest.mark.parametrize(
    "argv",
    [
        ["diagnose", "sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N"],
        ["gate", "--log", "x", "--min-acceptance-length", "hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1"],
        ["diagnose", "--format", "ghp_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa"],
        ["check", "host", "--parallel", "xoxb-5821-Qz7Wk3Xn9Lv2"],
    ],
)
def test_no_secret_reaches_a_usage_error(argv):
    """Before: click echoed the unexpected argument or bad value as typed."""
    res = run_cli(*argv)
    assert res.returncode == 2 and res.stderr.startswith("error: "), res.stderr  # (one line, as every usage error)
    assert not _record("usage errors", res.stdout + res.stderr)


def test_no_secret_reaches_a_fleet_progress_line():
    """Before: each host's progress line printed its spec as given."""
    hosts = [
        f"ssh://deploy:{URL_SECRET}@gpu-1",
        "bundle:/nonexistent/sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N.tar.gz",
        "bundle:/nonexistent/hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1",
    ]
    for fmt in ("terminal", "json", "markdown"):
        res = run_cli("check", "host", *hosts, "--format", fmt, "--timeout", "5")
        assert res.returncode == 3, res.stderr
        assert res.stderr.count(": unreachable (") == 3, res.stderr
        assert not _record(f"fleet progress lines + table ({fmt})", res.stdout + res.stderr)


def test_no_secret_reaches_a_plot(tmp_path):
    """A plot's title names the report's target; SVG keeps text in comments, HTML in <title>."""
    pytest.importorskip("matplotlib")
    import dataclasses

    from dflash_doctor.render.plot import plot_data, render_plot

    report, _ = build_report(EvidenceSet("local"), checks=[])
    for ctx, _ in CORPUS[:12]:
        data = plot_data(dataclasses.replace(report, target=f"host {ctx}"))
        assert "host " in data.title
        for ext in (".svg", ".html"):
            blob = render_plot(data, ext).decode("utf-8", "replace")
            assert not _record(f"plots ({ext})", blob), ctx


def test_no_secret_reaches_junit_from_a_log_path(tmp_path):
    d = tmp_path / "ghp_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa"
    d.mkdir()
    log = d / "server.log"
    log.write_text(METRICS * 4)
    junit = tmp_path / "gate.xml"
    res = run_cli("gate", "--log", str(log), "--min-acceptance-length", "5", "--min-drafts", "1", "--junit", str(junit))
    assert res.returncode == 1, res.stderr
    assert not _record("JUnit + gate output (log path)", res.stdout + res.stderr + junit.read_text())
