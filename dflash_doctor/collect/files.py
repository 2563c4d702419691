"""Gather evidence from files and flags the user supplied (`diagnose`, `gate`).

Each input kind has one function here; an input a later capability has not filled yet is recorded
as a collection error ("not supported yet"), never dropped.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..errors import DoctorError, UsageError
from ..evidence import EvidenceSet, Kind, Source
from ..parse.logscan import LogScan, aggregate, iter_file_lines, scan_lines


@dataclass
class FileInputs:
    logs: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)
    drafter: str | None = None
    target: str | None = None
    engine: str | None = None  # NAME==VERSION
    launch: str | None = None  # text or @FILE
    window: str | None = None


_ENGINE = re.compile(r"^\s*(?P<name>[A-Za-z][\w-]*)\s*(?:==\s*(?P<version>[\w.+-]+))?\s*$")


def parse_engine_spec(spec: str) -> tuple[str, str | None]:
    m = _ENGINE.match(spec)
    if not m:
        raise UsageError(f"--engine {spec!r} is not NAME==VERSION", hint="for example --engine vllm==0.20.1")
    return m.group("name").lower(), m.group("version")


def gather_logs(ev: EvidenceSet, paths: list[str]) -> LogScan | None:
    scan = LogScan()
    read_any = False
    for path in paths:
        if path != "-" and not os.path.isfile(path):
            ev.could_not_collect(f"log {path}", "file not found" if not os.path.exists(path) else "not a regular file")
            continue
        try:
            scan_lines(iter_file_lines(path), path, into=scan)
            read_any = True
        except (OSError, EOFError) as exc:
            ev.could_not_collect(f"log {path}", f"could not read: {exc}")
    if not read_any:
        ev.missing(Kind.ACCEPTANCE, "no log could be read")
        return None
    src = Source("file", ", ".join(scan.sources))
    ev.add(Kind.LOG_SCAN, f"scanned {scan.lines} lines, {len(scan.intervals)} spec-decode intervals, "
                          f"{len(scan.malformed)} malformed", src, scan_stats(scan))
    summary = aggregate(scan.intervals)
    if summary is None:
        ev.missing(Kind.ACCEPTANCE, "the log holds no spec-decode metrics lines")
    else:
        ev.add(Kind.ACCEPTANCE, f"τ {summary.mean_acceptance_length:.2f} over {summary.drafts:.0f} drafts "
                                f"({summary.intervals} intervals)", src, summary)
    st = scan.startup
    if st.engine or st.args or st.architecture:
        ev.add(Kind.STARTUP, f"{st.engine or 'engine'} {st.version or '(version not logged)'}"
                             + (f", method {st.method}" if st.method else "")
                             + (f", drafter {st.drafter}" if st.drafter else ""), src, st)
    return scan


def scan_stats(scan: LogScan) -> dict:
    return {
        "lines": scan.lines,
        "candidate_lines": scan.candidate_lines,
        "intervals": len(scan.intervals),
        "malformed": len(scan.malformed),
        "malformed_examples": [m.__dict__ for m in scan.malformed[:5]],
        "sources": list(scan.sources),
    }


def gather_engine(ev: EvidenceSet, spec: str) -> None:
    name, version = parse_engine_spec(spec)
    ev.add(Kind.ENGINE, f"{name} {version or '(version unknown)'}", Source("flag", f"--engine {spec}"),
           {"name": name, "version": version})


# --- extension points: later capabilities replace these bodies -------------------------------

def gather_metrics(ev: EvidenceSet, sources: list[str], window: str | None) -> None:
    for s in sources:
        ev.could_not_collect(f"metrics {s}", "not supported yet", Kind.METRICS)


def gather_drafter(ev: EvidenceSet, path: str, files=None) -> None:
    """Drafter config, model card and weight headers (models.DrafterFacts), never the weights."""
    from ..models.facts import drafter_facts
    try:
        facts = drafter_facts(path, files)
    except DoctorError as exc:
        ev.could_not_collect(f"drafter {path}", exc.message + (f" ({exc.hint})" if exc.hint else ""), Kind.DRAFTER)
        return
    add_drafter(ev, facts, path, files)


def add_drafter(ev: EvidenceSet, facts, path: str, files=None) -> None:
    swa = (f", sliding layers {list(facts.swa_layers)} (window {facts.sliding_window})" if facts.swa_layers
           else ", all full attention")
    ids = list(facts.target_layer_ids) if facts.target_layer_ids else "?"
    ev.add(Kind.DRAFTER, f"{facts.method} drafter, {len(facts.layers)} layers{swa}, ids {ids}, block {facts.block_size}",
           _model_source(path, files, facts.config_path), facts)


def gather_target(ev: EvidenceSet, path: str, files=None) -> None:
    """Target config facts (models.TargetFacts), including a nested text_config and tokenizer ids."""
    from ..models.facts import target_facts
    try:
        facts = target_facts(path, files)
    except DoctorError as exc:
        ev.could_not_collect(f"target {path}", exc.message + (f" ({exc.hint})" if exc.hint else ""), Kind.TARGET)
        return
    add_target(ev, facts, path, files)


def add_target(ev: EvidenceSet, facts, path: str, files=None) -> None:
    kinds = ", ".join(f"{n} {k}" for k, n in facts.layer_type_counts.items()) or "layer types not stated"
    ev.add(Kind.TARGET, f"{', '.join(facts.architectures) or 'target'}: {facts.num_hidden_layers} layers ({kinds}), "
                        f"hidden {facts.hidden_size}, vocab {facts.vocab_size}",
           _model_source(path, files, facts.config_path), facts)


def _model_source(spec: str, files, config_path: str) -> Source:
    host = getattr(files, "name", None) if files is not None else None
    return Source("host" if host and host != "local" else "file", config_path, host=host)


def gather_launch(ev: EvidenceSet, text: str) -> None:
    ev.could_not_collect("launch command", "not supported yet", Kind.LAUNCH)


def gather_engine_support(ev: EvidenceSet) -> None:
    """Attach the support-table row for the engine named by --engine or found in the log."""
    from ..models.engine_support import lookup
    eng = ev.get(Kind.ENGINE)
    if eng is None or not isinstance(eng.value, dict):
        ev.missing(Kind.ENGINE_SUPPORT, "engine and version unknown (give --engine NAME==VERSION)")
        return
    name, version = eng.value.get("name"), eng.value.get("version")
    if not version:
        ev.missing(Kind.ENGINE_SUPPORT, f"{name} version unknown (give --engine {name}==VERSION)")
        return
    row = lookup(name, version)
    if row is None:
        ev.missing(Kind.ENGINE_SUPPORT, f"{name} {version} is not in the engine-support table")
        return
    swa = row.drafter_swa or "n/a"
    ev.add(Kind.ENGINE_SUPPORT, f"{name} {version}: DFlash {'yes' if row.dflash else 'no'}, target_layer_ids "
                                f"{row.layer_map or 'n/a'}, drafter SWA {swa}"
                                + (f" (verified in {row.verified} source)" if row.verified else " (from the reference)"),
           Source("derived", f"engine_support.toml row {row.range} (from {eng.ref})"), row)


def read_at_file(value: str) -> str:
    """`@FILE` means the file's content; anything else is the text itself."""
    if value.startswith("@"):
        path = value[1:]
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read(1 << 20)
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    return value


def gather_files(inputs: FileInputs) -> EvidenceSet:
    ev = EvidenceSet(label="files")
    if inputs.engine:
        gather_engine(ev, inputs.engine)
    if inputs.logs:
        gather_logs(ev, inputs.logs)
    else:
        ev.missing(Kind.ACCEPTANCE, "no log or metrics given (--log FILE, --metrics FILE|URL)")
    if inputs.metrics:
        gather_metrics(ev, inputs.metrics, inputs.window)
    if inputs.launch:
        gather_launch(ev, read_at_file(inputs.launch))
    else:
        ev.missing(Kind.LAUNCH, "no launch command given (--launch TEXT|@FILE)")
    if inputs.drafter:
        gather_drafter(ev, inputs.drafter)
    else:
        ev.missing(Kind.DRAFTER, "no drafter given (--drafter PATH)")
    if inputs.target:
        gather_target(ev, inputs.target)
    else:
        ev.missing(Kind.TARGET, "no target given (--target PATH)")
    if not ev.has(Kind.ENGINE):
        st = ev.value(Kind.STARTUP)
        if st is not None and st.engine:
            ev.add(Kind.ENGINE, f"{st.engine} {st.version or '(version not logged)'}",
                   Source("derived", "log startup lines"), {"name": st.engine, "version": st.version})
        else:
            ev.missing(Kind.ENGINE, "engine and version unknown (give --engine NAME==VERSION)")
    gather_engine_support(ev)
    ev.missing(Kind.PROBE, "no probe was run (`dflash-doctor probe`)")
    ev.missing(Kind.ENGINE_SOURCE, "the engine's installed source was not read (use `check host`)")
    return ev
