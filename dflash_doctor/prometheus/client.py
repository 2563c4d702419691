"""A small client for the Prometheus HTTP API (`/api/v1/query`, `/api/v1/query_range`,
`/api/v1/status/buildinfo`) on httpx2, with the authentication Prometheus users have (bearer token
from a file or an environment variable, basic auth, a custom CA) and one-line errors.

Secrets never leave this module: they go into request headers only, never into a message, a repr or
a report. Every HTTP request is counted (`PromClient.requests`): the fleet's query budget is a
promise the benchmark checks.
"""

from __future__ import annotations

import os
import re
import ssl
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ..deadline import Deadline
from ..errors import DoctorError, ExitCode, UsageError
from ..safeio import JSONError, JSONLimit, load_json, read_regular

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
            where = f"--bearer-token-file {self.bearer_token_file}"
            token = _read_secret_file(self.bearer_token_file, "--bearer-token-file")
        elif self.bearer_token:
            where = "--bearer-token-env"
            token = check_secret(self.bearer_token, where)
        if token and not token.isascii():
            # An HTTP header is ASCII: the library's encoding error was an internal error naming the character.
            at = next(i for i, c in enumerate(token) if not c.isascii())
            raise UsageError(
                f"{where}: the token holds a character outside ASCII (character {at + 1}); it is not shown",
                hint="a bearer token is one line of ASCII text: check the file or the variable",
            )
        return {"Authorization": f"Bearer {token}"} if token else {}

    def basic(self) -> tuple[str, str] | None:
        if not self.basic_user:
            return None
        if self.basic_password_file:
            return self.basic_user, _read_secret_file(self.basic_password_file, "--basic-auth-file")
        if self.basic_password is not None:
            return self.basic_user, check_secret(self.basic_password, "--basic-auth-env")
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
        raw = read_regular(path, 1 << 16)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{flag} {path}: not UTF-8 text (byte {exc.start})") from None
    return check_secret(text, f"{flag} {path}")


# A line break, a NUL or another control character inside a secret: the header it goes into would be refused
# by the HTTP library, whose error quoted the whole header, secret and all, on the user's terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check_secret(value: str, where: str) -> str:
    """A token or password read from a file or an environment variable, trimmed like Prometheus trims its
    `*_file` secrets; one that is empty or holds a control character is refused, without showing it."""
    value = value.strip()
    if not value:
        raise UsageError(f"{where}: empty")
    bad = _CONTROL.search(value)
    if bad:
        what = {"\n": "a line break", "\r": "a carriage return", "\x00": "a NUL byte"}.get(
            bad.group(), "a control character"
        )
        line = value.count("\n", 0, bad.start()) + 1
        raise UsageError(
            f"{where}: the secret holds {what} (line {line}, character {bad.start() + 1}); it is not shown",
            hint="a token or password is one line of printable text: check the file or the variable",
        )
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
                # A fresh connection per request (a handful per command): the deadline sees each socket open.
                limits=httpx2.Limits(max_keepalive_connections=0),
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

    def _failure(self, exc: BaseException, watch: Deadline) -> PrometheusError:
        import httpx2

        where = self.shown_url
        if watch.expired or isinstance(exc, httpx2.TimeoutException):
            return PrometheusError(
                f"Prometheus at {where} did not answer within {self.timeout:g} s (the whole answer)",
                hint="raise --timeout, or narrow --since / --selector",
            )
        if isinstance(exc, httpx2.ConnectError):
            return PrometheusError(
                f"cannot reach Prometheus at {where}: {_reason(exc)}",
                hint="check the URL and port (Prometheus listens on :9090 by default) "
                "and that this machine can reach it",
            )
        if isinstance(exc, httpx2.TooManyRedirects):
            return PrometheusError(f"{where} redirects in a loop", hint="give the Prometheus base URL")
        return PrometheusError(
            f"cannot read Prometheus at {where}: {_reason(exc)}", hint="check the URL (http vs https) and --ca-file"
        )

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
        watch = Deadline(self.timeout)
        try:
            client = self._client()
            with watch, client.stream(method, path, data=form, extensions={"trace": watch.trace}) as resp:
                body = _read_capped(resp, MAX_RESPONSE_BYTES, watch)
                status, ctype = resp.status_code, resp.headers.get("content-type", "")
        except (httpx2.HTTPError, OSError) as exc:
            raise self._failure(exc, watch) from None
        doc = _json(body, where)
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


def _read_capped(resp, cap: int, watch: Deadline) -> bytes:
    chunks, total = [], 0
    for chunk in resp.iter_bytes():
        watch.check()
        total += len(chunk)
        if total > cap:
            raise PrometheusError(
                f"the answer from {resp.request.url.host} is larger than {cap >> 20} MiB",
                hint="narrow --selector (it matches far more series than a fleet of engines)",
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _json(body: bytes, where: str) -> Any:
    """The answer as JSON within safeio's caps (a 24 MB list of empty lists took 1.2 GB; 200 000 levels of
    nesting were an internal error); None when it is not JSON at all (an HTML page: said as such by the caller)."""

    try:
        return load_json(body, max_bytes=MAX_RESPONSE_BYTES)
    except JSONLimit as exc:
        raise PrometheusError(
            f"the answer from {where} is not a JSON document dflash-doctor reads: {exc}",
            hint="is this a Prometheus-compatible API? narrow --selector if the answer is huge",
        ) from None
    except JSONError:
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
