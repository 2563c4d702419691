"""Gather evidence from files and flags the user supplied (`diagnose`, `gate`).

Each input kind has one function here; an input a later capability has not filled yet is recorded
as a collection error ("not supported yet"), never dropped.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..errors import DoctorError, UsageError
from ..evidence import EvidenceSet, Source, kind_of
from ..evidence.acceptance import AcceptanceSummary
from ..evidence.engine_facts import EngineAnalysis
from ..evidence.model_facts import DrafterFacts, TargetFacts
from ..evidence.payloads import EngineId, LaunchConfig, MetricsScrape, ProbeResult
from ..interpret.method import lookup_method
from ..models.facts import drafter_facts, target_facts
from ..models.file_access import LocalFiles
from ..parse.engine_failures import read_failures
from ..parse.launch import LaunchParseError, parse_launch_text
from ..parse.logscan import LogScan, ScanPlan, order_rotated, scan
from ..parse.metrics_text import MetricsError, parse_scrapes, parse_window, read_source
from ..parse.sniff import is_scrape_file, sniff_file
from ..safeio import read_regular
from ..settings import DEFAULT, Settings
from .builder import EvidenceBuilder


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


_BOUND = re.compile(
    r"^\s*(?:(?:(?P<y>\d{4})-)?(?P<mo>\d{2})-(?P<d>\d{2})[ T])?(?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?"
    r"(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s*$"
)


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
            return a[a.index("T") :], b
        if len(b) != len(a):
            return a[-len("MM-DDTHH:MM:SS") :], b[-len("MM-DDTHH:MM:SS") :]
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


def gather_logs(
    ev: EvidenceSet,
    paths: list[str],
    engine: str | None = None,
    since: str | None = None,
    until: str | None = None,
    settings: Settings = DEFAULT,
) -> LogScan | None:
    """Scan server logs (plain, .gz, rotated, '-' for stdin) into LOG_SCAN, ACCEPTANCE and STARTUP."""
    result = LogScan()
    if engine:
        result.engine_hint = parse_engine_spec(engine)
    plan = ScanPlan(grep=settings.grep, workers=settings.workers or min(os.cpu_count() or 1, 4))
    read_any = False
    scrapes: list[str] = []
    for path in order_rotated(paths):
        if path != "-" and not os.path.isfile(path):
            ev.could_not_collect(f"log {path}", "file not found" if not os.path.exists(path) else "not a regular file")
            continue
        if is_scrape_file(path):  # a pasted /metrics scrape given as a log: read as what it is
            scrapes.append(path)
            continue
        try:
            scan(path, plan, into=result)
            read_any = True
        except OSError as exc:
            ev.could_not_collect(f"log {path}", f"could not read: {exc.strerror or exc}")
        except KeyboardInterrupt:
            # Ctrl-C: keep what was scanned so far (the columns may be one row apart if it landed
            # mid-append), say so, and let gather_files stop collecting.
            result.fast.even()
            ev.could_not_collect(f"log {path}", "interrupted (Ctrl-C) while reading; only the part read before is used")
            ev.interrupted = True
            read_any = True
            break
    if scrapes:
        ev.notes.append(
            f"{', '.join(scrapes)}: Prometheus exposition text (a /metrics scrape), read as --metrics: one scrape "
            "is the counters since the server started"
        )
        gather_metrics(ev, scrapes, None)
    if not read_any:
        if not scrapes:
            ev.missing(AcceptanceSummary, "no log could be read")
        return None
    if since or until:
        before = result.n_intervals
        untimed = sum(1 for r in result.rows if r[3] is None) + sum(1 for t in result.fast["ts"] if t is None)
        result.keep(lambda ts: _in_window(ts, since, until))
        result.note(
            f"time window {since or '…'} – {until or '…'}: kept {result.n_intervals} of {before} intervals"
            + (f" ({untimed} without a timestamp dropped)" if untimed else "")
        )
    _last_run(result)
    EvidenceBuilder(ev).add_log_scan(result, ", ".join(result.sources), engine_log=_sniff(result, paths))
    if result.n_intervals == 0:
        _gather_failures(ev, paths)
    return result


def _last_run(result: LogScan) -> None:
    """A log that holds several runs one after another (the server restarted, often with another configuration):
    the last one is judged, the others are set aside and said, each with its own τ. Pooled, two configurations made
    one τ that neither had (k 15 at τ 6.4 and k 7 at τ 1.4 read as τ 2.9)."""
    runs = result.runs()
    if not runs:
        return
    last = runs[-1][0]
    result.keep_tag(last)
    said = "; ".join(
        f"{tag}: {n} interval(s), τ {1 + a / d:.2f} over {d:,.0f} drafts" if d > 0 else f"{tag}: {n} interval(s)"
        for tag, n, d, a in runs
    )
    result.note(
        f"the log holds {len(runs)} runs one after another (the server restarted; {said}): the last run ({last}) is "
        "judged, the earlier ones set aside (split the log, or use --since/--until, to judge another)"
    )


def _gather_failures(ev: EvidenceSet, paths: list[str]) -> None:
    """A log without a spec-decode interval: the engine's own failure lines say why (plain files only)."""
    for path in paths:
        if path == "-" or path.endswith((".gz", ".bz2", ".xz", ".zst")) or not os.path.isfile(path):
            continue
        try:
            found = read_failures(path)
        except OSError:
            continue
        EvidenceBuilder(ev).add_engine_failures(found, path)
        if found:
            return


def _sniff(scan: LogScan, paths: list[str]) -> bool | None:
    """Whether the files read are a serving engine's logs, looked at only when the scan found no engine line."""
    if scan.n_intervals or scan.malformed_count or scan.startup.engine:
        return None
    seen = [r for r in (sniff_file(p) for p in paths) if r is not None]
    return any(seen) if seen else None


def gather_engine(ev: EvidenceSet, spec: str) -> None:
    name, version = parse_engine_spec(spec)
    EvidenceBuilder(ev).add_engine(
        EngineId(name, version, version_from=f"--engine {spec}"),
        f"{name} {version or '(version unknown)'}",
        Source("flag", f"--engine {spec}"),
    )


# --- extension points: later capabilities replace these bodies -------------------------------


def gather_metrics(ev: EvidenceSet, sources: list[str], window: str | None) -> None:
    """Prometheus text from files or URLs. A URL with --window is scraped twice, that far apart;
    several files are taken as consecutive scrapes of one server, in the order given."""

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
            got = parse_scrapes(read_source(s), s)
            scrapes.extend(got)
            if got[0].dropped:
                ev.notes.append(
                    f"{s}: {got[0].dropped} pasted line(s) that are not exposition text were left out (a prompt, "
                    "the curl or grep command, Markdown)"
                )
            if len(got) > 1:
                ev.notes.append(f"{s}: {len(got)} scrapes one after another, read as consecutive scrapes")
        except MetricsError as exc:
            ev.could_not_collect(f"metrics {s}", str(exc), MetricsScrape)
        except OSError as exc:
            ev.could_not_collect(
                f"metrics {s}", f"could not read: {getattr(exc, 'reason', None) or exc.strerror or exc}", MetricsScrape
            )
    if scrapes:
        src = Source("url" if sources[0].startswith("http") else "file", ", ".join(sources))
        EvidenceBuilder(ev).add_metrics(scrapes, src)


def gather_drafter(ev: EvidenceSet, path: str, files=None) -> None:
    """Drafter config, model card and weight headers (models.DrafterFacts), never the weights."""

    _gather_model(ev, "drafter", DrafterFacts, drafter_facts, add_drafter, path, files)


def _gather_model(ev: EvidenceSet, what: str, kind: type, read, add, path: str, files) -> None:
    """Read a model's facts and add them; one that cannot be read is a could-not-collect of its kind."""
    try:
        facts = read(path, files)
    except DoctorError as exc:
        ev.could_not_collect(f"{what} {path}", exc.message + (f" ({exc.hint})" if exc.hint else ""))
        ev.missing(kind, exc.message + (f" ({exc.hint})" if exc.hint else ""), Source("flag", path))
        return
    add(ev, facts, path, files)


def add_drafter(ev: EvidenceSet, facts, path: str, files=None) -> None:
    swa = (
        f", sliding layers {list(facts.swa_layers)} (window {facts.sliding_window})"
        if facts.swa_layers
        else ", all full attention"
    )
    ids = list(facts.target_layer_ids) if facts.target_layer_ids else "?"
    ev.add(
        f"{facts.method} drafter, {len(facts.layers)} layers{swa}, ids {ids}, block {facts.block_size}",
        _model_source(path, files, facts.config_path),
        facts,
    )


def gather_target(ev: EvidenceSet, path: str, files=None) -> None:
    """Target config facts (models.TargetFacts), including a nested text_config and tokenizer ids."""

    _gather_model(ev, "target", TargetFacts, target_facts, add_target, path, files)


def add_target(ev: EvidenceSet, facts, path: str, files=None) -> None:
    kinds = ", ".join(f"{n} {k}" for k, n in facts.layer_type_counts.items()) or "layer types not stated"
    ev.add(
        f"{', '.join(facts.architectures) or 'target'}: {facts.num_hidden_layers} layers ({kinds}), "
        f"hidden {facts.hidden_size}, vocab {facts.vocab_size}",
        _model_source(path, files, facts.config_path),
        facts,
    )


def _model_source(spec: str, files, config_path: str) -> Source:
    host = getattr(files, "name", None) if files is not None else None
    return Source("host" if host and host != "local" else "file", config_path, host=host)


def gather_launch(ev: EvidenceSet, text: str) -> None:
    try:
        launch = parse_launch_text(text)
    except LaunchParseError as exc:
        ev.could_not_collect("launch command", str(exc), LaunchConfig)
        return
    if launch.spec_error:
        summary = "invalid --speculative-config"
    elif launch.speculative:
        summary = (
            f"{launch.engine or 'engine?'} {launch.model}, method {launch.method}, drafter {launch.drafter}, "
            f"k {launch.num_speculative_tokens}"
        )
    elif launch.spec_elsewhere:
        summary = (
            f"{launch.engine or 'engine?'} {launch.model}, speculative config in {launch.spec_elsewhere} (not read)"
        )
    else:
        summary = f"{launch.engine or 'engine?'} {launch.model} without a speculative config"
    if launch.image:
        summary += f"; image {launch.image}"
    ev.add(summary, Source("flag", "--launch"), launch)


def read_at_file(value: str) -> str:
    """`@FILE` means the file's content; anything else is the text itself."""
    if value.startswith("@"):
        path = value[1:]

        try:
            return read_regular(path, 1 << 20).decode("utf-8", "replace")
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    return value


def require_inputs(inputs: FileInputs, others: bool = False, missing_ok: bool = False) -> list[str]:
    """Input mistakes as one-line usage errors, before anything is read: nothing given, a log or metrics file
    that is not there (or is a directory). The same file named twice is read once (returned as a warning)."""
    if not (
        inputs.logs or inputs.metrics or inputs.drafter or inputs.target or inputs.launch or inputs.engine or others
    ):
        raise UsageError(
            "nothing to diagnose",
            hint="give a server log: dflash-doctor diagnose --log server.log "
            "(or --metrics URL, --drafter DIR|REPO_ID, --prometheus URL)",
        )
    warnings: list[str] = []
    for flag, paths in (("--log", inputs.logs), ("--metrics", inputs.metrics)):
        seen: dict[str, str] = {}
        kept: list[str] = []
        for p in paths:
            if p == "-" or (flag == "--metrics" and p.startswith(("http://", "https://"))):
                key = p
            else:
                if not os.path.exists(p) and missing_ok:
                    key = p
                elif not os.path.exists(p):
                    raise UsageError(
                        f"{flag} {p}: no such file",
                        hint="check the path"
                        + (
                            "; `--log -` reads the log from stdin"
                            if flag == "--log"
                            else "; a URL starts with http:// or https://"
                        ),
                    )
                elif os.path.isdir(p):
                    raise UsageError(
                        f"{flag} {p} is a directory, not a file",
                        hint="did you mean `dflash-doctor check bundle " + p + "`?"
                        if os.path.exists(os.path.join(p, "manifest.json"))
                        else "name the log file in it",
                    )
                else:
                    key = os.path.realpath(p)
            if key in seen:
                warnings.append(f"{p} was given twice ({flag} {seen[key]}): read once")
                continue
            seen[key] = p
            kept.append(p)
        paths[:] = kept
    return warnings


def _label(inputs: FileInputs) -> str:
    """What the report is about: the log or metrics given ("server.log", "a.log and 2 more")."""
    named = [("stdin" if p == "-" else p) for p in (*inputs.logs, *inputs.metrics)]
    if not named:
        return "files"
    return named[0] + (f" and {len(named) - 1} more" if len(named) > 1 else "")


def _written_at(inputs: FileInputs) -> str | None:
    """When the local files given were last written (the newest), the time their evidence is dated by: the same
    files give the same report, byte for byte. None (dated by the run) when any input is not a local file or folder
    (a URL, standard input, a repo id resolved elsewhere), since then the evidence is as of now."""
    given = [*inputs.logs, *inputs.metrics, inputs.drafter, inputs.target]
    if inputs.launch and inputs.launch.startswith("@"):
        given.append(inputs.launch[1:])
    times = []
    for path in filter(None, given):
        try:
            times.append(os.stat(path).st_mtime)
        except (OSError, ValueError):
            return None
    if not times:
        return None
    return datetime.fromtimestamp(max(times), UTC).replace(microsecond=0).isoformat()


def gather_files(inputs: FileInputs, settings: Settings = DEFAULT) -> EvidenceSet:
    """Evidence from the inputs. On Ctrl-C, what was gathered so far is returned with
    `ev.interrupted` set and a could-not-check entry saying the rest was skipped."""
    ev = EvidenceSet(label=_label(inputs), baselines=settings.baselines())
    ev.as_of = _written_at(inputs)
    try:
        _gather_files(ev, inputs, settings)
    except KeyboardInterrupt:
        ev.interrupted = True
    if ev.interrupted:
        ev.could_not_collect(
            "the remaining inputs", "collection interrupted (Ctrl-C); the report holds what was gathered before"
        )
    return ev


def _gather_files(ev: EvidenceSet, inputs: FileInputs, settings: Settings) -> None:
    if inputs.engine:
        gather_engine(ev, inputs.engine)
    # the launch and the models first: their k settles log lines that print none (a cut line, a partial block)
    if inputs.launch:
        gather_launch(ev, read_at_file(inputs.launch))
    else:
        ev.missing(LaunchConfig, "no launch command given (`--launch @serve-command.txt`)")
    files = LocalFiles(settings.hf_cache)
    launched = ev.get(LaunchConfig)
    if inputs.drafter:
        gather_drafter(ev, inputs.drafter, files)
    elif launched is not None and lookup_method(launched.method) and not launched.drafter:
        ev.inapplicable(DrafterFacts, f"method {launched.method} drafts from the context: there is no drafter model")
    else:
        ev.missing(DrafterFacts, "no drafter given (`--drafter DRAFTER`)")
    if inputs.target:
        gather_target(ev, inputs.target, files)
    else:
        ev.missing(TargetFacts, "no target given (`--target TARGET`)")
    if inputs.logs:
        gather_logs(ev, inputs.logs, inputs.engine, settings=settings)
        if ev.interrupted:
            return
    elif not inputs.metrics:
        ev.missing(AcceptanceSummary, "no log or metrics given (--log FILE, --metrics FILE|URL)")
    if inputs.metrics:
        gather_metrics(ev, inputs.metrics, inputs.window)
        if (
            not inputs.logs
            and not ev.has(AcceptanceSummary)
            and kind_of(AcceptanceSummary) not in {m.kind for m in ev.missing_items}
        ):
            ev.missing(AcceptanceSummary, "the metrics gave no acceptance numbers")
    builder = EvidenceBuilder(ev)
    builder.engine_from_startup("engine and release unknown (`--engine NAME==VERSION`)")
    builder.add_engine_support()
    ev.missing(ProbeResult, "no probe was run (`dflash-doctor probe`)")
    ev.missing(EngineAnalysis, "the engine's installed source was not read (`dflash-doctor check host HOST` reads it)")
