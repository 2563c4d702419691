"""A real Prometheus server for tests (Debian's `prometheus`, installed by .ci/run): its own config,
TSDB directory and free loopback port; stopped by its PID.

    prom = start_prometheus(tmp_path, targets=["127.0.0.1:8001"], rule_files=[path])
    ...                                   # prom.url
    prom.stop()
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.sshd import free_port, stop_process

PROMETHEUS_BIN = "/usr/bin/prometheus"
PROMTOOL_BIN = "/usr/bin/promtool"


def prometheus_available() -> str | None:
    """None when a test Prometheus can run here, else the reason it cannot."""
    for binary in (PROMETHEUS_BIN, PROMTOOL_BIN):
        if not os.access(binary, os.X_OK):
            return f"{binary} is not installed (Debian package prometheus, installed by .ci/run)"
    return None


@dataclass
class PromServer:
    url: str
    port: int
    dir: Path
    proc: subprocess.Popen

    def stop(self) -> None:
        stop_process(self.proc)

    def api(self, path: str, timeout: float = 5.0) -> dict:
        with urllib.request.urlopen(self.url + path, timeout=timeout) as resp:
            return json.loads(resp.read())


def start_prometheus(
    tmp: Path,
    targets: list[str] = (),
    rule_files: list[str] = (),
    interval: str = "1s",
    storage: Path | None = None,
    web_config: Path | None = None,
    scheme: str = "http",
    extra_args: list[str] = (),
) -> PromServer:
    """Start Prometheus scraping `targets` every `interval` (rules evaluated as often); returns once ready."""
    reason = prometheus_available()
    if reason:
        raise RuntimeError(reason)
    d = Path(tmp) / "prometheus"
    d.mkdir(parents=True, exist_ok=True)
    cfg = d / "prometheus.yml"
    lines = [
        f"global:\n  scrape_interval: {interval}\n  evaluation_interval: {interval}\n  scrape_timeout: {interval}\n"
    ]
    if rule_files:
        lines.append("rule_files:\n" + "".join(f"  - {p}\n" for p in rule_files))
    if targets:
        lines.append(
            "scrape_configs:\n  - job_name: engines\n    static_configs:\n      - targets: ["
            + ", ".join(f"'{t}'" for t in targets)
            + "]\n"
        )
    cfg.write_text("".join(lines))
    port = free_port()
    args = [
        PROMETHEUS_BIN,
        f"--config.file={cfg}",
        f"--storage.tsdb.path={storage or d / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
        *extra_args,
    ]
    if web_config is not None:
        args.append(f"--web.config.file={web_config}")
    with open(d / "prometheus.log", "ab") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(args, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    url = f"{scheme}://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited: {(d / 'prometheus.log').read_text()[-2000:]}")
        try:
            import socket

            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                pass
            if web_config is not None:
                break  # behind TLS / auth: the port answering is enough
            with urllib.request.urlopen(url + "/-/ready", timeout=1) as resp:
                if resp.status == 200:
                    break
        except OSError:
            time.sleep(0.1)
    else:
        stop_process(proc)
        raise RuntimeError("prometheus did not become ready within 20 s")
    return PromServer(url, port, d, proc)
