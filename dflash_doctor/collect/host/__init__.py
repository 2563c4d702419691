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

Read-only guarantee: every command is one of the argv shapes built in this package (grep, head,
find, readlink, stat, nvidia-smi, and the fixed `sh -c` scripts in scripts.READONLY_SCRIPTS with user values
passed as positional parameters, never spliced into the script). No interpreter of the host's is
ever run. Nothing is written, killed or restarted. tests/hosts checks this by recording every command.

  scripts.py    the fixed scripts and the sizes that bound them
  protocol.py   their answers' wire format (Batch, parse_batch, encode_batch, parse_engine_locate)
  sanitize.py   what a bundle or a report may keep (environment filter, redaction, weights headers)
  files.py      file access for the model readers (BatchFiles, GuardedFiles)
  collector.py  HostCollector / collect_host: the round trips, in parallel, into the EvidenceBuilder
"""

from ...parse.logscan import SPEC_LINE_LITERALS, STARTUP_LITERALS
from .collector import HostCollector, HostOptions, _docker_id, _hub_dir, _systemd_unit, collect_host
from .model_files import BatchFiles, GuardedFiles
from .protocol import Batch, RefusedRead, encode_batch, parse_batch, parse_engine_locate
from .sanitize import RELEVANT_ENV, filter_environ, safetensors_header_only, sanitize
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
    MODEL_READ,
    MODELS,
    READ_MANY,
    READONLY_SCRIPTS,
    SAFETENSORS_PREFIX,
    SOURCE_PREFIXES,
    SPEC_LITERALS,
    SURVEY,
)

__all__ = [
    "AUTOLOG",
    "Batch",
    "BatchFiles",
    "ENGINE_FILE_MAX",
    "ENGINE_LOCATE",
    "ENGINE_READ",
    "EXISTING",
    "FILTER_DOCKER",
    "FILTER_JOURNAL",
    "FILTER_LOG",
    "GuardedFiles",
    "HostCollector",
    "HostOptions",
    "LOG_HEAD_LINES",
    "LOG_STARTUP_BYTES",
    "LOG_TAIL_LINES",
    "METRICS_KEEP",
    "MODELS",
    "MODEL_READ",
    "READ_MANY",
    "READONLY_SCRIPTS",
    "RELEVANT_ENV",
    "RefusedRead",
    "SAFETENSORS_PREFIX",
    "SOURCE_PREFIXES",
    "SPEC_LINE_LITERALS",
    "SPEC_LITERALS",
    "STARTUP_LITERALS",
    "SURVEY",
    "_docker_id",
    "_hub_dir",
    "_systemd_unit",
    "collect_host",
    "encode_batch",
    "filter_environ",
    "parse_batch",
    "parse_engine_locate",
    "safetensors_header_only",
    "sanitize",
]
