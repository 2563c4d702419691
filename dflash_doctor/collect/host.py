"""Collect evidence from a host (local, SSH or a bundle) — read-only, and without copying gigabytes.

What is gathered, and how, on the host itself:
  * serving processes (vLLM, SGLang) from /proc: argv, the speculative config, relevant environment;
  * the log (--log PATH, else the process's stdout/stderr file, docker logs, or the unit's journal),
    FILTERED ON THE HOST with `grep -F` so only spec-decode and startup lines cross the network;
  * the engine's package, located and read without running any program of the inspected process
    (its mapped modules in /proc/PID/maps, the directories beside its interpreter's path), its version
    from dist-info/_version.py read as text, and the files of that package dflash_doctor.engines asks for
    (read as text through a guard, analysed here with `ast`: nothing of the engine is imported or run);
  * GPUs (nvidia-smi; its absence is a fact), drafter/target configs, model cards and weight headers
    from the host's HF cache (read through a guard: nothing outside the checkpoint directory, nothing the
    serving process's user could not share), and a /metrics scrape made on the host by its curl/wget.

Read-only guarantee: every command is one of the argv shapes built in this module (grep, head,
find, readlink, stat, nvidia-smi, and the fixed `sh -c` scripts in READONLY_SCRIPTS with user values
passed as positional parameters, never spliced into the script). No interpreter of the host's is
ever run. Nothing is written, killed or restarted. tests/hosts checks this by recording every command.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from ..evidence import EvidenceSet, Kind, Source
from ..hosts.base import Host
from ..parse.launch import parse_argv, redact_argv
from ..parse.logscan import SPEC_LINE_LITERALS, STARTUP_LITERALS, scan_lines
from ..payloads import (EngineId, Environment, Gpu, GpuInventory, HostSummary, Processes,
                        ServingProcess)
from ..redact import REDACTED, is_secret_key, redact_text
from .builder import EvidenceBuilder

# Environment variables that change spec-decode behaviour or say where models live.
RELEVANT_ENV = ("VLLM_USE_V2_MODEL_RUNNER", "VLLM_LOG_STATS_INTERVAL", "VLLM_ATTENTION_BACKEND", "VLLM_USE_V1",
                "VLLM_LOGGING_LEVEL", "VLLM_CONFIGURE_LOGGING", "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
                "TRANSFORMERS_CACHE", "HF_HUB_OFFLINE", "CUDA_VISIBLE_DEVICES", "SGLANG_ENABLE_SPEC_V2")

# The only shell scripts the collector ever runs. Values arrive as "$1", "$2"…, never inside the text.
# The log filter. $4: spec-decode literals, $5: startup literals (each newline-separated, which grep
# -e reads as several patterns). Spec lines come from one fast pass over the whole log with only the
# few spec literals; startup lines from the first and last $6 bytes (where each server start writes
# them). awk keeps startup lines (deduplicated, up to $3) and the last $2 spec lines in a ring, so
# the transfer is bounded whatever the log size; stderr gets "size B" and "<spec lines> <all lines>".
_AWK = ('awk -v n="$2" -v head="$3" -v spec="$4" \'BEGIN{k=split(spec, S, "\\n")} '
        '{for(i=1;i<=k;i++) if(S[i]!="" && index($0,S[i])){t++; buf[t%n]=$0; next}} '
        '!seen[$0]++ && h<head {h++; print} '
        'END{s=t-n+1; if(s<1)s=1; for(i=s;i<=t;i++)print buf[i%n]; print t " " NR > "/dev/stderr"}\'')
# Only a regular file is read: never a FIFO, socket or device (reading someone's pipe would steal data).
_FILTER_FILE = ('[ -e "$1" ] || { printf "%s: No such file or directory\\n" "$1" >&2; exit 0; }; '
                '[ -f "$1" ] || { printf "%s: not a regular file (never read: it could be a pipe)\\n" "$1" >&2; exit 0; }; '
                'stat -L -c "size %s" -- "$1" >&2; '
                '{ head -c "$6" -- "$1" | grep -a -F -e "$5" | grep -v -a -F -e "$4"; '
                'tail -c "$6" -- "$1" | grep -a -F -e "$5" | grep -v -a -F -e "$4"; '
                'grep -a -F -e "$4" -- "$1"; } | ' + _AWK)
FILTER_LOG = _FILTER_FILE
# Started together with the survey when no --log is given, to save a round trip: picks the serving
# process the collector will pick (the lowest pid whose argv carries a speculative flag; $7 = --pid)
# if its stdout is a regular file, says which on stderr ("pid N PATH"), and filters that file.
# The collector uses the result only when the survey confirms the same process and file.
AUTOLOG = ("pick=; for c in $(grep -l -a -E -e 'vllm|sglang' /proc/[0-9]*/cmdline 2>/dev/null | sort -t/ -k3 -n); do "
           'd=${c%/cmdline}; p=${d#/proc/}; [ "$p" = "$$" ] && continue; [ -n "$7" ] && [ "$p" != "$7" ] && continue; '
           "grep -q -a -F -e '--speculative' \"$c\" 2>/dev/null || continue; "
           '[ -f "$d/fd/1" ] || continue; pick=$p; break; done; '
           '[ -n "$pick" ] || { echo "no candidate" >&2; exit 0; }; '
           't=$(readlink "/proc/$pick/fd/1"); printf "pid %s %s\\n" "$pick" "$t" >&2; '
           'set -- "/proc/$pick/fd/1" "$2" "$3" "$4" "$5" "$6"; ' + _FILTER_FILE)
FILTER_DOCKER = 'docker logs "$1" 2>&1 | grep -a -F -e "$4" -e "$5" | ' + _AWK
FILTER_JOURNAL = 'journalctl --no-pager -o cat -u "$1" | grep -a -F -e "$4" -e "$5" | ' + _AWK
# Batched reads, one round trip for many items. `emit K PATH` prints one line per item:
#   F|L|D|S b64(path) b64(data)   file content (up to $max bytes), link target, NUL-separated names, size
#   EF|EL|ED|ES b64(path) M|P|I   missing, permission denied, or is a directory
_EMIT = r"""emit() {
  k=$1; f=$2; m=${3:-$max}; p=$(printf '%s' "$f" | base64 -w0)
  if [ "$k" = L ]; then
    if t=$(readlink -- "$f" 2>/dev/null); then printf 'L %s %s\n' "$p" "$(printf '%s' "$t" | base64 -w0)"; else printf 'EL %s M\n' "$p"; fi
  elif [ ! -e "$f" ]; then printf 'E%s %s M\n' "$k" "$p"
  elif [ "$k" = S ]; then printf 'S %s %s\n' "$p" "$(stat -L -c %s -- "$f" 2>/dev/null | base64 -w0)"
  elif [ "$k" = D ]; then
    if [ -d "$f" ] && [ -r "$f" ]; then printf 'D %s ' "$p"; find "$f" -mindepth 1 -maxdepth 1 -printf '%f\0' 2>/dev/null | base64 -w0; printf '\n'; else printf 'ED %s P\n' "$p"; fi
  elif [ -d "$f" ]; then printf 'EF %s I\n' "$p"
  elif [ ! -r "$f" ]; then printf 'EF %s P\n' "$p"
  else printf 'F %s ' "$p"; head -c "$m" -- "$f" 2>/dev/null | base64 -w0; printf '\n'; fi
}
"""
# Arguments: MAX then K:PATH items.
READ_MANY = _EMIT + 'max=$1; shift\nfor a; do emit "${a%%:*}" "${a#*:}"; done\nexit 0'
# Every process whose argv mentions vllm/sglang (argv, environment, cgroup, stdout/stderr targets),
# the hostname, and the GPU query (G rc b64(output); nvidia-smi can hang on a broken driver: 20 s cap).
SURVEY = (_EMIT + "max=1048576\n"
          "g=$(timeout 20 nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader 2>&1)\n"
          "printf 'G %s %s\\n' \"$?\" \"$(printf '%s' \"$g\" | base64 -w0)\"\n"
          "emit F /proc/sys/kernel/hostname\n"
          "for c in $(grep -l -a -E -e 'vllm|sglang' /proc/[0-9]*/cmdline 2>/dev/null); do d=${c%/cmdline}; "
          'for x in cmdline environ cgroup; do emit F "$d/$x"; done; emit L "$d/fd/1"; emit L "$d/fd/2"; done\n'
          "exit 0")
# Checkpoint files are read only when the serving process could share them: `guard PATH` refuses (prints
# `EF b64(path) O|U`) a path whose real location leaves the checkpoint's own directory ($root: the HF cache
# repo dir, whose snapshots link into its blobs, or a local checkpoint dir — so no symlink leads out of it),
# and, when the process is not root, a file owned by another user than the process's that is not
# world-readable (a process owned by `nobody` naming a directory of links to root-only files gets nothing
# of them into a report or a bundle). $pid's owner is read from /proc; an unknown owner reads only
# world-readable files.
_GUARD = r"""owner_of() { uid=$(stat -c %u -- "/proc/$1" 2>/dev/null); [ -n "$uid" ] || uid=unknown; }
guard() {
  rp=$(realpath -e -- "$1" 2>/dev/null) || return 0
  case $rp in "$rroot"|"$rroot"/*) ;; *) printf 'E%s %s O\n' "$2" "$(printf '%s' "$1" | base64 -w0)"; return 1 ;; esac
  [ "$uid" = 0 ] && return 0
  own=$(stat -L -c %u -- "$1" 2>/dev/null); mode=$(stat -L -c %a -- "$1" 2>/dev/null)
  [ "$own" = "$uid" ] && return 0
  case $mode in *[0-7]) [ $(( 0$mode & 4 )) -ne 0 ] && return 0 ;; esac
  printf 'E%s %s U\n' "$2" "$(printf '%s' "$1" | base64 -w0)"; return 1
}
gemit() { guard "$2" "$1" && emit "$@"; return 0; }
"""
# Model files from an HF cache repo dir (R:DIR; RW: a drafter, with its weights header) or a local
# checkpoint dir (P:DIR, PW:DIR), each read through `guard`: the snapshot refs/main names (else the last
# one), its listing, config.json, README.md, and model.safetensors (first 16 KiB: the header, + size) for a
# drafter or tokenizer_config.json for a target. A refs/main that is not a hex revision is ignored.
# $1 = max bytes, $2 = the serving process's pid (whose owner decides what may be read).
MODELS = (_EMIT + _GUARD + 'max=$1; owner_of "$2"; shift 2\nfor a; do\n  role=${a%%:*}; r=${a#*:}\n'
          '  rroot=$(realpath -e -- "$r" 2>/dev/null) || rroot=$r\n  case $role in\n    R*)\n'
          '      gemit F "$r/refs/main"\n      rev=; guard "$r/refs/main" F >/dev/null && rev=$(head -c 100 -- "$r/refs/main" 2>/dev/null)\n'
          "      case $rev in ''|*[!0-9a-f]*) rev=$(ls -1 -- \"$r/snapshots\" 2>/dev/null | tail -n 1) ;; esac\n"
          "      case $rev in ''|*/*|.|..) continue ;; esac\n"
          '      s="$r/snapshots/$rev" ;;\n    *) s=$r ;;\n  esac\n'
          '  gemit D "$s"; gemit F "$s/config.json"; gemit F "$s/README.md"\n'
          '  case $role in *W) gemit F "$s/model.safetensors" 16384; gemit S "$s/model.safetensors" ;;'
          ' *) gemit F "$s/tokenizer_config.json" ;; esac\ndone\nexit 0')
# One more checkpoint file (a shard index, a tokenizer file) by the same rule: $1 max, $2 pid, $3 the
# checkpoint's own directory, then K:PATH items as READ_MANY takes them.
MODEL_READ = (_EMIT + _GUARD + 'max=$1; owner_of "$2"; rroot=$(realpath -e -- "$3" 2>/dev/null) || rroot=$3; shift 3\n'
              'for a; do gemit "${a%%:*}" "${a#*:}"; done\nexit 0')
EXISTING = 'for f; do [ -e "$f" ] && printf "%s\\n" "$f"; done; exit 0'

# The /metrics GET that ENGINE_LOCATE makes first ($5 = URL built here from the launch's --host/--port and
# passed as data, "" for none; $6 = newline-separated literals a kept sample line must hold), by a client
# the host's own user installed (curl, else wget) — never by the serving process's interpreter. Kept lines
# come back as `M line`; a failure is one `metrics-error …` line.
_METRICS_GET = """if [ -n "$5" ]; then
  if command -v curl >/dev/null 2>&1; then
    { curl -s -S -f -m 5 --max-filesize 67108864 "$5" 2>&1 || echo "metrics-error curl exit status $?"; } | grep -a -F -e "$6" -e metrics-error -e curl: | sed 's/^/M /'
  elif command -v wget >/dev/null 2>&1; then
    { wget -q -T 5 -O - "$5" 2>&1 || echo "metrics-error wget exit status $?"; } | grep -a -F -e "$6" -e metrics-error | sed 's/^/M /'
  else
    echo "M metrics-error neither curl nor wget is installed on the host"
  fi
fi
"""
# The installed engine, found and read WITHOUT running any program of the host's serving process: its
# interpreter (argv[0], a shebang, a PATH lookup) may have been written by another user, so it is never
# executed (SECURITY.md, "Nothing the collector runs was written by someone else"). The package is looked
# for in the site directories of the extension modules the process has mapped (/proc/PID/maps: what it
# really imported), then beside the interpreter's path ($7…: P:PREFIX for PREFIX/lib/python3*/site-packages,
# S:DIR for a sys.path entry such as a PYTHONPATH element or the process's working directory). For the first
# package found it prints `PKG b64(site dir) how`, the version files (dist-info METADATA, egg-info PKG-INFO,
# _version.py, version.py: read as data through `guard`, parsed here, never executed) and the package's
# .py files under the path prefixes of $3 (`P relpath`), and the files of $4 (newline-separated paths
# relative to the package: what every analysis reads, engines.static_files) through `guard`; the rest of
# what dflash_doctor.engines wants (the target's model modules) comes by ENGINE_READ once the target is
# known. $1 = vllm | sglang, $2 = pid; $5, $6: the /metrics GET.
ENGINE_LOCATE = (_EMIT + _GUARD + _METRICS_GET + r"""max=4096; name=$1; pid=$2; words=$3; want=$4; shift 6
found=; how=
try() { [ -z "$found" ] && [ -f "$1/$name/__init__.py" ] && found=$1 && how=$2; return 0; }
if [ -r "/proc/$pid/maps" ]; then
  nl='
'
  old=$IFS; IFS=$nl
  for d in $(grep -o -a -E '/[^ ]*/(site|dist)-packages/' "/proc/$pid/maps" 2>/dev/null | sort -u); do try "${d%/}" maps; done
  for d in $(grep -o -a -E "/[^ ]*/$name/" "/proc/$pid/maps" 2>/dev/null | sort -u); do try "${d%/$name/}" maps; done
  IFS=$old
fi
for h; do
  case $h in
    P:*) p=${h#P:}; for d in "$p"/lib/python3*/site-packages "$p"/lib/python3*/dist-packages "$p"/local/lib/python3*/dist-packages; do try "$d" prefix; done ;;
    S:*) try "${h#S:}" path ;;
  esac
done
[ -n "$found" ] || { printf 'no %s package found\n' "$name" >&2; exit 0; }
printf 'PKG %s %s\n' "$(printf '%s' "$found" | base64 -w0)" "$how"
owner_of "$pid"; rroot=$(realpath -e -- "$found" 2>/dev/null) || rroot=$found
for f in "$found/$name"-*.dist-info/METADATA "$found/$name"-*.egg-info/PKG-INFO "$found/$name/_version.py" "$found/$name/version.py"; do
  [ -f "$f" ] && gemit F "$f"
done
printf '%s\n' "$want" | while IFS= read -r r; do
  case $r in ''|/*|*..*) continue ;; esac
  [ -f "$found/$name/$r" ] && gemit F "$found/$name/$r" 4194304
done
cd -- "$found/$name" 2>/dev/null || exit 0
find . -name '*.py' 2>/dev/null | grep -F -e "$words" | sort | head -n 20000 | sed 's/^\.\//P /'
exit 0""")
METRICS_KEEP = ("spec_decode", "sglang:spec", "vllm:num_requests", "sglang:num_running")
# The engine's files dflash_doctor.engines reads (by `guard`: nothing outside the site dir, no other
# user's unreadable file): the same fixed script as MODEL_READ ($1 max bytes, $2 pid, $3 the site dir).
ENGINE_READ = MODEL_READ
ENGINE_FILE_MAX = 4 << 20

# Where in a package the analysis can want a file (relative to the package dir; both engines). The
# listing is limited to these so a large install lists what matters (~2,000 names for vLLM).
SOURCE_PREFIXES = ("./config/", "./envs.py", "./_version.py", "./version.py", "./v1/worker/", "./v1/spec_decode/",
                   "./model_executor/models/", "./models/", "./srt/models/", "./srt/speculative/")

READONLY_SCRIPTS = (FILTER_LOG, FILTER_DOCKER, FILTER_JOURNAL, AUTOLOG, READ_MANY, SURVEY, MODELS, MODEL_READ,
                    EXISTING, ENGINE_LOCATE)

SAFETENSORS_PREFIX = 16384  # bytes of a drafter's weights file read with its config (the header)
LOG_HEAD_LINES = 400  # startup lines kept
LOG_STARTUP_BYTES = 16 << 20  # startup lines are looked for in the log's first and last 16 MiB
SPEC_LITERALS = ("SpecDecoding metrics", "Speculative metrics", "Decode batch")  # plus the parsers' own
LOG_TAIL_LINES = 2500  # last spec-decode lines kept: ~7 h at vLLM's 10 s interval, ~1 MiB at most


@dataclass
class HostOptions:
    log: str | None = None  # a log path on the host
    timeout: float = 60.0  # per command
    log_timeout: float = 600.0  # the remote grep over a large log
    metrics: bool = True
    pid: int | None = None  # examine this serving process (a host may run several)
    parallel: int = 6  # concurrent commands on one host (sshd's MaxSessions defaults to 10)


# --- batched reads ---------------------------------------------------------------------------

@dataclass
class Batch:
    files: dict[str, bytes | OSError] = field(default_factory=dict)
    links: dict[str, str | OSError] = field(default_factory=dict)
    dirs: dict[str, list[str] | OSError] = field(default_factory=dict)
    sizes: dict[str, int | OSError] = field(default_factory=dict)
    gpu: tuple[int, bytes] | None = None  # (exit status, output) of the survey's nvidia-smi query
    error: str | None = None

    def table(self, kind: str) -> dict:
        return {"F": self.files, "L": self.links, "D": self.dirs, "S": self.sizes}[kind]


_ERR = {"M": lambda p: FileNotFoundError(2, "No such file or directory", p),
        "P": lambda p: PermissionError(13, "Permission denied", p),
        "I": lambda p: IsADirectoryError(21, "Is a directory", p),
        # refused by the checkpoint guard (_GUARD): never read, so never in a report or a bundle
        "O": lambda p: RefusedRead("O", p), "U": lambda p: RefusedRead("U", p)}


class RefusedRead(PermissionError):
    """A checkpoint file the guard would not read (a link out of the checkpoint, another user's file)."""

    WHY = {"O": "not read: its real location is outside the checkpoint directory",
           "U": "not read: owned by another user than the serving process, and not world-readable"}

    def __init__(self, code: str, path: str):
        super().__init__(13, self.WHY[code], path)
        self.code = code


def _b64(text: str) -> bytes:
    import base64
    import binascii

    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return b""


def parse_batch(out: bytes) -> Batch:
    """Decode the output of READ_MANY / SURVEY / MODELS (see `emit`)."""
    b = Batch()
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split(" ")
        if len(parts) < 2:
            continue
        k = parts[0]
        if k == "G" and parts[1].lstrip("-").isdigit():
            b.gpu = (int(parts[1]), _b64(parts[2]) if len(parts) > 2 else b"")
            continue
        path = _b64(parts[1]).decode("utf-8", "surrogateescape")
        data = _b64(parts[2]) if len(parts) > 2 else b""
        if k == "F":
            b.files[path] = data
        elif k == "L":
            b.links[path] = data.decode("utf-8", "surrogateescape")
        elif k == "D":
            b.dirs[path] = sorted(n.decode("utf-8", "surrogateescape") for n in data.split(b"\0") if n)
        elif k == "S":
            txt = data.decode("ascii", "replace").strip()
            b.sizes[path] = int(txt) if txt.isdigit() else OSError(f"{path}: no size")
        elif len(k) == 2 and k[0] == "E" and k[1] in "FLDS" and len(parts) > 2 and parts[2] in _ERR:
            b.table(k[1])[path] = _ERR[parts[2]](path)
    return b


def encode_batch(b: Batch) -> bytes:
    import base64

    def e(x: bytes | str) -> str:
        return base64.b64encode(x.encode("utf-8", "surrogateescape") if isinstance(x, str) else x).decode("ascii")

    lines = []
    if b.gpu is not None:
        lines.append(f"G {b.gpu[0]} {e(b.gpu[1])}")
    for kind, table in (("F", b.files), ("L", b.links), ("D", b.dirs), ("S", b.sizes)):
        for path, v in table.items():
            if isinstance(v, OSError):
                code = (v.code if isinstance(v, RefusedRead) else "P" if isinstance(v, PermissionError)
                        else "I" if isinstance(v, IsADirectoryError) else "M")
                lines.append(f"E{kind} {e(path)} {code}")
            elif kind == "D":
                lines.append(f"D {e(path)} {e(chr(0).join(v))}")
            elif kind == "S":
                lines.append(f"S {e(path)} {e(str(v))}")
            else:
                lines.append(f"{kind} {e(path)} {e(v)}")
    return ("\n".join(lines) + "\n").encode("ascii") if lines else b""


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


def safetensors_header_only(data: bytes) -> bytes:
    """What a bundle keeps of a weights file: its header (8-byte length + JSON text) and nothing else;
    bytes that do not open like a safetensors header (a link to a key file, say) are not kept at all."""
    if len(data) < 9 or data[8:9] != b"{":
        return b""
    n = int.from_bytes(data[:8], "little")
    if n > 100_000_000:
        return b""
    head = data[:8 + n]
    try:
        head[8:].decode("utf-8")
    except UnicodeDecodeError:
        if len(head) == 8 + n:
            return b""  # a whole header that is not text is not a header
    return head


def _sanitize_file(path: str, data: bytes) -> bytes:
    m = _PROC_FILE.match(path)
    if m and m.group(1) == "environ":
        env, secrets = filter_environ(data)
        items = [f"{k}={v}" for k, v in env.items()] + [f"{k}={REDACTED}" for k in secrets]
        return "\0".join(items).encode() + (b"\0" if items else b"")
    if m and m.group(1) == "cmdline":
        words = data.decode("utf-8", "replace").rstrip("\0").split("\0")
        return "\0".join(redact_argv(words)).encode() + b"\0"
    if path.endswith(".safetensors"):
        return safetensors_header_only(data)
    return redact_text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def sanitize(op: str, key: str, data: bytes) -> bytes:
    """What a bundle may keep: relevant environment only, argv and text with secrets redacted."""
    if op == "read_file":
        return _sanitize_file(key, data)
    if op == "run":
        try:
            argv = json.loads(key)
        except ValueError:
            argv = []
        if len(argv) > 2 and argv[0] == "sh" and argv[2] in (READ_MANY, SURVEY, MODELS):
            b = parse_batch(data)
            b.files = {p: (_sanitize_file(p, v) if isinstance(v, bytes) else v) for p, v in b.files.items()}
            return encode_batch(b)
    return redact_text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


class BatchFiles:
    """inspect-model's FileAccess, answered from a batch; whatever the batch lacks goes to `fallback`.

    tokenizer.json (often > 10 MiB) is not fetched from a host: the target's special-token ids come
    from tokenizer_config.json, which the batch carries.
    """

    SKIP = ("tokenizer.json",)

    def __init__(self, batch: Batch, fallback, name: str, batch_max: int = 1 << 20):
        self.b, self.fallback, self.name, self.batch_max = batch, fallback, name, batch_max

    def _cap(self, path: str) -> int:
        return SAFETENSORS_PREFIX if path.endswith(".safetensors") else self.batch_max

    def read(self, path: str, max_bytes: int) -> bytes:
        v = self.b.files.get(path)
        if isinstance(v, OSError):
            raise v
        if isinstance(v, bytes):
            size = self.b.sizes.get(path)
            whole = len(v) < self._cap(path) or (isinstance(size, int) and len(v) >= size)
            if whole or max_bytes <= len(v):
                return v[:max_bytes]
        if v is None and os.path.basename(path) in self.SKIP:
            raise OSError(27, "not transferred from the host (large file)", path)
        return self.fallback.read(path, max_bytes)

    def size(self, path: str) -> int:
        v = self.b.sizes.get(path)
        if isinstance(v, OSError):
            raise v
        return v if isinstance(v, int) else self.fallback.size(path)

    def list_dir(self, path: str) -> list[str]:
        v = self.b.dirs.get(path)
        if isinstance(v, OSError):
            raise v
        return list(v) if isinstance(v, list) else self.fallback.list_dir(path)

    def is_dir(self, path: str) -> bool:
        if isinstance(self.b.dirs.get(path), list):
            return True
        if isinstance(self.b.files.get(path), (bytes, IsADirectoryError)):
            return isinstance(self.b.files.get(path), IsADirectoryError)
        return self.fallback.is_dir(path)

    def exists(self, path: str) -> bool:
        for table in (self.b.dirs, self.b.files, self.b.sizes):
            v = table.get(path)
            if v is not None:
                return not isinstance(v, FileNotFoundError)
        return self.fallback.exists(path)


class GuardedFiles:
    """The readers' fallback for checkpoint files outside the first batch: one MODEL_READ call per file,
    under the same guard (nothing outside the checkpoint directory, nothing the serving process's user
    could not share). Listings and sizes carry no content and go to the host directly."""

    def __init__(self, collector: "HostCollector", root: str, pid: int):
        from ..models.files import HostFiles

        self.c, self.root, self.pid = collector, root, pid
        self.plain = HostFiles(collector.host, timeout=collector.opt.timeout)
        self.name = self.plain.name

    def read(self, path: str, max_bytes: int) -> bytes:
        res = self.c.host.run(["sh", "-c", MODEL_READ, "sh", str(max_bytes), str(self.pid), self.root, f"F:{path}"],
                              timeout=self.c.opt.timeout, max_bytes=max_bytes * 2 + (1 << 16))
        v = parse_batch(res.stdout).files.get(path)
        if isinstance(v, bytes):
            return v[:max_bytes]
        if isinstance(v, OSError):
            raise v
        raise OSError(5, res.error or "not read", path)

    def size(self, path: str) -> int:
        return self.plain.size(path)

    def list_dir(self, path: str) -> list[str]:
        return self.plain.list_dir(path)

    def is_dir(self, path: str) -> bool:
        return self.plain.is_dir(path)

    def exists(self, path: str) -> bool:
        return self.plain.exists(path)


# --- collection --------------------------------------------------------------------------------

class HostCollector:
    def __init__(self, host: Host, options: HostOptions | None = None,
                 progress: Callable[[str], None] | None = None):
        self.host = host
        self.opt = options or HostOptions()
        self.progress = progress or (lambda msg: None)
        self.label = getattr(host, "origin", None) and f"{host.origin} (bundle)" or host.name
        self.ev = EvidenceSet(label=self.label)
        self.build = EvidenceBuilder(self.ev, host=self.label)
        self.facts: dict[str, Any] = {}
        self._scraped = None
        self._pool = ThreadPoolExecutor(max_workers=max(1, self.opt.parallel))

    def src(self, kind: str, location: str) -> Source:
        return Source(kind, location, host=self.label)

    def batch(self, files: list[str] = (), links: list[str] = (), dirs: list[str] = (),
              max_bytes: int = 4 << 20) -> Batch:
        """Read many files / links / listings in ONE command (round trips dominate over SSH)."""
        req = [f"F:{p}" for p in files] + [f"L:{p}" for p in links] + [f"D:{p}" for p in dirs]
        if not req:
            return Batch()
        res = self.host.run(["sh", "-c", READ_MANY, "sh", str(max_bytes), *req], timeout=self.opt.timeout,
                            max_bytes=64 << 20)
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

    def collect(self) -> EvidenceSet:
        t0 = time.monotonic()
        try:
            self._collect()
        except KeyboardInterrupt:  # Ctrl-C: report what was gathered; commands in flight end at their timeouts
            self.ev.interrupted = True
            self.ev.could_not_collect("the rest of the collection", "interrupted (Ctrl-C); the report holds what "
                                                                    "was gathered before")
        finally:
            self._pool.shutdown(wait=not self.ev.interrupted, cancel_futures=self.ev.interrupted)
        elapsed = time.monotonic() - t0
        value = HostSummary(host=self.label, commands=len(getattr(self.host, "commands", []) or []),
                            bytes_received=getattr(self.host, "bytes_received", 0),
                            bytes_sent=getattr(self.host, "bytes_sent", 0), seconds=round(elapsed, 2),
                            **{k: v for k, v in self.facts.items() if k in HostSummary.__dataclass_fields__})
        self.ev.add(Kind.HOST, f"{self.label}: {value.commands} read-only commands, "
                               f"{_size(value.bytes_received)} received in {elapsed:.1f} s"
                    + (f"; log {_size(value.log_bytes)} filtered on the host to "
                       f"{_size(value.log_filtered_bytes)}" if value.log_bytes else ""),
                    self.src("host", self.label), value)
        return self.ev

    def _collect(self) -> None:
        ev = self.ev
        # While the host works (the log filter alone takes ~0.5 s per GiB), import what the diagnosis
        # needs afterwards: numpy/pandas for the log's aggregation, the model readers, the checks.
        self._pool.submit(warm_imports)
        # The log needs no survey when its path is known (--log); otherwise AUTOLOG guesses the process
        # the survey will pick and filters its stdout file meanwhile. Either saves a round trip.
        if self.opt.log:
            log_f = self._pool.submit(self._run_log, *self._log_command(None))
        else:
            log_f = self._pool.submit(self.host.run, ["sh", "-c", AUTOLOG, "sh", "", *self._log_args(),
                                                      str(self.opt.pid or "")], self.opt.log_timeout, 64 << 20,
                                      bulk=True)
        procs = self._processes()
        main = procs[0] if procs else None
        # Both go to the host's shared shell in the order they arrive: the quick model read first, so that
        # its parsing here overlaps the engine's interpreter run there.
        models_f = self._pool.submit(self._models, main)
        futures = [models_f, self._pool.submit(self._engine, main, models_f)]
        if self.opt.log:
            log_f.result()
        else:
            auto = log_f.result()
            picked = re.search(r"^pid (\d+) (.*)$", auto.stderr.decode("utf-8", "replace"), re.M)
            if (main is not None and picked and int(picked.group(1)) == main.pid and picked.group(2) == main.stdout
                    and main.stdout and main.stdout.startswith("/")):
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
        if not ev.has(Kind.ENGINE_SUPPORT) and not ev.has(Kind.ENGINE):
            ev.missing(Kind.ENGINE_SUPPORT, "the engine and its version are unknown: no serving process was found "
                                            "and no log names one")
        ev.missing(Kind.PROBE, "no probe was run (`dflash-doctor probe`)")

    # -- GPUs (queried by the survey) --
    def _gpus(self, gpu: tuple[int, bytes] | None) -> None:
        src = self.src("command", "nvidia-smi --query-gpu")
        if gpu is None:
            self.ev.could_not_collect("GPU query", "the host survey did not run", Kind.GPU)
            return
        rc, out = gpu
        text = out.decode("utf-8", "replace")
        if rc == 0:
            gpus = []
            for line in text.splitlines():
                parts = [p.strip() for p in line.split(",")]
                if len(parts) >= 4:
                    gpus.append(Gpu(index=parts[0], name=parts[1], memory=parts[2], driver=parts[3]))
            self.ev.add(Kind.GPU, f"{len(gpus)} GPU(s): " + ", ".join(sorted({g.name for g in gpus})) if gpus
                        else "nvidia-smi lists no GPU", src, GpuInventory(present=bool(gpus), gpus=tuple(gpus)))
        elif rc == 127 or "not found" in text:
            self.ev.add(Kind.GPU, "no NVIDIA GPU visible: nvidia-smi is not installed", src,
                        GpuInventory(present=False, reason="nvidia-smi not found"))
        else:
            why = ("timed out after 20 s" if rc == 124 else text.strip() or f"exit status {rc}")[:200]
            self.ev.add(Kind.GPU, f"no GPU visible: nvidia-smi failed ({why})", src,
                        GpuInventory(present=False, reason=why))

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
            self.ev.could_not_collect("process list", res.error or f"exit status {res.rc}", Kind.PROCESS)
        # The survey always reads /proc/sys/kernel/hostname: without it we did not look (no /proc, or
        # non-GNU tools such as BSD base64/stat on macOS), so "no serving process" would be a guess.
        surveyed = res.ok and isinstance(hn, bytes)
        if res.ok and not surveyed:
            why = (res.stderr.decode("utf-8", "replace").strip().splitlines() or ["no /proc/sys/kernel/hostname"])[0]
            self.ev.could_not_collect("process list", f"{self.label} did not answer like a Linux host with GNU tools "
                                      f"({why[:200]}); its processes could not be listed", Kind.PROCESS)
        pids = sorted({int(m.group(1)) for p in b.files for m in [re.match(r"^/proc/(\d+)/cmdline$", p)] if m})
        if self.opt.pid is not None:
            pids = [p for p in pids if p == self.opt.pid]
            if not pids:
                self.ev.could_not_collect(f"pid {self.opt.pid}", "no vLLM/SGLang process with that pid", Kind.PROCESS)
        procs = [p for p in (self._process(pid, b) for pid in pids) if p is not None]
        # The API server first (it owns the log and the port), engine-core children after it.
        procs.sort(key=lambda p: (p.launch.speculative is None and p.launch.spec_error is None, p.pid))
        src = self.src("file", "/proc/*/cmdline")
        if not procs:
            if surveyed:
                self.ev.missing(Kind.PROCESS, f"no vLLM or SGLang serving process is running on {self.label}")
                self.ev.missing(Kind.LAUNCH, f"no serving process on {self.label} to read the launch command from")
            else:
                self.ev.missing(Kind.LAUNCH, f"the processes on {self.label} could not be listed")
            return []
        main = procs[0] = dataclasses.replace(procs[0], interpreter=self._python_hint(list(procs[0].raw_argv),
                                                                                          dict(procs[0].env)))
        self.ev.add(Kind.PROCESS, f"{len(procs)} serving process(es): "
                    + ", ".join(f"{p.launch.engine} pid {p.pid}" for p in procs[:4]), src, Processes(tuple(procs)))
        l = main.launch
        if l.spec_error:
            summary = f"pid {main.pid}: invalid --speculative-config"
        elif l.speculative:
            summary = f"pid {main.pid}: {l.engine} {l.model}, method {l.method}, drafter {l.drafter}, k {l.num_speculative_tokens}"
        else:
            summary = f"pid {main.pid}: {l.engine} {l.model} without a speculative config"
        self.ev.add(Kind.LAUNCH, summary, self.src("file", f"/proc/{main.pid}/cmdline"), l)
        # Flat {VARIABLE: value} as the engine checks read it; secrets by name only, never their values.
        env_view = {**main.env, **{k: REDACTED for k in main.secret_env}}
        self.ev.add(Kind.ENVIRONMENT, ", ".join(f"{k}={v}" for k, v in main.env.items() if k.startswith("VLLM_"))
                    or "no VLLM_* variables set", self.src("file", f"/proc/{main.pid}/environ"),
                    Environment(env_view))
        return procs

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
        outs = [b.links.get(f"/proc/{pid}/fd/{fd}") for fd in (1, 2)]
        outs = [o if isinstance(o, str) else None for o in outs]
        cg = b.files.get(f"/proc/{pid}/cgroup")
        return ServingProcess(pid=pid, argv=launch.argv, launch=launch, env=env, secret_env=secrets, stdout=outs[0],
                              stderr=outs[1], cgroup=cg.decode("utf-8", "replace") if isinstance(cg, bytes) else None,
                              notes=tuple(notes), raw_argv=tuple(argv))

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
        res = self.host.run(["sh", "-c", EXISTING, "sh", *[f"{d}/{name}" for d in dirs]],
                            timeout=self.opt.timeout, max_bytes=1 << 16)
        lines = res.text().splitlines()
        return lines[0] if lines else None

    # -- the log, filtered on the host --
    def _log_args(self) -> list[str]:
        spec = list(SPEC_LINE_LITERALS) + list(SPEC_LITERALS)
        startup = list(STARTUP_LITERALS) + ["Initializing a V1 LLM engine", "server_args="]
        spec_arg = "\n".join(x for x in dict.fromkeys(spec) if x)
        startup_arg = "\n".join(x for x in dict.fromkeys(startup) if x and x not in spec)
        return [str(LOG_TAIL_LINES), str(LOG_HEAD_LINES), spec_arg, startup_arg, str(LOG_STARTUP_BYTES)]

    def _log_command(self, main: ServingProcess | None) -> tuple[str, list[str]] | None:
        """(where, argv) of the filter for this log source, or None (recorded as missing)."""
        ev = self.ev
        args = self._log_args()
        if self.opt.log:
            return f"{self.opt.log} (--log)", ["sh", "-c", FILTER_LOG, "sh", self.opt.log, *args]
        if main is None:
            ev.missing(Kind.ACCEPTANCE, "no serving process and no --log PATH: no log to read")
            return None
        target = next((t for t in (main.stdout, main.stderr) if t and t.startswith("/") and not t.startswith("/dev/")
                       and not t.endswith(" (deleted)")), None)
        docker = _docker_id(main.cgroup)
        unit = _systemd_unit(main.cgroup)
        if target:
            return f"{target} (stdout of pid {main.pid})", ["sh", "-c", FILTER_LOG, "sh", target, *args]
        if docker:
            return f"docker logs {docker[:12]}", ["sh", "-c", FILTER_DOCKER, "sh", docker, *args]
        if unit:
            return f"journal of {unit}", ["sh", "-c", FILTER_JOURNAL, "sh", unit, *args]
        ev.missing(Kind.ACCEPTANCE, f"pid {main.pid} writes to {main.stdout or 'an unknown target'}, not a file, "
                                    "and runs in no docker container or systemd unit: give --log PATH")
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
            ev.could_not_collect(f"log {where}", redact_text(why[:300]), Kind.ACCEPTANCE)
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
                ev.notes.append(f"the log holds {spec_lines} spec-decode lines; the last {LOG_TAIL_LINES} "
                                "were transferred and scanned (the recent picture)")
        lines = res.stdout.decode("utf-8", "replace").splitlines()
        scan = scan_lines(iter(lines), f"{self.label}:{where}")
        self.build.add_log_scan(scan, where, filtered_on_host=True,
                                lines=self.facts.get("log_matching_lines") or scan.lines, lines_kept=len(lines),
                                filtered_bytes=self.facts.get("log_filtered_bytes", 0))

    # -- the installed engine and its source: located and read by fixed shell scripts, nothing executed --
    def _engine(self, main: ServingProcess | None, models_done=None) -> None:
        """Three reads on the host: locate the package (listing + version files + /metrics), the files the
        analysis wants (engines.wanted_files, given the target's architectures), and the modules the
        target's classes import (engines.follow_up). The analysis runs here, on the text (ast)."""
        ev = self.ev
        if main is None:
            ev.missing(Kind.ENGINE_SOURCE, "the engine's installed source was not read: no serving process")
            return
        name = main.launch.engine
        hints = []
        if main.interpreter and main.interpreter.startswith("/"):
            prefix = os.path.dirname(os.path.dirname(main.interpreter))
            if prefix and prefix != "/":
                hints.append(f"P:{prefix}")
        hints += [f"S:{d}" for d in main.env.get("PYTHONPATH", "").split(":") if d.startswith("/")]
        hints += ["P:/usr", "P:/usr/local"]
        url = self._metrics_url(main) if self.opt.metrics else ""
        from ..engines import static_files

        res = self.host.run(["sh", "-c", ENGINE_LOCATE, "sh", name, str(main.pid), "\n".join(SOURCE_PREFIXES),
                             "\n".join(static_files(name)), url, "\n".join(METRICS_KEEP), *hints],
                            timeout=self.opt.timeout, max_bytes=64 << 20)
        found = parse_engine_locate(res.stdout, name)
        if url:
            self._scraped = (url, res)  # read once the log is in: a log with drafts has the better acceptance
        if found is None:
            why = res.error or res.stderr.decode("utf-8", "replace").strip()[:200] or f"exit status {res.rc}"
            where = ", ".join(h[2:] for h in hints)
            ev.could_not_collect(f"{name} package of pid {main.pid}",
                                 redact_text(f"{why} (looked in the process's mapped modules and under {where})"),
                                 Kind.ENGINE_SOURCE)
            return
        from ..engines import FetchedTree, analyse, follow_up, wanted_files
        from ..engines.version import read_version

        site, location = found["site"], found["location"]
        tree = FetchedTree(found["listing"], found["files"], name=f"{self.label}:{site}")
        version = read_version(name, tree)
        self.build.add_engine(EngineId(name, version.value, location=location, version_from=version.source,
                                       found_by=found["how"], version_readings=version.readings),
                              f"{name} {version.value or '(version not found)'} at {location}"
                              + (f" (from {version.source})" if version.source else ""),
                              self.src("file", f"{site}/{version.source}" if version.source else location))
        if models_done is not None:
            models_done.result()  # the target's architectures pick its model files
        target = ev.target()
        archs = tuple(getattr(target, "architectures", ()) or ())
        self._read_engine(tree, site, main.pid, wanted_files(name, tree.listing(), archs))
        self._read_engine(tree, site, main.pid, follow_up(name, tree, archs))
        analysis = analyse(tree, name, archs)
        maps = ", ".join(f"{k} {v.value or 'undecided'}" for k, v in analysis.layer_map.items())
        dfl = (", ".join(analysis.dflash.value) if analysis.dflash.value else
               "no DFlash" if analysis.dflash.decided else "DFlash undecided")
        ev.add(Kind.ENGINE_SOURCE, f"{name} {version.value or '(version not found)'} source: {dfl}; target_layer_ids "
                                   f"{maps}" + (f"; {len(analysis.missing)} wanted files not read" if analysis.missing
                                                else ""),
               self.src("file", location), analysis)

    def _read_engine(self, tree, site: str, pid: int, rels: list[str]) -> None:
        """Fetch the engine files `rels` (relative to the site dir) through the guarded reader."""
        rels = [r for r in rels if tree.read(r) is None and "/../" not in f"/{r}/"]
        if not rels:
            return
        res = self.host.run(["sh", "-c", ENGINE_READ, "sh", str(ENGINE_FILE_MAX), str(pid), site,
                             *[f"F:{site}/{r}" for r in rels]], timeout=self.opt.timeout, max_bytes=64 << 20)
        got = parse_batch(res.stdout).files
        tree.add({p[len(site) + 1:]: v for p, v in got.items() if isinstance(v, bytes) and p.startswith(site + "/")})

    # -- models from the host's HF cache --
    def _models(self, main: ServingProcess | None) -> None:
        ev = self.ev
        if main is None:
            ev.missing(Kind.DRAFTER, "no serving process: the drafter is unknown")
            ev.missing(Kind.TARGET, "no serving process: the target is unknown")
            return
        l = main.launch
        hub = _hub_dir(main.env)
        wanted = []
        for kind, ref in ((Kind.DRAFTER, l.drafter), (Kind.TARGET, l.model)):
            if not ref:
                ev.missing(kind, f"the launch command of pid {main.pid} names no {kind.value}")
            else:
                wanted.append((kind, ref))
        # One round trip: each snapshot (refs/main, else the last one), its listing, config, card, weights header.
        items, dirs = [], {}
        for kind, ref in wanted:
            w = "W" if kind == Kind.DRAFTER else ""
            if ref.startswith("/"):
                dirs[ref] = ref.rstrip("/")
                items.append(f"P{w}:{dirs[ref]}")
            else:
                dirs[ref] = f"{hub}/models--{ref.replace('/', '--')}"
                items.append(f"R{w}:{dirs[ref]}")
        res = self.host.run(["sh", "-c", MODELS, "sh", str(1 << 20), str(main.pid), *items], timeout=self.opt.timeout,
                            max_bytes=64 << 20)
        b = parse_batch(res.stdout)
        for kind, ref in wanted:
            d = dirs[ref]
            snap = d if ref.startswith("/") else next(
                (p for p in b.dirs if p.startswith(f"{d}/snapshots/") and "/" not in p[len(d) + 11:]), None)
            if snap is None:
                why = res.error or ("not in the host's HF cache" if not ref.startswith("/") else "not readable")
                ev.missing(kind, f"{ref}: {why} ({hub})")
                continue
            self._model(kind, ref, snap, b, GuardedFiles(self, d, main.pid))

    def _model(self, kind: Kind, ref: str, snap: str, b: Batch, fallback: "GuardedFiles") -> None:
        """Drafter/target facts by inspect-model's readers, fed from the batch (anything else: one more
        guarded call)."""
        from ..errors import DoctorError
        from ..models.facts import drafter_facts, target_facts

        files = BatchFiles(b, fallback, name=self.label)
        try:
            facts = drafter_facts(snap, files) if kind == Kind.DRAFTER else target_facts(snap, files)
        except DoctorError as exc:
            self.ev.could_not_collect(f"{kind.value} {ref} at {snap}", exc.message, kind)
            return
        except (OSError, ValueError) as exc:
            self.ev.could_not_collect(f"{kind.value} {ref} at {snap}", str(exc)[:200], kind)
            return
        arch = ", ".join(getattr(facts, "architectures", ()) or ()) or getattr(facts, "model_type", None) or "?"
        self.ev.add(kind, f"{ref}: {arch} (from the host's HF cache, {snap})", self.src("file", f"{snap}/config.json"),
                    facts)

    # -- /metrics, scraped on the host by its own curl/wget (the server may listen on loopback only) --
    @staticmethod
    def _metrics_url(main: ServingProcess) -> str:
        l = main.launch
        default = 30000 if l.engine == "sglang" else 8000
        port = l.port if isinstance(l.port, int) and 0 < l.port < 65536 else default
        bind = l.host if l.host and l.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        if not re.fullmatch(r"[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]|[0-9A-Fa-f:.]{2,45}", bind):
            bind = "127.0.0.1"  # a --host value that is no host name or address is not put in a URL
        if ":" in bind and not bind.startswith("["):
            bind = f"[{bind}]"
        return f"http://{bind}:{port}/metrics"

    def _metrics(self, url: str, res) -> None:
        got = [x[2:] for x in res.stdout.decode("utf-8", "replace").splitlines() if x.startswith("M ")]
        err = [x[len("metrics-error "):] for x in got if x.startswith("metrics-error ")] + \
              [x for x in got if x.startswith("curl: ")]
        text = "".join(x + "\n" for x in got if not x.startswith(("metrics-error ", "curl: ")))
        if not res.ok or err or not text.strip():
            why = res.error or (err[0] if err else "no spec-decode samples in the answer")
            self.facts["metrics"] = f"{url}: {why}"
            self.ev.notes.append(redact_text(f"/metrics was not scraped: {url}: {why}"))
            return
        self.build.add_metrics_text(text, self.src("url", url), scraped_on_host=True)


# --- helpers -----------------------------------------------------------------------------------

# (pandas is not among them: summaries need numpy only, and on a loopback host the import's CPU is
# taken from the host's own work)
WARM_MODULES = ("numpy", "dflash_doctor.parse.frame", "dflash_doctor.models.facts",
                "dflash_doctor.models.engine_support", "dflash_doctor.doctor", "dflash_doctor.render.json_report")


def warm_imports() -> None:
    """Import the modules used after the host's answers arrive (~0.4 s of imports), and the checks."""
    import importlib

    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # pandas missing or broken: the code that needs it reports that itself
            pass
    try:
        from ..registry import load_checks

        load_checks(include_plugins=False)
    except Exception:
        pass

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


def parse_engine_locate(out: bytes, name: str) -> dict | None:
    """Decode ENGINE_LOCATE's answer: the package's site dir, how it was found, the listing and the version
    files (both relative to the site dir, as dflash_doctor.engines wants them). None when no package was found."""
    site = how = None
    listing: list[str] = []
    rest = []
    for line in out.decode("utf-8", "replace").splitlines():
        if line.startswith("PKG "):
            parts = line.split(" ")
            site = _b64(parts[1]).decode("utf-8", "surrogateescape") if len(parts) > 1 else None
            how = parts[2] if len(parts) > 2 else None
        elif line.startswith("P "):
            rel = line[2:].strip()
            if rel and not rel.startswith("/") and ".." not in rel.split("/"):
                listing.append(f"{name}/{rel}")
        elif line.startswith("M "):
            continue  # the /metrics lines (_metrics reads them)
        else:
            rest.append(line)
    if not site:
        return None
    files = {}
    for path, data in parse_batch("\n".join(rest).encode()).files.items():
        if isinstance(data, bytes) and path.startswith(site.rstrip("/") + "/"):
            rel = path[len(site.rstrip("/")) + 1:]
            files[rel] = data
            if rel not in listing:
                listing.append(rel)
    return {"site": site.rstrip("/"), "location": f"{site.rstrip('/')}/{name}", "how": how, "listing": listing,
            "files": files}


def collect_host(host: Host, options: HostOptions | None = None, progress=None) -> EvidenceSet:
    return HostCollector(host, options, progress).collect()
