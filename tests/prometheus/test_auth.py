"""Authentication against a real Prometheus: TLS with a private CA and basic auth (Prometheus' own
--web.config.file), a bearer token checked by a forwarding proxy in front of it, and secrets that
never reach any output."""

from __future__ import annotations

import datetime
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import run_cli
from tests.prometheus.conftest import GOOD
from tests.prometheus.fakeengine import VLLM, FakeEngine
from tests.sshd import free_port

pytestmark = [pytest.mark.slow, pytest.mark.prometheus]

PASSWORD = "s3cret-Pr0m-passw0rd"
TOKEN = "tok-7f2c9a4e1b8d6a0c3e5f"


def _ca_and_cert(d):
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dflash-doctor test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (d / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (d / "server.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (d / "server.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )


def _wait_for_samples(url: str, ca, n: int, limit: float = 30.0) -> None:
    """Until Prometheus holds n scrapes of the engine (under load its first scrape can be late)."""
    import base64
    import ssl
    import time
    import urllib.parse

    ctx = ssl.create_default_context(cafile=str(ca))
    q = urllib.parse.quote("count_over_time(vllm:spec_decode_num_drafts_total[30s])")
    req = urllib.request.Request(
        f"{url}/api/v1/query?query={q}",
        headers={"Authorization": "Basic " + base64.b64encode(f"doctor:{PASSWORD}".encode()).decode()},
    )
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=5) as resp:
                result = json.loads(resp.read())["data"]["result"]
            if result and float(result[0]["value"][1]) >= n:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"Prometheus at {url} held fewer than {n} scrapes after {limit:g} s")


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    import bcrypt

    from tests.prometheus.promserver import prometheus_available, start_prometheus

    reason = prometheus_available()
    if reason:
        pytest.skip(f"needs a real Prometheus: {reason}")
    d = tmp_path_factory.mktemp("secured")
    _ca_and_cert(d)
    digest = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
    web = d / "web.yml"
    web.write_text(
        f"tls_server_config:\n  cert_file: {d / 'server.pem'}\n  key_file: {d / 'server.key'}\n"
        f"basic_auth_users:\n  doctor: '{digest}'\n"
    )
    (d / "password").write_text(PASSWORD + "\n")
    (d / "wrong").write_text("not-the-password\n")
    engine = FakeEngine(VLLM, GOOD).start()
    prom = None
    try:
        prom = start_prometheus(d, [engine.target], web_config=web, scheme="https")
        _wait_for_samples(prom.url, d / "ca.pem", 3)
        yield prom, d
    finally:
        if prom is not None:
            prom.stop()
        engine.stop()


def test_tls_with_private_ca_and_basic_auth(secured):
    prom, d = secured
    proc = run_cli(
        "fleet",
        "--prometheus",
        prom.url,
        "--since",
        "30s",
        "--step",
        "2s",
        "--ca-file",
        str(d / "ca.pem"),
        "--basic-auth-user",
        "doctor",
        "--basic-auth-file",
        str(d / "password"),
        "--format",
        "json",
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert len(json.loads(proc.stdout)["engines"]) == 1
    assert PASSWORD not in proc.stdout + proc.stderr


def test_basic_auth_password_from_env(secured):
    prom, d = secured
    proc = run_cli(
        "fleet",
        "--prometheus",
        prom.url,
        "--since",
        "30s",
        "--step",
        "2s",
        "--ca-file",
        str(d / "ca.pem"),
        "--basic-auth-user",
        "doctor",
        "--basic-auth-env",
        "PROM_PW",
        env={"PROM_PW": PASSWORD},
    )
    assert proc.returncode in (0, 1), proc.stderr


def test_wrong_password_is_one_line_and_never_printed(secured):
    prom, d = secured
    proc = run_cli(
        "fleet",
        "--prometheus",
        prom.url,
        "--ca-file",
        str(d / "ca.pem"),
        "--basic-auth-user",
        "doctor",
        "--basic-auth-file",
        str(d / "wrong"),
    )
    assert proc.returncode == 3
    assert proc.stderr.startswith("error: Prometheus at") and "HTTP 401" in proc.stderr
    assert "not-the-password" not in proc.stdout + proc.stderr


def test_unknown_ca_says_to_give_ca_file(secured):
    prom, d = secured
    proc = run_cli(
        "fleet", "--prometheus", prom.url, "--basic-auth-user", "doctor", "--basic-auth-file", str(d / "password")
    )
    assert proc.returncode == 3
    assert "TLS" in proc.stderr and "--ca-file" in proc.stderr and "Traceback" not in proc.stderr


def test_password_in_the_url_is_used_and_not_shown(secured):
    prom, d = secured
    url = prom.url.replace("https://", f"https://doctor:{PASSWORD}@")
    proc = run_cli(
        "fleet",
        "--prometheus",
        url,
        "--since",
        "30s",
        "--step",
        "2s",
        "--ca-file",
        str(d / "ca.pem"),
        "--format",
        "json",
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert PASSWORD not in proc.stdout + proc.stderr


class _BearerProxy:
    """A reverse proxy in front of Prometheus that demands `Authorization: Bearer TOKEN` (as
    oauth2-proxy or a cloud gateway would) and forwards the rest with the basic-auth credentials."""

    def __init__(self, upstream: str, ca: str):
        import base64
        import ssl

        ctx = ssl.create_default_context(cafile=ca)
        basic = "Basic " + base64.b64encode(f"doctor:{PASSWORD}".encode()).decode()

        class Handler(BaseHTTPRequestHandler):
            def _forward(self):
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self.send_error(401)
                    return
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                req = urllib.request.Request(
                    upstream + self.path,
                    data=body,
                    method=self.command,
                    headers={
                        "Authorization": basic,
                        "Content-Type": self.headers.get("Content-Type", "application/octet-stream"),
                    },
                )
                with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
                    data = resp.read()
                    self.send_response(resp.status)
                    self.send_header("Content-Type", resp.headers.get("Content-Type", "application/json"))
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

            do_GET = do_POST = _forward

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def bearer_proxy(secured):
    prom, d = secured
    proxy = _BearerProxy(prom.url, str(d / "ca.pem"))
    yield proxy
    proxy.stop()


def test_bearer_token_from_file_and_env(bearer_proxy, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    for auth in (["--bearer-token-file", str(token_file)], ["--bearer-token-env", "PROM_TOKEN"]):
        proc = run_cli(
            "fleet",
            "--prometheus",
            bearer_proxy.url,
            "--since",
            "30s",
            "--step",
            "2s",
            "--format",
            "json",
            *auth,
            env={"PROM_TOKEN": TOKEN},
        )
        assert proc.returncode in (0, 1), proc.stderr
        assert TOKEN not in proc.stdout + proc.stderr
    proc = run_cli("fleet", "--prometheus", bearer_proxy.url)
    assert proc.returncode == 3 and "HTTP 401" in proc.stderr
