"""A whole-answer deadline for HTTP requests made with httpx2 (Prometheus' API, a /metrics page).

httpx's timeouts are per operation: each read may take that long, so a server trickling a byte a second keeps a
request alive for as many seconds as it has bytes. This deadline bounds the whole answer.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time


class Deadline:
    """A whole-answer deadline for one request: httpx's timeouts are per read, so a server sending a byte a
    second kept `--timeout 3` waiting a second per byte. The sockets the request opens are seen through httpx's `trace`
    extension; when the deadline passes, they are shut down, which ends any read blocked on them (headers or
    body), and the request fails as timed out. Reads between chunks check the clock too."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sockets: list = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()

    def trace(self, name: str, info: dict) -> None:
        if name in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                with self._lock:
                    self._sockets.append(sock)
                    if self.expired:
                        self._shut(sock)

    def check(self) -> None:
        if time.monotonic() >= self.end:
            self._cut()
            raise TimeoutError(f"no whole answer within {self.seconds:g} s")

    def _cut(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def fetch_bytes(url: str, timeout: float, max_bytes: int, accept: str = "text/plain") -> bytes:
    """GET `url` (a /metrics page) with the whole-answer deadline: at most `max_bytes` + 1 bytes (the caller
    says what more means). OSError with a one-line reason on failure (TimeoutError for the deadline)."""
    import httpx2

    watch = Deadline(timeout)
    try:
        with (
            watch,
            httpx2.Client(timeout=timeout, follow_redirects=True, max_redirects=3) as client,
            client.stream("GET", url, headers={"Accept": accept}, extensions={"trace": watch.trace}) as resp,
        ):
            if resp.status_code >= 400:
                raise OSError(f"HTTP {resp.status_code}")
            chunks, total = [], 0
            for chunk in resp.iter_bytes():
                watch.check()
                chunks.append(chunk)
                total += len(chunk)
                if total > max_bytes:
                    break
            return b"".join(chunks)
    except (httpx2.HTTPError, OSError) as exc:
        if watch.expired or isinstance(exc, httpx2.TimeoutException):
            raise TimeoutError(f"no whole answer within {timeout:g} s") from None
        if isinstance(exc, httpx2.HTTPError):
            raise OSError(_reason(exc)) from None
        raise


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]
