"""The only commands the host collector runs: fixed `sh -c` scripts, with every user value passed as a
positional parameter ("$1", "$2"…), never spliced into the script text, and the sizes that bound them.

Each script is read-only: it reads /proc, files and listings, runs grep/awk/head/stat/find/readlink/base64,
docker logs, journalctl, nvidia-smi and curl/wget (the /metrics scrape), and nothing else. No interpreter
of the host's is ever run, nothing is written, killed or restarted. tests/hosts records every command.
"""

from __future__ import annotations

# The only shell scripts the collector ever runs. Values arrive as "$1", "$2"…, never inside the text.
# The log filter. $4: spec-decode literals, $5: startup literals (each newline-separated, which grep
# -e reads as several patterns). Spec lines come from one fast pass over the whole log with only the
# few spec literals; startup lines from the first and last $6 bytes (where each server start writes
# them). awk keeps startup lines (deduplicated, up to $3) and the last $2 spec lines in a ring, so
# the transfer is bounded whatever the log size; stderr gets "size B" and "<spec lines> <all lines>".
_AWK = (
    'awk -v n="$2" -v head="$3" -v spec="$4" \'BEGIN{k=split(spec, S, "\\n")} '
    '{for(i=1;i<=k;i++) if(S[i]!="" && index($0,S[i])){t++; buf[t%n]=$0; next}} '
    "!seen[$0]++ && h<head {h++; print} "
    'END{s=t-n+1; if(s<1)s=1; for(i=s;i<=t;i++)print buf[i%n]; print t " " NR > "/dev/stderr"}\''
)
# Only a regular file is read: never a FIFO, socket or device (reading someone's pipe would steal data).
_FILTER_FILE = (
    '[ -e "$1" ] || { printf "%s: No such file or directory\\n" "$1" >&2; exit 0; }; '
    '[ -f "$1" ] || { printf "%s: not a regular file (never read: it could be a pipe)\\n" "$1" >&2; exit 0; }; '
    'stat -L -c "size %s" -- "$1" >&2; '
    '{ head -c "$6" -- "$1" | grep -a -F -e "$5" | grep -v -a -F -e "$4"; '
    'tail -c "$6" -- "$1" | grep -a -F -e "$5" | grep -v -a -F -e "$4"; '
    'grep -a -F -e "$4" -- "$1"; } | ' + _AWK
)
FILTER_LOG = _FILTER_FILE
# Started together with the survey when no --log is given, to save a round trip: picks the serving
# process the collector will pick (the lowest pid whose argv carries a speculative flag; $7 = --pid)
# if its stdout is a regular file, says which on stderr ("pid N PATH"), and filters that file.
# The collector uses the result only when the survey confirms the same process and file.
AUTOLOG = (
    "pick=; for c in $(grep -l -a -E -e 'vllm|sglang' /proc/[0-9]*/cmdline 2>/dev/null | sort -t/ -k3 -n); do "
    'd=${c%/cmdline}; p=${d#/proc/}; [ "$p" = "$$" ] && continue; [ -n "$7" ] && [ "$p" != "$7" ] && continue; '
    "grep -q -a -F -e '--speculative' \"$c\" 2>/dev/null || continue; "
    '[ -f "$d/fd/1" ] || continue; pick=$p; break; done; '
    '[ -n "$pick" ] || { echo "no candidate" >&2; exit 0; }; '
    't=$(readlink "/proc/$pick/fd/1"); printf "pid %s %s\\n" "$pick" "$t" >&2; '
    'set -- "/proc/$pick/fd/1" "$2" "$3" "$4" "$5" "$6"; ' + _FILTER_FILE
)
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
SURVEY = (
    _EMIT + "max=1048576\n"
    "g=$(timeout 20 nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader 2>&1)\n"
    'printf \'G %s %s\\n\' "$?" "$(printf \'%s\' "$g" | base64 -w0)"\n'
    "emit F /proc/sys/kernel/hostname\n"
    "for c in $(grep -l -a -E -e 'vllm|sglang' /proc/[0-9]*/cmdline 2>/dev/null); do d=${c%/cmdline}; "
    'for x in cmdline environ cgroup; do emit F "$d/$x"; done; emit L "$d/fd/1"; emit L "$d/fd/2"; done\n'
    "exit 0"
)
# llama.cpp's llama-server processes (a compiled binary, argv[0] ending in llama-server), read like SURVEY's
# (argv, environment, cgroup, stdout/stderr targets). A script of its own, run only when SURVEY found no
# vLLM/SGLang process, so that SURVEY's text, and the recorded host bundles replayed by it, stay as they were.
SURVEY_LLAMA = (
    _EMIT + "max=1048576\n"
    "for c in $(grep -l -a -E -e 'llama-server' /proc/[0-9]*/cmdline 2>/dev/null); do d=${c%/cmdline}; "
    'for x in cmdline environ cgroup; do emit F "$d/$x"; done; emit L "$d/fd/1"; emit L "$d/fd/2"; done\n'
    "exit 0"
)
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
MODELS = (
    _EMIT + _GUARD + 'max=$1; owner_of "$2"; shift 2\nfor a; do\n  role=${a%%:*}; r=${a#*:}\n'
    '  rroot=$(realpath -e -- "$r" 2>/dev/null) || rroot=$r\n  case $role in\n    R*)\n'
    '      gemit F "$r/refs/main"\n      rev=; guard "$r/refs/main" F >/dev/null && rev=$(head -c 100 -- "$r/refs/main" 2>/dev/null)\n'
    "      case $rev in ''|*[!0-9a-f]*) rev=$(ls -1 -- \"$r/snapshots\" 2>/dev/null | tail -n 1) ;; esac\n"
    "      case $rev in ''|*/*|.|..) continue ;; esac\n"
    '      s="$r/snapshots/$rev" ;;\n    *) s=$r ;;\n  esac\n'
    '  gemit D "$s"; gemit F "$s/config.json"; gemit F "$s/README.md"\n'
    '  case $role in *W) gemit F "$s/model.safetensors" 16384; gemit S "$s/model.safetensors" ;;'
    ' *) gemit F "$s/tokenizer_config.json" ;; esac\ndone\nexit 0'
)
# One more checkpoint file (a shard index, a tokenizer file) by the same rule: $1 max, $2 pid, $3 the
# checkpoint's own directory, then K:PATH items as READ_MANY takes them.
MODEL_READ = (
    _EMIT + _GUARD + 'max=$1; owner_of "$2"; rroot=$(realpath -e -- "$3" 2>/dev/null) || rroot=$3; shift 3\n'
    'for a; do gemit "${a%%:*}" "${a#*:}"; done\nexit 0'
)
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
ENGINE_LOCATE = (
    _EMIT
    + _GUARD
    + _METRICS_GET
    + r"""max=4096; name=$1; pid=$2; words=$3; want=$4; shift 6
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
exit 0"""
)
# The /metrics GET alone, for an engine with no Python package to locate (llama.cpp): $5 URL, $6 literals.
METRICS_ONLY = _METRICS_GET + "exit 0"
METRICS_KEEP = ("spec_decode", "sglang:spec", "vllm:num_requests", "sglang:num_running", "vllm:generation_tokens")
# The engine's files dflash_doctor.engines reads (by `guard`: nothing outside the site dir, no other
# user's unreadable file): the same fixed script as MODEL_READ ($1 max bytes, $2 pid, $3 the site dir).
ENGINE_READ = MODEL_READ
ENGINE_FILE_MAX = 4 << 20

# Where in a package the analysis can want a file (relative to the package dir; both engines). The
# listing is limited to these so a large install lists what matters (~2,000 names for vLLM).
SOURCE_PREFIXES = (
    "./config/",
    "./envs.py",
    "./_version.py",
    "./version.py",
    "./v1/worker/",
    "./v1/spec_decode/",
    "./model_executor/models/",
    "./models/",
    "./srt/models/",
    "./srt/speculative/",
)

READONLY_SCRIPTS = (
    FILTER_LOG,
    FILTER_DOCKER,
    FILTER_JOURNAL,
    AUTOLOG,
    READ_MANY,
    SURVEY,
    MODELS,
    MODEL_READ,
    EXISTING,
    ENGINE_LOCATE,
    SURVEY_LLAMA,
    METRICS_ONLY,
)

SAFETENSORS_PREFIX = 16384  # bytes of a drafter's weights file read with its config (the header)
LOG_HEAD_LINES = 400  # startup lines kept
LOG_STARTUP_BYTES = 16 << 20  # startup lines are looked for in the log's first and last 16 MiB
SPEC_LITERALS = ("SpecDecoding metrics", "Speculative metrics", "Decode batch")  # plus the parsers' own
LOG_TAIL_LINES = 2500  # last spec-decode lines kept: ~7 h at vLLM's 10 s interval, ~1 MiB at most
