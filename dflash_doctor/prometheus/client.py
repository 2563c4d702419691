"""A small client for the Prometheus HTTP API (`/api/v1/query`, `/api/v1/query_range`,
`/api/v1/status/buildinfo`) on httpx2, with the authentication Prometheus users have (bearer token
from a file or an environment variable, basic auth, a custom CA) and one-line errors.

Secrets never leave this module: they go into request headers only, never into a message, a repr or
a report. Every HTTP request is counted (`PromClient.requests`): the fleet's query budget is a
promise the benchmark checks.
"""

from __future__ import annotations

import json
import os
import ssl
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ..errors import DoctorError, ExitCode, UsageError

DEFAULT_TIMEOUT = 30.0
# A query answer larger than this is not what a spec-decode query returns: refuse it rather than
# hold it in memory (a wrong URL serving a large file, or a selector matching far too much).
MAX_RESPONSE_BYTES = 256 << 20


class PrometheusError(DoctorError):
    """Prometheus could not be read: one line and a hint, exit 3 (2 when the user's query is bad)."""


@dataclass(frozen=True)
class PromAuth:
    """How to authenticate. Secrets given as values (read from the environment by the CLI) are kept
    out of repr; files are read only when a request is built."""

    bearer_token_file: str | None = None
    bearer_token: str | None = field(default=None, repr=False)
    basic_user: str | None = None
    basic_password_file: str | None = None
    basic_password: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    insecure: bool = False

    def headers(self) -> dict[str, str]:
        token = None
        if self.bearer_token_file:
            token = _read_secret_file(self.bearer_token_file, "--bearer-token-file")
        elif self.bearer_token:
            token = self.bearer_token.strip()
        return {"Authorization": f"Bearer {token}"} if token else {}

    def basic(self) -> tuple[str, str] | None:
        if not self.basic_user:
            return None
        if self.basic_password_file:
            return self.basic_user, _read_secret_file(self.basic_password_file, "--basic-auth-file")
        if self.basic_password is not None:
            return self.basic_user, self.basic_password
        raise UsageError(
            "--basic-auth-user needs a password source", hint="give --basic-auth-file FILE or --basic-auth-env VAR"
        )

    def verify(self) -> Any:
        if self.insecure:
            return False
        if self.ca_file:
            if not os.path.isfile(self.ca_file):
                raise UsageError(f"--ca-file {self.ca_file}: file not found")
            try:
                return ssl.create_default_context(cafile=self.ca_file)
            except (ssl.SSLError, OSError) as exc:
                raise UsageError(f"--ca-file {self.ca_file}: not a PEM certificate bundle ({exc})") from None
        return True


def _read_secret_file(path: str, flag: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            value = fh.read(1 << 16).strip()
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot read ({exc.strerror or exc})") from None
    if not value:
        raise UsageError(f"{flag} {path}: the file is empty")
    return value


def normalise_url(url: str) -> str:
    """The API root: scheme added when missing, a trailing `/`, `/graph` or `/api/v1/…` removed
    (users paste the address from their browser). A path prefix (behind a proxy) is kept."""
    u = url.strip()
    if not u:
        raise UsageError("--prometheus needs a URL", hint="e.g. --prometheus http://prometheus:9090")
    if "://" not in u:
        u = "http://" + u
    parts = urlsplit(u)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--prometheus {url!r} is not an http(s) URL", hint="e.g. --prometheus http://prometheus:9090")
    path = parts.path.rstrip("/")
    for tail in ("/graph", "/query", "/alerts", "/targets"):
        if path.endswith(tail):
            path = path[: -len(tail)]
    if "/api/v1" in path:
        path = path[: path.index("/api/v1")]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def display_url(url: str) -> str:
    """The URL as shown in reports: without user:password@."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass
class QueryLog:
    kind: str  # "query" | "query_range" | "buildinfo"
    expr: str
    seconds: float
    series: int


@dataclass
class PromClient:
    url: str
    auth: PromAuth = field(default_factory=PromAuth)
    timeout: float = DEFAULT_TIMEOUT
    requests: int = 0
    log: list[QueryLog] = field(default_factory=list)
    _http: Any = None

    def __post_init__(self) -> None:
        self.url = normalise_url(self.url)

    @property
    def shown_url(self) -> str:
        return display_url(self.url)

    def _client(self):
        if self._http is None:
            import httpx2

            parts = urlsplit(self.url)
            basic = self.auth.basic()
            if basic is None and parts.username is not None:
                basic = (unquote(parts.username), unquote(parts.password or ""))
            base = display_url(self.url)
            self._http = httpx2.Client(
                base_url=base,
                headers={"Accept": "application/json", **self.auth.headers()},
                auth=basic,
                verify=self.auth.verify(),
                timeout=self.timeout,
                follow_redirects=True,
                max_redirects=3,
            )
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> PromClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the three endpoints -----------------------------------------------------------------

    def buildinfo(self) -> dict:
        """Prometheus' version: also proves the URL is a Prometheus HTTP API before the real queries."""
        return self._call("GET", "/api/v1/status/buildinfo", None, "buildinfo", "")

    def query(self, expr: str, at: float | None = None) -> list[dict]:
        data = {"query": expr}
        if at is not None:
            data["time"] = f"{at:.3f}"
        return self._result(self._call("POST", "/api/v1/query", data, "query", expr), "vector")

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[dict]:
        data = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
        return self._result(self._call("POST", "/api/v1/query_range", data, "query_range", expr), "matrix")

    # --- plumbing ------------------------------------------------------------------------------

    def _result(self, data: dict, want: str) -> list[dict]:
        kind = data.get("resultType")
        result = data.get("result")
        if kind != want or not isinstance(result, list):
            raise PrometheusError(
                f"{self.shown_url} answered a {want} query with {kind!r}, not a {want}",
                hint="is this a Prometheus-compatible API?",
            )
        return result

    def _call(self, method: str, path: str, form: dict | None, kind: str, expr: str) -> dict:
        import httpx2

        where = self.shown_url
        t0 = time.perf_counter()
        self.requests += 1
        try:
            client = self._client()
            with client.stream(method, path, data=form) as resp:
                body = _read_capped(resp, MAX_RESPONSE_BYTES)
                status, ctype = resp.status_code, resp.headers.get("content-type", "")
        except httpx2.TimeoutException:
            raise PrometheusError(
                f"Prometheus at {where} did not answer within {self.timeout:g} s",
                hint="raise --timeout, or narrow --since / --selector",
            ) from None
        except httpx2.ConnectError as exc:
            raise PrometheusError(
                f"cannot reach Prometheus at {where}: {_reason(exc)}",
                hint="check the URL and port (Prometheus listens on :9090 by default) "
                "and that this machine can reach it",
            ) from None
        except httpx2.TooManyRedirects:
            raise PrometheusError(f"{where} redirects in a loop", hint="give the Prometheus base URL") from None
        except (httpx2.HTTPError, OSError) as exc:
            raise PrometheusError(
                f"cannot read Prometheus at {where}: {_reason(exc)}", hint="check the URL (http vs https) and --ca-file"
            ) from None
        doc = _json(body)
        if status in (401, 403):
            raise PrometheusError(
                f"Prometheus at {where} refused the request (HTTP {status})",
                hint="give credentials: --bearer-token-file FILE, --bearer-token-env VAR or "
                "--basic-auth-user USER with --basic-auth-file FILE",
            )
        if not isinstance(doc, dict) or doc.get("status") not in ("success", "error"):
            what = "an HTML page" if "html" in ctype else (f"HTTP {status}" if status >= 400 else ctype or "no JSON")
            raise PrometheusError(
                f"{where} is not a Prometheus HTTP API (it answered {path} with {what})",
                hint="give the Prometheus base URL, e.g. http://prometheus:9090 — not a /metrics "
                "page or a Grafana address",
            )
        if doc["status"] == "error":
            err = str(doc.get("error") or "")[:300]
            if doc.get("errorType") == "bad_data" or status == 400:
                raise PrometheusError(
                    f"Prometheus rejected the query: {err}",
                    hint="check --selector: label matchers in braces, e.g. --selector '{job=\"vllm\"}'",
                    exit_code=ExitCode.USAGE,
                )
            raise PrometheusError(
                f"Prometheus at {where} failed the query ({doc.get('errorType')}): {err}",
                hint="narrow --since or --selector if it timed out or ran out of samples",
            )
        data = doc.get("data")
        if not isinstance(data, dict):
            raise PrometheusError(
                f"{where} answered without a data object", hint="is this a Prometheus-compatible API?"
            )
        n = len(data.get("result") or ()) if isinstance(data.get("result"), list) else 0
        self.log.append(QueryLog(kind, expr, time.perf_counter() - t0, n))
        return data


def _read_capped(resp, cap: int) -> bytes:
    chunks, total = [], 0
    for chunk in resp.iter_bytes():
        total += len(chunk)
        if total > cap:
            raise PrometheusError(
                f"the answer from {resp.request.url.host} is larger than {cap >> 20} MiB",
                hint="narrow --selector (it matches far more series than a fleet of engines)",
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    low = text.lower()
    if "refused" in low:
        return "connection refused"
    if "name or service not known" in low or "nodename nor servname" in low or "getaddrinfo" in low:
        return "unknown host name"
    if "certificate" in low or "ssl" in low:
        return "TLS verification failed (give --ca-file for a private CA)"
    return text.splitlines()[0][:200]
