"""Collect evidence from a host (local, SSH or a bundle) — read-only, and without copying gigabytes.

What is gathered, and how, on the host itself:
  * serving processes (vLLM, SGLang) from /proc: argv, the speculative config, relevant environment;
  * the log (--log PATH, else the process's stdout/stderr file, docker logs, or the unit's journal),
    FILTERED ON THE HOST with `grep -F` so only spec-decode and startup lines cross the network;
  * the engine's version and location from the serving interpreter's importlib.metadata, and
    source probes of that installed package (grep over its files, answered from the source on disk);
  * GPUs (nvidia-smi; its absence is a fact), drafter/target configs, model cards and weight headers
    from the host's HF cache, and a /metrics scrape made on the host.

Read-only guarantee: every command is one of the argv shapes built in this module (grep, head,
find, readlink, stat, nvidia-smi, the serving interpreter running a fixed read-only script, and the
fixed `sh -c` scripts in READONLY_SCRIPTS with user values passed as positional parameters, never
spliced into the script). Nothing is written, killed or restarted. tests/hosts checks this by
recording every command.
"""

from __future__ import annotations

import json
import os
import re
import struct
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from ..evidence import EvidenceSet, Kind, Source
from ..hosts.base import Host
from ..parse.launch import LaunchConfig, parse_argv, redact_argv
from ..parse.logscan import LINE_PARSERS, STARTUP_LITERALS, LogScan, scan_lines
from ..redact import REDACTED, is_secret_key, redact_text
from . import files as file_inputs

# Environment variables that change spec-decode behaviour or say where models live.
RELEVANT_ENV = ("VLLM_USE_V2_MODEL_RUNNER", "VLLM_LOG_STATS_INTERVAL", "VLLM_ATTENTION_BACKEND", "VLLM_USE_V1",
                "VLLM_LOGGING_LEVEL", "VLLM_CONFIGURE_LOGGING", "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
                "TRANSFORMERS_CACHE", "HF_HUB_OFFLINE", "CUDA_VISIBLE_DEVICES", "SGLANG_ENABLE_SPEC_V2")

# The only shell scripts the collector ever runs. Values arrive as "$1", "$2"…, never inside the text.
# Spec-decode lines go to a ring buffer (the last n are kept); other matching lines (startup facts)
# are kept up to `head`. stderr gets "<spec lines> <all matching lines>". The ring bounds the transfer
# whatever the log size.
_AWK = ("'/SpecDecoding metrics|Speculative metrics|Decode batch|accept len/ {t++; buf[t%n]=$0; next} "
        "h<head {h++; print} END{s=t-n+1; if(s<1)s=1; for(i=s;i<=t;i++)print buf[i%n]; "
        "print t \" \" NR > \"/dev/stderr\"}'")
FILTER_LOG = 'grep -a -F -f - -- "$1" | awk -v n="$2" -v head="$3" ' + _AWK
FILTER_DOCKER = 'docker logs "$1" 2>&1 | grep -a -F -f - | awk -v n="$2" -v head="$3" ' + _AWK
FILTER_JOURNAL = 'journalctl --no-pager -o cat -u "$1" | grep -a -F -f - | awk -v n="$2" -v head="$3" ' + _AWK
FIND_SERVERS = "grep -l -a -E -e 'vllm|sglang' /proc/[0-9]*/cmdline 2>/dev/null; exit 0"
EXISTING = 'for f; do [ -e "$f" ] && printf "%s\\n" "$f"; done; exit 0'
READONLY_SCRIPTS = (FILTER_LOG, FILTER_DOCKER, FILTER_JOURNAL, FIND_SERVERS, EXISTING)

# Run by the serving interpreter: finds the engine without importing it (find_spec does not run
# the package's __init__), reads its installed version.
ENGINE_SCRIPT = r"""
import importlib.metadata as md, importlib.util as iu, json, sys
out = {"python": sys.version.split()[0]}
for name in ("vllm", "sglang"):
    try:
        v = md.version(name)
    except Exception:
        v = None
    try:
        s = iu.find_spec(name)
        loc = list(s.submodule_search_locations or []) if s else []
    except Exception:
        loc = []
    if v or loc:
        out[name] = {"version": v, "location": loc[0] if loc else None}
print(json.dumps(out))
"""
# Run by the serving interpreter: GET the URL given as argv[1], keep only spec-decode samples.
SCRAPE_SCRIPT = r"""
import sys, urllib.request
try:
    body = urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2])).read(64 << 20).decode("utf-8", "replace")
except Exception as exc:
    sys.stderr.write("scrape failed: %s\n" % (exc,)); sys.exit(3)
keep = ("spec_decode", "sglang:spec", "vllm:num_requests", "sglang:num_running")
sys.stdout.write("".join(l + "\n" for l in body.splitlines() if any(k in l for k in keep)))
"""
INTERPRETER_SCRIPTS = (ENGINE_SCRIPT, SCRAPE_SCRIPT)

# Engine source files the probes read (relative to the package directory).
VLLM_SOURCES = ("v1/worker/gpu_model_runner.py", "v1/spec_decode/dflash.py", "v1/spec_decode/eagle.py",
                "v1/spec_decode/utils.py", "model_executor/models/qwen3_dflash.py",
                "model_executor/models/eagle3_utils.py", "v1/worker/gpu/spec_decode/dflash.py",
                "v1/worker/gpu/model_runner.py")
SGLANG_SOURCES = ("srt/models/qwen3_dflash.py", "srt/models/dflash.py", "srt/speculative/dflash_worker.py",
                  "srt/speculative/dflash_utils.py", "srt/server_args.py")
SOURCE_LITERALS = ("target_layer_ids", "aux_hidden_state_layer_ids", "layer_types", "sliding_window",
                   "NotImplementedError", "VLLM_USE_V2_MODEL_RUNNER", "use_v2_model_runner", "issues/40898")

LOG_HEAD_LINES = 400  # startup lines kept (they come first)
LOG_TAIL_LINES = 2500  # last spec-decode lines kept: ~7 h at vLLM's 10 s interval, ~1 MiB at most


@dataclass
class HostOptions:
    log: str | None = None  # a log path on the host
    timeout: float = 60.0  # per command
    log_timeout: float = 600.0  # the remote grep over a large log
    metrics: bool = True
    pid: int | None = None  # examine this serving process (a host may run several)
    parallel: int = 6  # concurrent commands on one host (sshd's MaxSessions defaults to 10)


@dataclass
class ServingProcess:
    pid: int
    argv: tuple[str, ...]  # redacted
    launch: LaunchConfig
    env: dict[str, str]  # relevant variables only, secrets redacted
    secret_env: tuple[str, ...]  # names of secret variables that are set (values never kept)
    stdout: str | None = None
    stderr: str | None = None
    cgroup: str | None = None
    interpreter: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "argv": list(self.argv), "engine": self.launch.engine, "model": self.launch.model,
                "env": self.env, "secret_env": list(self.secret_env), "stdout": self.stdout, "stderr": self.stderr,
                "interpreter": self.interpreter, "notes": list(self.notes)}


# --- privacy filter shared by live collection and bundles ------------------------------------

_PROC_FILE = re.compile(r"^/proc/\d+/(cmdline|environ)$")


def filter_environ(raw: bytes) -> tuple[dict[str, str], tuple[str, ...]]:
    env, secrets = {}, []
    for item in raw.split(b"\0"):
        k, sep, v = item.decode("utf-8", "replace").partition("=")
        if not sep:
            continue
        if is_secret_key(k):
            secrets.append(k)
        elif k in RELEVANT_ENV or k in ("HOME", "PYTHONPATH", "PATH"):
            env[k] = redact_text(v)
    return env, tuple(sorted(secrets))


def sanitize(op: str, key: str, data: bytes) -> bytes:
    """What a bundle may keep: relevant environment only, argv and text with secrets redacted."""
    m = _PROC_FILE.match(key) if op == "read_file" else None
    if m and m.group(1) == "environ":
        env, secrets = filter_environ(data)
        items = [f"{k}={v}" for k, v in env.items()] + [f"{k}={REDACTED}" for k in secrets]
        return "\0".join(items).encode() + (b"\0" if items else b"")
    if m and m.group(1) == "cmdline":
        words = data.decode("utf-8", "replace").rstrip("\0").split("\0")
        return "\0".join(redact_argv(words)).encode() + b"\0"
    if key.endswith(".safetensors") or b"\0" in data[:4096] and not data[:8].isascii():
        return data  # weight headers: binary, and hold no secrets
    return redact_text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


# --- collection --------------------------------------------------------------------------------

class HostCollector:
    def __init__(self, host: Host, options: HostOptions | None = None,
                 progress: Callable[[str], None] | None = None):
        self.host = host
        self.opt = options or HostOptions()
        self.progress = progress or (lambda msg: None)
        self.label = getattr(host, "origin", None) and f"{host.origin} (bundle)" or host.name
        self.ev = EvidenceSet(label=self.label)
        self.facts: dict[str, Any] = {}
        self._pool = ThreadPoolExecutor(max_workers=max(1, self.opt.parallel))

    def src(self, kind: str, location: str) -> Source:
        return Source(kind, location, host=self.label)

    def collect(self) -> EvidenceSet:
        t0 = time.monotonic()
        try:
            self._collect()
        finally:
            self._pool.shutdown(wait=True)
        elapsed = time.monotonic() - t0
        value = {"host": self.label, "bytes_received": getattr(self.host, "bytes_received", 0),
                 "bytes_sent": getattr(self.host, "bytes_sent", 0),
                 "commands": len(getattr(self.host, "commands", []) or []), "seconds": round(elapsed, 2), **self.facts}
        self.ev.add(Kind.HOST, f"{self.label}: {value['commands']} read-only commands, "
                               f"{_size(value['bytes_received'])} received in {elapsed:.1f} s"
                    + (f"; log {_size(self.facts['log_bytes'])} filtered on the host to "
                       f"{_size(self.facts['log_filtered_bytes'])}" if self.facts.get("log_bytes") else ""),
                    self.src("host", self.label), value)
        return self.ev

    def _collect(self) -> None:
        ev = self.ev
        gpu_f = self._pool.submit(self._gpus)
        host_f = self._pool.submit(self._identity)
        procs = self._processes()
        main = procs[0] if procs else None
        futures = {
            "log": self._pool.submit(self._log, main),
            "engine": self._pool.submit(self._engine, main),
            "models": self._pool.submit(self._models, main),
        }
        if self.opt.metrics and main is not None:
            futures["metrics"] = self._pool.submit(self._metrics, main)
        for f in (gpu_f, host_f, *futures.values()):
            f.result()
        if not ev.has(Kind.ENGINE):
            st = ev.value(Kind.STARTUP)
            if st is not None and getattr(st, "engine", None):
                ev.add(Kind.ENGINE, f"{st.engine} {st.version or '(version not logged)'}",
                       Source("derived", "log startup lines", self.label), {"name": st.engine, "version": st.version})
            else:
                ev.missing(Kind.ENGINE, "no serving engine was found on the host and the log names none")
        file_inputs.gather_engine_support(ev)
        ev.missing(Kind.PROBE, "no probe was run (`dflash-doctor probe`)")

    # -- identity and GPUs --
    def _identity(self) -> None:
        try:
            self.facts["hostname"] = self.host.read_file("/proc/sys/kernel/hostname", 256).decode("utf-8", "replace").strip()
        except OSError:
            pass

    def _gpus(self) -> None:
        res = self.host.run(["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version",
                             "--format=csv,noheader"], timeout=self.opt.timeout, max_bytes=1 << 16)
        src = self.src("command", "nvidia-smi --query-gpu")
        if res.ok:
            gpus = []
            for line in res.text().splitlines():
                parts = [p.strip() for p in line.split(",")]
                if len(parts) >= 4:
                    gpus.append({"index": parts[0], "name": parts[1], "memory": parts[2], "driver": parts[3]})
            self.ev.add(Kind.GPU, f"{len(gpus)} GPU(s): " + ", ".join(sorted({g['name'] for g in gpus})) if gpus
                        else "nvidia-smi lists no GPU", src, {"present": bool(gpus), "gpus": gpus})
        elif res.error and "not found" in res.error or res.rc == 127:
            self.ev.add(Kind.GPU, "no NVIDIA GPU visible: nvidia-smi is not installed", src,
                        {"present": False, "gpus": [], "reason": "nvidia-smi not found"})
        else:
            why = (res.stderr.decode("utf-8", "replace").strip() or res.error or f"exit {res.rc}")[:200]
            self.ev.add(Kind.GPU, f"no GPU visible: nvidia-smi failed ({why})", src,
                        {"present": False, "gpus": [], "reason": why})

    # -- processes --
    def _processes(self) -> list[ServingProcess]:
        self.progress("looking for vLLM/SGLang processes")
        res = self.host.run(["sh", "-c", FIND_SERVERS], timeout=self.opt.timeout, max_bytes=1 << 20)
        pids = sorted({int(m) for m in re.findall(r"/proc/(\d+)/cmdline", res.text())})
        if self.opt.pid is not None:
            pids = [p for p in pids if p == self.opt.pid]
            if not pids:
                self.ev.could_not_collect(f"pid {self.opt.pid}", "no vLLM/SGLang process with that pid", Kind.PROCESS)
        found = list(self._pool.map(self._process, pids))
        procs = [p for p in found if p is not None]
        # The API server first (it owns the log and the port), engine-core children after it.
        procs.sort(key=lambda p: (p.launch.engine is None, p.launch.speculative is None and p.launch.spec_error is None, p.pid))
        src = self.src("file", "/proc/*/cmdline")
        if not procs:
            self.ev.missing(Kind.PROCESS, f"no vLLM or SGLang serving process is running on {self.label}")
            self.ev.missing(Kind.LAUNCH, f"no serving process on {self.label} to read the launch command from")
            return []
        self.ev.add(Kind.PROCESS, f"{len(procs)} serving process(es): "
                    + ", ".join(f"{p.launch.engine} pid {p.pid}" for p in procs[:4]), src, procs)
        main = procs[0]
        l = main.launch
        if l.spec_error:
            summary = f"pid {main.pid}: invalid --speculative-config"
        elif l.speculative:
            summary = f"pid {main.pid}: {l.engine} {l.model}, method {l.method}, drafter {l.drafter}, k {l.num_speculative_tokens}"
        else:
            summary = f"pid {main.pid}: {l.engine} {l.model} without a speculative config"
        self.ev.add(Kind.LAUNCH, summary, self.src("file", f"/proc/{main.pid}/cmdline"), l)
        env_view = {"pid": main.pid, "env": main.env, "secret_variables_set": list(main.secret_env)}
        self.ev.add(Kind.ENVIRONMENT, ", ".join(f"{k}={v}" for k, v in main.env.items() if k.startswith("VLLM_"))
                    or "no VLLM_* variables set", self.src("file", f"/proc/{main.pid}/environ"), env_view)
        return procs

    def _process(self, pid: int) -> ServingProcess | None:
        try:
            raw = self.host.read_file(f"/proc/{pid}/cmdline", 1 << 20, timeout=self.opt.timeout)
        except OSError:
            return None  # exited meanwhile
        argv = [w.decode("utf-8", "replace") for w in raw.rstrip(b"\0").split(b"\0")]
        launch = parse_argv(argv)
        if launch.engine is None:
            return None  # the grep itself, an editor with "vllm" in a file name, …
        env: dict[str, str] = {}
        secrets: tuple[str, ...] = ()
        notes = []
        try:
            env, secrets = filter_environ(self.host.read_file(f"/proc/{pid}/environ", 1 << 20, timeout=self.opt.timeout))
        except PermissionError:
            notes.append("environment not readable (another user's process: run as that user or root)")
        except OSError as exc:
            notes.append(f"environment not readable ({exc})")
        outs = []
        for fd in (1, 2):
            try:
                outs.append(self.host.readlink(f"/proc/{pid}/fd/{fd}", timeout=self.opt.timeout))
            except OSError:
                outs.append(None)
        cgroup = None
        try:
            cgroup = self.host.read_file(f"/proc/{pid}/cgroup", 1 << 16, timeout=self.opt.timeout).decode("utf-8", "replace")
        except OSError:
            pass
        return ServingProcess(pid=pid, argv=launch.argv, launch=launch, env=env, secret_env=secrets, stdout=outs[0],
                              stderr=outs[1], cgroup=cgroup, interpreter=self._interpreter(argv, env), notes=notes)

    def _interpreter(self, argv: list[str], env: dict[str, str]) -> str | None:
        first = argv[0] if argv else ""
        if re.fullmatch(r"python[\d.]*", os.path.basename(first)):
            return first if first.startswith("/") else self._which(os.path.basename(first), env)
        script = first if first.startswith("/") else self._which(first, env)
        if not script:
            return None
        try:
            head = self.host.read_file(script, 512, timeout=self.opt.timeout).split(b"\n", 1)[0].decode("utf-8", "replace")
        except OSError:
            return None
        m = re.match(r"#!\s*(\S+)(?:\s+(\S+))?", head)
        if not m:
            return None
        if os.path.basename(m.group(1)) == "env" and m.group(2):
            return self._which(m.group(2), env)
        return m.group(1)

    def _which(self, name: str, env: dict[str, str]) -> str | None:
        if "/" in name:
            return None
        res = self.host.run(["sh", "-c", EXISTING, "sh", *[f"{d}/{name}" for d in env.get("PATH", "/usr/bin:/bin").split(":") if d.startswith("/")]],
                            timeout=self.opt.timeout, max_bytes=1 << 16)
        lines = res.text().splitlines()
        return lines[0] if lines else None

    # -- the log, filtered on the host --
    def _log(self, main: ServingProcess | None) -> None:
        ev = self.ev
        literals = [lit for lit, _ in LINE_PARSERS] + list(STARTUP_LITERALS) + [
            "Speculative metrics", "Decode batch", "accept len", "speculative", "Initializing a V1 LLM engine"]
        patterns = ("\n".join(dict.fromkeys(literals)) + "\n").encode()
        args = [str(LOG_TAIL_LINES), str(LOG_HEAD_LINES)]
        if self.opt.log:
            where, argv = f"{self.opt.log} (--log)", ["sh", "-c", FILTER_LOG, "sh", self.opt.log, *args]
            size_of = self.opt.log
        elif main is not None:
            target = next((t for t in (main.stdout, main.stderr) if t and t.startswith("/") and not t.startswith("/dev/")
                           and not t.endswith(" (deleted)")), None)
            docker = _docker_id(main.cgroup)
            unit = _systemd_unit(main.cgroup)
            if target:
                where, argv, size_of = f"{target} (stdout of pid {main.pid})", ["sh", "-c", FILTER_LOG, "sh", target, *args], target
            elif docker:
                where, argv, size_of = f"docker logs {docker[:12]}", ["sh", "-c", FILTER_DOCKER, "sh", docker, *args], None
            elif unit:
                where, argv, size_of = f"journal of {unit}", ["sh", "-c", FILTER_JOURNAL, "sh", unit, *args], None
            else:
                ev.missing(Kind.ACCEPTANCE, f"pid {main.pid} writes to {main.stdout or 'an unknown target'}, not a file, "
                                            "and runs in no docker container or systemd unit: give --log PATH")
                return
        else:
            ev.missing(Kind.ACCEPTANCE, "no serving process and no --log PATH: no log to read")
            return
        self.progress(f"filtering {where} on the host")
        size_f = self._pool.submit(self.host.run, ["stat", "-L", "-c", "%s", "--", size_of],
                                   self.opt.timeout, 1 << 10) if size_of else None
        res = self.host.run(argv, timeout=self.opt.log_timeout, max_bytes=64 << 20, stdin=patterns)
        complaints = [ln for ln in res.stderr.decode("utf-8", "replace").splitlines()
                      if ln.strip() and not re.fullmatch(r"\d+ \d+", ln.strip())]
        if not res.ok or (complaints and not res.stdout):
            why = res.error or (complaints[0] if complaints else f"exit status {res.rc}")
            ev.could_not_collect(f"log {where}", redact_text(why[:300]), Kind.ACCEPTANCE)
            return
        counts = re.findall(rb"^(\d+) (\d+)$", res.stderr, re.M)
        self.facts["log"] = where
        self.facts["log_filtered_bytes"] = len(res.stdout)
        self.facts["log_matching_lines"] = int(counts[-1][1]) if counts else None
        self.facts["log_spec_lines"] = int(counts[-1][0]) if counts else None
        if counts and int(counts[-1][0]) > LOG_TAIL_LINES:
            self.ev.notes.append(f"the log holds {int(counts[-1][0])} spec-decode lines; the last {LOG_TAIL_LINES} "
                                 "were transferred and scanned (the recent picture)")
        if size_f is not None:
            s = size_f.result()
            if s.ok and s.text().strip().isdigit():
                self.facts["log_bytes"] = int(s.text().strip())
        lines = res.stdout.decode("utf-8", "replace").splitlines()
        scan = scan_lines(iter(lines), f"{self.label}:{where}")
        self._add_scan(scan, where, len(lines))

    def _add_scan(self, scan: LogScan, where: str, kept: int) -> None:
        ev = self.ev
        src = self.src("file", where)
        stats = file_inputs.scan_stats(scan)
        stats["filtered_on_host"] = True
        stats["lines"] = self.facts.get("log_matching_lines") or scan.lines
        stats["lines_kept"] = kept
        ev.add(Kind.LOG_SCAN, f"filtered on the host: {stats['lines']} spec-decode/startup lines "
                              f"({_size(self.facts.get('log_filtered_bytes', 0))}), {len(scan.intervals)} intervals, "
                              f"{len(scan.malformed)} malformed", src, stats)
        from ..parse.logscan import aggregate
        summary = aggregate(scan.intervals)
        if summary is None:
            ev.missing(Kind.ACCEPTANCE, f"the log ({where}) holds no spec-decode metrics lines")
        else:
            ev.add(Kind.ACCEPTANCE, f"τ {summary.mean_acceptance_length:.2f} over {summary.drafts:.0f} drafts "
                                    f"({summary.intervals} intervals)", src, summary)
        st = scan.startup
        if st.engine or st.args or st.architecture:
            ev.add(Kind.STARTUP, f"{st.engine or 'engine'} {st.version or '(version not logged)'}"
                   + (f", method {st.method}" if st.method else "") + (f", drafter {st.drafter}" if st.drafter else ""),
                   src, st)

    # -- the installed engine and its source --
    def _engine(self, main: ServingProcess | None) -> None:
        ev = self.ev
        if main is None or not main.interpreter:
            reason = "no serving process" if main is None else f"the interpreter of pid {main.pid} could not be found"
            ev.missing(Kind.ENGINE_SOURCE, f"the engine's installed source was not read: {reason}")
            return
        argv = [main.interpreter, "-c", ENGINE_SCRIPT]
        if main.env.get("PYTHONPATH"):
            argv = ["env", f"PYTHONPATH={main.env['PYTHONPATH']}", *argv]
        res = self.host.run(argv, timeout=self.opt.timeout, max_bytes=1 << 16)
        try:
            info = json.loads(res.stdout.decode("utf-8", "replace").strip().splitlines()[-1]) if res.ok else None
        except (ValueError, IndexError):
            info = None
        name = main.launch.engine
        if not isinstance(info, dict) or not isinstance(info.get(name), dict):
            why = res.error or res.stderr.decode("utf-8", "replace").strip()[-200:] or f"{name} is not importable there"
            ev.could_not_collect(f"engine version via {main.interpreter}", redact_text(why), Kind.ENGINE_SOURCE)
            return
        eng = info[name]
        version, location = eng.get("version"), eng.get("location")
        ev.add(Kind.ENGINE, f"{name} {version or '(no metadata)'} at {location}",
               self.src("command", f"{main.interpreter} importlib.metadata"),
               {"name": name, "version": version, "location": location, "python": info.get("python")})
        if location:
            self._source_probes(name, version, location, main)

    def _source_probes(self, name: str, version: str | None, location: str, main: ServingProcess) -> None:
        rel = VLLM_SOURCES if name == "vllm" else SGLANG_SOURCES
        paths = [f"{location.rstrip('/')}/{r}" for r in rel]
        exist = self.host.run(["sh", "-c", EXISTING, "sh", *paths], timeout=self.opt.timeout, max_bytes=1 << 16)
        present = [p for p in exist.text().splitlines() if p in paths]
        lines: list[tuple[str, int, str]] = []
        if present:
            res = self.host.run(["grep", "-n", "-H", "-s", "-F", "-f", "-", "--", *present], timeout=self.opt.timeout,
                                max_bytes=4 << 20, stdin=("\n".join(SOURCE_LITERALS) + "\n").encode())
            for line in res.text().splitlines():
                path, _, rest = line.partition(":")
                no, _, text = rest.partition(":")
                if no.isdigit():
                    lines.append((path[len(location.rstrip('/')) + 1:], int(no), text.strip()[:240]))
        probes = probe_source(name, [p[len(location.rstrip('/')) + 1:] for p in present], lines)
        probes.update({"engine": name, "version": version, "location": location,
                       "v2_runner_env": main.env.get("VLLM_USE_V2_MODEL_RUNNER")})
        summary = (f"{name} {version} source: target_layer_ids {probes['layer_map'] or 'mapping not found'}, "
                   f"drafter sliding windows {probes['swa']}")
        self.ev.add(Kind.ENGINE_SOURCE, summary, self.src("file", location), probes)

    # -- models from the host's HF cache --
    def _models(self, main: ServingProcess | None) -> None:
        ev = self.ev
        if main is None:
            ev.missing(Kind.DRAFTER, "no serving process: the drafter is unknown")
            ev.missing(Kind.TARGET, "no serving process: the target is unknown")
            return
        l = main.launch
        hub = _hub_dir(main.env)
        for kind, ref in ((Kind.DRAFTER, l.drafter), (Kind.TARGET, l.model)):
            if not ref:
                ev.missing(kind, f"the launch command of pid {main.pid} names no {kind.value}")
                continue
            self._model(kind, ref, hub)

    def _model(self, kind: Kind, ref: str, hub: str) -> None:
        if ref.startswith("/"):
            snap = ref.rstrip("/")
        else:
            repo = f"{hub}/models--{ref.replace('/', '--')}"
            snap = None
            try:
                rev = self.host.read_file(f"{repo}/refs/main", 256, timeout=self.opt.timeout).decode().strip()
                if re.fullmatch(r"[0-9a-f]{6,64}", rev):
                    snap = f"{repo}/snapshots/{rev}"
            except OSError:
                pass
            if snap is None:
                try:
                    snaps = self.host.list_dir(f"{repo}/snapshots", timeout=self.opt.timeout)
                    snap = f"{repo}/snapshots/{snaps[-1]}" if snaps else None
                except OSError:
                    snap = None
            if snap is None:
                self.ev.missing(kind, f"{ref} is not in the host's HF cache ({hub})")
                return
        try:
            raw = self.host.read_file(f"{snap}/config.json", 4 << 20, timeout=self.opt.timeout)
            config = json.loads(raw)
            if not isinstance(config, dict):
                raise ValueError("not a JSON object")
        except OSError as exc:
            self.ev.could_not_collect(f"{kind.value} config {snap}/config.json", str(exc), kind)
            return
        except (ValueError, RecursionError) as exc:
            self.ev.could_not_collect(f"{kind.value} config {snap}/config.json", f"not valid JSON ({exc})", kind)
            return
        value: dict[str, Any] = {"model": ref, "path": snap, "config": config, "source": "host HF cache"}
        try:
            names = self.host.list_dir(snap, timeout=self.opt.timeout)
        except OSError:
            names = []
        value["files"] = names
        if "README.md" in names:
            try:
                value["model_card"] = self.host.read_file(f"{snap}/README.md", 64 << 10).decode("utf-8", "replace")
            except OSError:
                pass
        if kind == Kind.DRAFTER:
            value["weights"] = self._weight_headers(snap, [n for n in names if n.endswith(".safetensors")][:4])
        arch = ", ".join(config.get("architectures") or []) or config.get("model_type", "?")
        self.ev.add(kind, f"{ref}: {arch} (config from the host's HF cache)", self.src("file", f"{snap}/config.json"),
                    _model_value(kind, value))

    def _weight_headers(self, snap: str, files: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in files:
            path = f"{snap}/{name}"
            try:
                head = self.host.read_file(path, 8, timeout=self.opt.timeout)
                (n,) = struct.unpack("<Q", head)
                if n > 32 << 20:
                    out[name] = {"error": f"header of {n} bytes is implausible"}
                    continue
                header = json.loads(self.host.read_file(path, 8 + n, timeout=self.opt.timeout)[8:])
                out[name] = {k: {"dtype": v.get("dtype"), "shape": v.get("shape")}
                             for k, v in header.items() if isinstance(v, dict) and k != "__metadata__"}
            except (OSError, ValueError, struct.error, RecursionError) as exc:
                out[name] = {"error": str(exc)[:200]}
        return out

    # -- /metrics, scraped on the host --
    def _metrics(self, main: ServingProcess) -> None:
        if not main.interpreter:
            self.ev.could_not_collect("metrics scrape", "the serving interpreter is unknown", None)
            return
        l = main.launch
        port = l.port or (30000 if l.engine == "sglang" else 8000)
        host = l.host if l.host and l.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        url = f"http://{host}:{port}/metrics"
        res = self.host.run([main.interpreter, "-I", "-c", SCRAPE_SCRIPT, url, "5"], timeout=self.opt.timeout,
                            max_bytes=8 << 20)
        if not res.ok:
            why = res.error or res.stderr.decode("utf-8", "replace").strip()[-200:]
            self.facts["metrics"] = f"{url}: {why}"
            self.ev.notes.append(redact_text(f"/metrics was not scraped: {url}: {why}"))
            return
        text = res.text()
        self.ev.add(Kind.METRICS, f"{url} scraped on the host: {sum(1 for x in text.splitlines() if x and not x.startswith('#'))} "
                                  "spec-decode samples", self.src("url", url), {"url": url, "text": text,
                                                                               "scraped_on_host": True})


# --- helpers -----------------------------------------------------------------------------------

def _model_value(kind: Kind, value: dict[str, Any]) -> Any:
    """Use the model readers (inspect-model) when they exist; otherwise keep the raw config as evidence."""
    try:
        from ..models import host_facts  # type: ignore[attr-defined]
    except ImportError:
        return value
    try:
        return host_facts(kind.value, value)
    except Exception:
        return value


def _hub_dir(env: dict[str, str]) -> str:
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
    n = n or 0
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def probe_source(engine: str, present: list[str], lines: list[tuple[str, int, str]]) -> dict[str, Any]:
    """Answer the source questions from grep hits (path, line, text) of the installed engine.

    layer_map: "plus-one" when the code that reads target_layer_ids adds 1, "raw" when it reads them
    without, None when no such code was found. swa: "honoured" when the drafter model code reads
    layer_types/sliding_window, "ignored" when DFlash is present but its code never reads them,
    "refused-mixed" when it raises NotImplementedError for mixed layer types (V2 runner required).
    """
    dflash_files = [p for p in present if "dflash" in p]
    has_dflash = bool(dflash_files)
    ids = [l for l in lines if "target_layer_ids" in l[2] or "aux_hidden_state_layer_ids" in l[2]]
    mapping = [l for l in ids if re.search(r"(?:\+\s*1\b|\b1\s*\+)", l[2])]
    reading = [l for l in ids if re.search(r"\bfor\b|\[|getattr|\.get\(|=", l[2])]
    layer_map = "plus-one" if mapping else ("raw" if reading and has_dflash else None)
    model_files = [p for p in dflash_files if "models/" in p]
    swa_lines = [l for l in lines if l[0] in model_files and ("layer_types" in l[2] or "sliding_window" in l[2])]
    refuse = [l for l in lines if "dflash" in l[0] and ("issues/40898" in l[2] or
                                                        ("NotImplementedError" in l[2] and "layer" in l[2].lower()))]
    needs_v2 = [l for l in lines if "dflash" in l[0] and ("VLLM_USE_V2_MODEL_RUNNER" in l[2] or "use_v2_model_runner" in l[2])]
    if not has_dflash:
        swa = "no-dflash"
    elif refuse:
        swa = "refused-mixed-without-v2" if needs_v2 else "refused-mixed"
    elif swa_lines:
        swa = "honoured"
    else:
        swa = "ignored"
    return {
        "dflash_present": has_dflash, "files": present, "layer_map": layer_map, "swa": swa,
        "requires_v2_for_mixed": bool(refuse and needs_v2),
        "layer_map_lines": [f"{p}:{n}: {t}" for p, n, t in (mapping or reading)[:4]],
        "swa_lines": [f"{p}:{n}: {t}" for p, n, t in ((refuse or swa_lines)[:4] + needs_v2[:2])]
        or [f"{p}: never reads layer_types or sliding_window" for p in model_files[:2]],
    }


def collect_host(host: Host, options: HostOptions | None = None, progress=None) -> EvidenceSet:
    return HostCollector(host, options, progress).collect()
