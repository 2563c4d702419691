"""A corpus of secrets, planted wherever a deployment leaks them (the server's non-default args,
startup and metrics lines, config.json, the model card, flags, error messages), run through every
output format and output path: nothing of any secret may come out."""

from __future__ import annotations

import json
import re
import string
import time

import pytest
from hypothesis import given, strategies as st

from dflash_doctor.doctor import build_report
from dflash_doctor.parse.launch import LaunchConfig
from dflash_doctor.payloads import Environment
from dflash_doctor.evidence import EvidenceSet, Kind, Source
from dflash_doctor.redact import redact_any, redact_text
from dflash_doctor.render import Format, render
from tests.conftest import FIXTURES, run_cli
from tests.hardening import tally

# (how it appears in the wild, the secret itself). Values are random-looking so a hit is a leak.
CORPUS = [
    ("--api-key sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N", "sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N"),
    ("OPENAI_API_KEY=sk-proj-Hq7Wc2Vn5Jx9Rt4Ym1Pk", "sk-proj-Hq7Wc2Vn5Jx9Rt4Ym1Pk"),
    ("HF_TOKEN=hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1", "hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1"),
    ("loading with token hf_Ke4Nw8Pz2Rb6Tq9Xm3Vc7Ys1Lj5Hd0", "hf_Ke4Nw8Pz2Rb6Tq9Xm3Vc7Ys1Lj5Hd0"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4cTcifQ.Zk8Lm3Np", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4cTcifQ.Zk8Lm3Np"),
    ("Authorization: Basic YWRtaW46UXc4Wm00Vng=", "YWRtaW46UXc4Wm00Vng="),
    ("metrics at https://scraper:Wq9Xv4Zt7Lp2@prom.internal:9090/metrics", "Wq9Xv4Zt7Lp2"),
    ("s3 creds AKIAQ7XZ4W2N8VK5MT3R", "AKIAQ7XZ4W2N8VK5MT3R"),
    ("aws_secret_access_key = Zr8Kq2Wn5Xv7Lp4Tm9Hc3Jb6Yd1Fs0GaQe5Rw7T", "Zr8Kq2Wn5Xv7Lp4Tm9Hc3Jb6Yd1Fs0GaQe5Rw7T"),
    ("GITHUB_TOKEN=ghp_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa", "ghp_Xk7Lm2Nq9Rt4Vw8Zb3Yc6Pd1Hf5Jg0Ks2Qa"),
    ("slack xoxb-5821-Qz7Wk3Xn9Lv2", "xoxb-5821-Qz7Wk3Xn9Lv2"),
    ("password=Qx7!Vb3Kz9mW", "Qx7!Vb3Kz9mW"),
    ('db password: "Zq4 Wx8 Tn2 Lk6"', "Zq4 Wx8 Tn2 Lk6"),
]

# The same kind of secrets as vLLM prints them in `non-default args` (a Python dict repr).
ARGS = {"model": "Qwen/Qwen3.6-27B", "api_key": ["Pk3Wz8Qx2Lm7Vn4R", "Tj5Hc9Yb1Ds6Fg0K"],
        "hf_token": "Rq8Lx3Wv7Mz2Np5T", "speculative_config": {"method": "dflash", "model": "z-lab/Qwen3.6-27B-DFlash",
                                                             "num_speculative_tokens": 15,
                                                             "secret": "Nz6Kw1Qy4Xb9Lc3V"},
        "ssl_keyfile_password": "Gh2Vm7Zq5Wt9Lx4K"}
ARG_SECRETS = ["Pk3Wz8Qx2Lm7Vn4R", "Tj5Hc9Yb1Ds6Fg0K", "Rq8Lx3Wv7Mz2Np5T", "Nz6Kw1Qy4Xb9Lc3V", "Gh2Vm7Zq5Wt9Lx4K"]
ALL_SECRETS = [s for _, s in CORPUS] + ARG_SECRETS

METRICS = ("INFO 05-14 09:13:47 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 1.19, Accepted "
           "throughput: 33.70 tokens/s, Drafted throughput: 2626.50 tokens/s, Accepted: 337 tokens, Drafted: 26265 "
           "tokens, Per-position acceptance rate: 0.172, 0.020, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, "
           "0.000, 0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 1.3%\n")


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
    lines = [f"(APIServer pid=1) INFO 05-14 09:11:52 [utils.py:189] non-default args: {ARGS!r}\n",
             "(APIServer pid=1) INFO 05-14 09:11:52 [utils.py:253] vLLM API server version 0.20.1\n"]
    for ctx, _ in CORPUS:
        lines.append(f"INFO 05-14 09:11:53 [api_server.py:1] version check {ctx}\n")  # a startup-looking line
        lines.append(f"INFO 05-14 09:12:00 [metrics.py:101] SpecDecoding metrics: garbled {ctx}\n")  # malformed
    lines += [METRICS] * 4
    log = tmp_path / "secrets.log"
    log.write_text("".join(lines))
    drafter = tmp_path / "drafter"
    drafter.mkdir()
    cfg = json.loads((FIXTURES / "models/Qwen3.6-27B-DFlash/config.json").read_text())
    cfg.update({"_name_or_path": "https://scraper:Wq9Xv4Zt7Lp2@prom.internal/model", "hf_token": "Rq8Lx3Wv7Mz2Np5T",
                "model_type": "sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N", "architectures": ["DFlashDraftModel",
                                                                             "hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1"]})
    (drafter / "config.json").write_text(json.dumps(cfg))
    card = "# Drafter\n" + "".join(f"This checkpoint is still under training; {ctx}\n" for ctx, _ in CORPUS)
    (drafter / "README.md").write_text(card)
    return log, drafter


def test_the_redactor_removes_every_secret_of_the_corpus():
    for ctx, secret in CORPUS:
        assert not leaks(redact_text(ctx)), ctx
    assert not leaks(json.dumps(redact_any(ARGS)))
    assert not leaks(redact_text(repr(ARGS)))
    tally.secrets("redactor", len(ALL_SECRETS), 0)


@pytest.mark.parametrize("fmt", [f.value for f in Format])
def test_no_secret_reaches_stdout_or_stderr_in_any_format(tmp_path, fmt):
    log, drafter = plant(tmp_path)
    res = run_cli("diagnose", "--log", str(log), "--drafter", str(drafter), "--target",
                  str(FIXTURES / "models/Qwen3.6-27B"), "--engine", "vllm==0.20.1", "--format", fmt,
                  "--launch", "vllm serve Qwen/Qwen3.6-27B " + " ".join(c for c, _ in CORPUS))
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
    res = run_cli("diagnose", "--drafter", "https://scraper:Wq9Xv4Zt7Lp2@prom.internal/model",
                  "--target", "hf_QmZ7rT2vXk9LpW4sN8bY3cJd6FhGa1", "--log", "/nonexistent/sk-live-9Qv2Lr7Tx4Wm8Kp3Zb6N",
                  "--format", "json")
    assert not _record("error messages", res.stdout + res.stderr)
    assert res.returncode == 2 and res.stdout == "" and res.stderr.startswith("error: --log ")  # one redacted line


def test_no_secret_survives_in_evidence_built_by_any_collector():
    # Evidence values hold whatever a collector stored; the renderers must still catch what it missed.
    ev = EvidenceSet("local")
    for ctx, _ in CORPUS:
        ev.add(Kind.ENVIRONMENT, ctx, Source("command", ctx), Environment({"line": ctx, "HF_TOKEN": ctx}))
    ev.add(Kind.LAUNCH, "args", Source("flag", "--launch"), LaunchConfig(engine="vllm", model=None, args=ARGS,
                                                                          speculative=ARGS["speculative_config"]))
    report, _ = build_report(ev, checks=[])
    for fmt in Format:
        text = render(report, fmt)
        assert not _record(f"{fmt.value} (unredacted evidence)", text)
        if fmt == Format.JSON:
            json.loads(text)  # redaction must not break the document (a list, a null, a quoted value)


PROSE = st.text(alphabet=string.ascii_letters + string.digits + " .,;:()-/", max_size=40)


@given(st.sampled_from(CORPUS), PROSE, PROSE)
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
