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
from ..parse.logscan import LogScan, aggregate, scan_file


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


_BOUND = re.compile(r"^\s*(?:(?:(?P<y>\d{4})-)?(?P<mo>\d{2})-(?P<d>\d{2})[ T])?(?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?"
                    r"(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s*$")


def parse_time_bound(text: str, flag: str) -> str:
    """--since/--until as the scanner's sortable form: [YYYY-]MM-DDTHH:MM:SS, or THH:MM:SS (time only)."""
    m = _BOUND.match(text)
    if not m:
        raise UsageError(f"{flag} {text!r} is not a time", hint="e.g. '05-14 09:15', '2026-05-14T09:15:00' or '09:15'")
    t = f"T{m['h']}:{m['mi']}:{m['s'] or '00'}"
    if m["mo"]:
        return (f"{m['y']}-" if m["y"] else "") + f"{m['mo']}-{m['d']}" + t
    return t


def _in_window(ts: str | None, lo: str | None, hi: str | None) -> bool:
    if ts is None:
        return False

    def cmp_key(a: str, b: str) -> tuple[str, str]:
        # compare only the parts both have: a log without years, a bound without a date
        if b.startswith("T"):
            return a[a.index("T"):], b
        if len(b) != len(a):
            return a[-len("MM-DDTHH:MM:SS"):], b[-len("MM-DDTHH:MM:SS"):]
        return a, b

    if lo is not None:
        a, b = cmp_key(ts, lo)
        if a < b:
            return False
    if hi is not None:
        a, b = cmp_key(ts, hi)
        if a > b:
            return False
    return True


def gather_logs(ev: EvidenceSet, paths: list[str], engine: str | None = None, since: str | None = None,
                until: str | None = None, meanwhile=None) -> LogScan | None:
    """Scan server logs (plain, .gz, rotated, '-' for stdin) into LOG_SCAN, ACCEPTANCE and STARTUP."""
    from ..parse.logscan import order_rotated

    scan = LogScan()
    if engine:
        scan.engine_hint = parse_engine_spec(engine)
    read_any = False
    for path in order_rotated(paths):
        if path != "-" and not os.path.isfile(path):
            ev.could_not_collect(f"log {path}", "file not found" if not os.path.exists(path) else "not a regular file")
            continue
        try:
            scan_file(path, scan, meanwhile=meanwhile)
            read_any = True
        except OSError as exc:
            ev.could_not_collect(f"log {path}", f"could not read: {exc.strerror or exc}")
        except KeyboardInterrupt:
            # Ctrl-C: keep what was scanned so far (the columns may be one row apart if it landed
            # mid-append), say so, and let gather_files stop collecting.
            n = min(len(col) for col in scan.fast.values())
            for col in scan.fast.values():
                del col[n:]
            ev.could_not_collect(f"log {path}", "interrupted (Ctrl-C) while reading; only the part read before is used")
            ev.interrupted = True
            read_any = True
            break
    if not read_any:
        ev.missing(Kind.ACCEPTANCE, "no log could be read")
        return None
    if since or until:
        before = scan.n_intervals
        untimed = sum(1 for r in scan.rows if r[3] is None) + sum(1 for t in scan.fast["ts"] if t is None)
        scan.keep(lambda ts: _in_window(ts, since, until))
        scan.note(f"time window {since or '…'} – {until or '…'}: kept {scan.n_intervals} of {before} intervals"
                  + (f" ({untimed} without a timestamp dropped)" if untimed else ""))
    src = Source("file", ", ".join(scan.sources))
    ev.add(Kind.LOG_SCAN, f"scanned {_size(scan)}, {scan.n_intervals} spec-decode intervals, "
                          f"{scan.malformed_count} malformed", src, scan_stats(scan))
    summary = aggregate(scan)
    if summary is None:
        ev.missing(Kind.ACCEPTANCE, "the log holds no spec-decode metrics lines")
    elif summary.drafts > 0:
        ev.add(Kind.ACCEPTANCE, f"τ {summary.mean_acceptance_length:.2f} over {summary.drafts:.0f} drafts "
                                f"({summary.intervals} intervals)", src, summary)
        ev.notes.extend(summary.notes)
    else:
        ev.missing(Kind.ACCEPTANCE, "; ".join(summary.notes) or "no drafts count in the log")
    st = scan.startup
    if st.engine or st.args or st.architecture:
        ev.add(Kind.STARTUP, f"{st.engine or 'engine'} {st.version or '(version not logged)'}"
                             + (f", method {st.method}" if st.method else "")
                             + (f", drafter {st.drafter}" if st.drafter else ""), src, st)
        ev.notes.insert(0, "launched: " + ", ".join(
            f"{k} {v}" for k, v in (("engine", st.engine), ("version", st.version), ("model", st.model),
                                    ("method", st.method), ("drafter", st.drafter),
                                    ("k", st.num_speculative_tokens), ("architectures", ", ".join(st.architectures)))
            if v))
    if scan.mean_normalised:
        ev.notes.append(f"{scan.mean_normalised} vLLM 0.8.5 line(s) print the mean length without the bonus token; "
                        "normalised to 1 + accepted/drafts")
    ev.notes.extend(scan.notes)
    return scan


def _size(scan: LogScan) -> str:
    if scan.lines is not None:
        return f"{scan.lines} lines"
    return f"{scan.bytes / (1 << 20):.0f} MiB"


def scan_stats(scan: LogScan) -> dict:
    return scan.stats()


def gather_engine(ev: EvidenceSet, spec: str) -> None:
    name, version = parse_engine_spec(spec)
    ev.add(Kind.ENGINE, f"{name} {version or '(version unknown)'}", Source("flag", f"--engine {spec}"),
           {"name": name, "version": version})


# --- extension points: later capabilities replace these bodies -------------------------------

def gather_metrics(ev: EvidenceSet, sources: list[str], window: str | None) -> None:
    """Prometheus text from files or URLs. A URL with --window is scraped twice, that far apart;
    several files are taken as consecutive scrapes of one server, in the order given."""
    import time

    from ..parse.frame import summarize
    from ..parse.prometheus import MetricsError, intervals_from_scrapes, parse_text, parse_window, read_source

    wait = None
    if window:
        try:
            wait = parse_window(window)
        except ValueError:
            raise UsageError(f"--window {window!r} is not a duration", hint="e.g. --window 30s") from None
        if wait > 600:
            raise UsageError("--window is at most 10 minutes")
    plan: list[str] = []
    for s in sources:
        plan.append(s)
        if wait is not None and s.startswith(("http://", "https://")):
            plan.append(s)  # second scrape of the same URL
    scrapes = []
    for i, s in enumerate(plan):
        if i and plan[i - 1] == s and wait is not None:
            time.sleep(wait)
        try:
            scrapes.append(parse_text(read_source(s), s))
        except MetricsError as exc:
            ev.could_not_collect(f"metrics {s}", str(exc), Kind.METRICS)
        except OSError as exc:
            ev.could_not_collect(f"metrics {s}", f"could not read: {getattr(exc, 'reason', None) or exc.strerror or exc}",
                                 Kind.METRICS)
    scrapes = [sc for sc in scrapes if sc.engines] or scrapes
    if not scrapes:
        return
    if not any(sc.engines for sc in scrapes):
        ev.could_not_collect("metrics " + ", ".join(sources), "no spec-decode series in the scrape "
                             "(spec decoding off, or metrics disabled)", Kind.METRICS)
        return
    st = ev.value(Kind.STARTUP)
    k_hint = getattr(st, "num_speculative_tokens", None)
    rows, notes, table = intervals_from_scrapes(scrapes, k_hint)
    src = Source("url" if sources[0].startswith("http") else "file", ", ".join(sources))
    summary = summarize(rows) if rows else None
    ev.add(Kind.METRICS, f"{len(scrapes)} scrape(s), {len(table)} engine series"
                         + (f", τ {summary.mean_acceptance_length:.2f}" if summary else ""), src,
           {"scrapes": [sc.to_dict() for sc in scrapes], "engines": table, "notes": notes,
            "acceptance": summary})
    ev.notes.extend(notes)
    if summary is not None and summary.drafts > 0:
        if ev.has(Kind.ACCEPTANCE):
            ev.notes.append(f"metrics give τ {summary.mean_acceptance_length:.2f}; the log's acceptance is used "
                            "for the checks (it has per-interval detail)")
        else:
            ev.add(Kind.ACCEPTANCE, f"τ {summary.mean_acceptance_length:.2f} over {summary.drafts:.0f} drafts "
                                    "(from /metrics)", src, summary)


def gather_drafter(ev: EvidenceSet, path: str, files=None) -> None:
    """Drafter config, model card and weight headers (models.DrafterFacts), never the weights."""
    from ..models.facts import drafter_facts

    _gather_model(ev, "drafter", Kind.DRAFTER, drafter_facts, add_drafter, path, files)


def _gather_model(ev: EvidenceSet, what: str, kind: Kind, read, add, path: str, files) -> None:
    """Read a model's facts and add them; one that cannot be read is a could-not-collect of its kind."""
    try:
        facts = read(path, files)
    except DoctorError as exc:
        ev.could_not_collect(f"{what} {path}", exc.message + (f" ({exc.hint})" if exc.hint else ""), kind)
        return
    add(ev, facts, path, files)


def add_drafter(ev: EvidenceSet, facts, path: str, files=None) -> None:
    swa = (f", sliding layers {list(facts.swa_layers)} (window {facts.sliding_window})" if facts.swa_layers
           else ", all full attention")
    ids = list(facts.target_layer_ids) if facts.target_layer_ids else "?"
    ev.add(Kind.DRAFTER, f"{facts.method} drafter, {len(facts.layers)} layers{swa}, ids {ids}, block {facts.block_size}",
           _model_source(path, files, facts.config_path), facts)


def gather_target(ev: EvidenceSet, path: str, files=None) -> None:
    """Target config facts (models.TargetFacts), including a nested text_config and tokenizer ids."""
    from ..models.facts import target_facts

    _gather_model(ev, "target", Kind.TARGET, target_facts, add_target, path, files)


def add_target(ev: EvidenceSet, facts, path: str, files=None) -> None:
    kinds = ", ".join(f"{n} {k}" for k, n in facts.layer_type_counts.items()) or "layer types not stated"
    ev.add(Kind.TARGET, f"{', '.join(facts.architectures) or 'target'}: {facts.num_hidden_layers} layers ({kinds}), "
                        f"hidden {facts.hidden_size}, vocab {facts.vocab_size}",
           _model_source(path, files, facts.config_path), facts)


def _model_source(spec: str, files, config_path: str) -> Source:
    host = getattr(files, "name", None) if files is not None else None
    return Source("host" if host and host != "local" else "file", config_path, host=host)


def gather_launch(ev: EvidenceSet, text: str) -> None:
    from ..parse.launch import LaunchParseError, parse_launch_text

    try:
        launch = parse_launch_text(text)
    except LaunchParseError as exc:
        ev.could_not_collect("launch command", str(exc), Kind.LAUNCH)
        return
    if launch.spec_error:
        summary = "invalid --speculative-config"
    elif launch.speculative:
        summary = (f"{launch.engine or 'engine?'} {launch.model}, method {launch.method}, drafter {launch.drafter}, "
                   f"k {launch.num_speculative_tokens}")
    else:
        summary = f"{launch.engine or 'engine?'} {launch.model} without a speculative config"
    ev.add(Kind.LAUNCH, summary, Source("flag", "--launch"), launch)


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
    """Evidence from the inputs. On Ctrl-C, what was gathered so far is returned with
    `ev.interrupted` set and a could-not-check entry saying the rest was skipped."""
    ev = EvidenceSet(label="files")
    try:
        _gather_files(ev, inputs)
    except KeyboardInterrupt:
        ev.interrupted = True
    if ev.interrupted:
        ev.could_not_collect("the remaining inputs", "collection interrupted (Ctrl-C); the report holds what was "
                                                     "gathered before")
    return ev


def _gather_files(ev: EvidenceSet, inputs: FileInputs) -> None:
    if inputs.engine:
        gather_engine(ev, inputs.engine)
    if inputs.logs:
        gather_logs(ev, inputs.logs, inputs.engine)
        if ev.interrupted:
            return
    elif not inputs.metrics:
        ev.missing(Kind.ACCEPTANCE, "no log or metrics given (--log FILE, --metrics FILE|URL)")
    if inputs.metrics:
        gather_metrics(ev, inputs.metrics, inputs.window)
        if not inputs.logs and not ev.has(Kind.ACCEPTANCE):
            ev.missing(Kind.ACCEPTANCE, "the metrics gave no acceptance numbers")
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
