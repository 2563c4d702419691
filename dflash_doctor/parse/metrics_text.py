"""Spec-decode numbers from Prometheus text (`/metrics`), parsed with prometheus_client's parser.

vLLM V1 exposes counters: one scrape is the picture since the server started, two scrapes give
the interval between them. llama.cpp's llama-server (`--metrics`, tools/server/server-task.cpp
`server_task_result_metrics::to_prometheus` in the 0.5.0-dev vendored by llama-cpp-python 0.3.36) exposes the
same four counters under `llamacpp:` with the same meanings: `spec_decode_num_drafts_total` counts verification
steps (server-context.cpp adds one per verified draft), draft tokens, accepted draft tokens (bonus excluded) and
`spec_decode_num_accepted_tokens_per_pos_total{position}` sized to the drafter's n-max (so its length is k).
V0 exposed gauges (acceptance rate, efficiency), SGLang exposes gauges of
its last decode-log interval. Series with different `engine` labels (data parallel) are kept apart
and summed. Meanings: shared/reference/engine-logs.md.
"""

from __future__ import annotations

import errno
import math
import re
from dataclasses import dataclass, field
from typing import Any

MAX_BYTES = 32 << 20

_V1 = {
    "vllm:spec_decode_num_drafts": "drafts",
    "vllm:spec_decode_num_draft_tokens": "drafted",
    "vllm:spec_decode_num_accepted_tokens": "accepted",
}
_V1_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"
# Every token the engine generated (V1 loggers.py, `generation_tokens`; per engine label): with the drafts and
# accepted counters it gives the share of the output that came from drafting steps. A lookup proposer (n-gram)
# drafts only where the context repeats, and only drafting steps are counted in the spec-decode counters.
_V1_GENERATED = "vllm:generation_tokens"
# llama-server's counters: the same names under its own prefix (no engine label: one model per server)
_COUNTER_PREFIXES = {"vllm:": "vLLM", "llamacpp:": "llama.cpp"}
_ROW_FORMAT = {"llama.cpp": "llamacpp-metrics"}
_GAUGES = {
    "vllm:spec_decode_draft_acceptance_rate": "v0_rate",
    "vllm:spec_decode_efficiency": "v0_efficiency",
    "sglang:spec_accept_length": "sgl_len",
    "sglang:spec_accept_rate": "sgl_rate",
    "sglang:spec_verify_calls": "sgl_verify",
}


class MetricsError(ValueError):
    pass


@dataclass
class Scrape:
    """Spec-decode series of one scrape, per engine label."""

    source: str
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)
    series: int = 0  # samples read in total
    taken_at: float | None = None
    dropped: int = 0  # pasted lines around the exposition text that were not read (a prompt, a curl command)

    def engine(self, label: str) -> dict[str, Any]:
        return self.engines.setdefault(label, {"pos": {}})

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "series": self.series,
            "engines": {
                k: {kk: (dict(vv) if isinstance(vv, dict) else vv) for kk, vv in v.items()}
                for k, v in self.engines.items()
            },
        }


def _base(name: str) -> str:
    for suffix in ("_total",):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


# One exposition line as a user pastes it: a sample `name{labels} value [timestamp]` or a `# HELP`/`# TYPE` comment,
# possibly behind a Markdown quote or list marker, or a `grep -n`/`grep -H` prefix.
_SAMPLE = re.compile(
    r"^[A-Za-z_:][\w:]*(?:\{[^{}\n]*\})?[ \t]+[-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|NaN|[+-]?Inf)(?:[ \t]+-?\d+)?$"
)
_COMMENT = re.compile(r"^# (?:HELP|TYPE) [A-Za-z_:][\w:]*(?: .*)?$")
_PASTE_LEAD = re.compile(r"^\s*(?:>\s*)*(?:[-*]\s+)?(?:[\w./-]+:\d+:)?")
_SPEC_SAMPLE = re.compile(r"^(?:vllm:spec_decode|llamacpp:spec_decode|sglang:spec_)\w*(?:\{[^{}\n]*\})?[ \t]+\S", re.M)


def exposition_lines(text: str) -> tuple[str, int]:
    """The exposition lines of a pasted scrape (a shell prompt, `curl`/`grep` commands, Markdown around it
    dropped, a quote/list/`grep -n` lead taken off each line) and how many other non-empty lines were dropped."""
    kept: list[str] = []
    dropped = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if not (_SAMPLE.match(line) or _COMMENT.match(line)):
            line = _PASTE_LEAD.sub("", line, count=1).strip()
        if _SAMPLE.match(line) or _COMMENT.match(line):
            kept.append(line)
        else:
            dropped += 1
    return "\n".join(kept) + "\n", dropped


def looks_like_exposition(head: str) -> bool:
    """Whether a text given as a log is a pasted /metrics scrape: spec-decode samples, and more exposition lines
    than other lines."""
    if ":spec_" not in head:  # (every spec-decode series name holds it: an ordinary log is not walked line by line)
        return False
    kept, dropped = exposition_lines(head)
    return bool(_SPEC_SAMPLE.search(kept)) and kept.count("\n") > dropped


def parse_text(text: str, source: str) -> Scrape:
    """Parse exposition text; raise MetricsError when it is not Prometheus text at all. A pasted scrape (a prompt,
    the `curl … | grep` line, Markdown around it) is read from its exposition lines (`Scrape.dropped` counts the
    others). Text holding several scrapes one after another: the last (`parse_scrapes` gives them all)."""
    return parse_scrapes(text, source)[-1]


def parse_scrapes(text: str, source: str) -> list[Scrape]:
    """The scrapes a text holds, in order: a series (name and labels) seen again starts the next one (a paste of
    `curl …/metrics` before and after a run)."""
    from prometheus_client.parser import text_string_to_metric_families

    dropped = 0
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as exc:  # the parser raises ValueError/TypeError/IndexError on junk
        cleaned, dropped = exposition_lines(text)
        families = []
        try:
            if dropped and cleaned.strip():
                families = list(text_string_to_metric_families(cleaned))
        except Exception:  # noqa: BLE001 - still not exposition text: the first error says why
            families = []
        if not families:
            raise MetricsError(f"not Prometheus text ({type(exc).__name__}: {str(exc)[:120]})") from None
    groups: list[list] = [[]]
    seen: set = set()
    for fam in families:
        keys = {(s.name, tuple(sorted(s.labels.items()))) for s in fam.samples}
        if keys & seen:
            groups.append([])
            seen = set()
        seen |= keys
        groups[-1].append(fam)
    out: list[Scrape] = []
    for group in groups:
        scrape = Scrape(source, dropped=dropped if not out else 0)
        try:
            _read_samples(scrape, group)
        except (OverflowError, ValueError) as exc:  # a value too large for a float is not a counter
            raise MetricsError(f"a sample value is out of range ({str(exc)[:80]})") from None
        out.append(scrape)
    return out


def _read_samples(scrape: Scrape, families) -> None:
    generated: dict[str, float] = {}
    for fam in families:
        for s in fam.samples:
            scrape.series += 1
            name = _base(s.name)
            if name.endswith("_created"):
                continue
            label = s.labels.get("engine", "")
            prefix, _, rest = name.partition(":")
            kind = _COUNTER_PREFIXES.get(prefix + ":")
            name = "vllm:" + rest if kind else name  # the counters' meanings are the same under both prefixes
            if kind and (name in _V1 or name == _V1_POS):
                scrape.engine(label)["kind"] = kind
            if name in _V1:
                e = scrape.engine(label)
                e[_V1[name]] = e.get(_V1[name], 0.0) + float(s.value)  # model_name splits add up
            elif name == _V1_POS:
                try:
                    pos = int(s.labels.get("position", ""))
                except ValueError:
                    continue
                e = scrape.engine(label)
                e["pos"][pos] = e["pos"].get(pos, 0.0) + float(s.value)
            elif name in _GAUGES:
                scrape.engine(label)[_GAUGES[name]] = float(s.value)
            elif name == _V1_GENERATED and kind == "vLLM":
                generated[label] = generated.get(label, 0.0) + float(s.value)
    for label, tokens in generated.items():
        if label in scrape.engines:  # kept only beside spec-decode series: alone it is no spec-decode evidence
            scrape.engines[label]["generated"] = tokens


def _delta(a: dict, b: dict) -> tuple[dict, bool]:
    """b - a for counters; False when a counter went down (a restart between the scrapes)."""
    out: dict[str, Any] = {"pos": {}}
    ok = True
    for key in ("drafts", "drafted", "accepted", "sgl_verify", "generated"):
        if key in b:
            d = b[key] - a.get(key, 0.0)
            ok &= d >= 0
            out[key] = d
    for p, v in b["pos"].items():
        d = v - a["pos"].get(p, 0.0)
        ok &= d >= 0
        out["pos"][p] = d
    for key in ("v0_rate", "v0_efficiency", "sgl_len", "sgl_rate", "kind"):
        if key in b:
            out[key] = b[key]
    return out, ok


def _kinds(scrape: Scrape) -> str:
    """Whose counters these are (vLLM, llama.cpp), for the notes."""
    return "/".join(sorted({e["kind"] for e in scrape.engines.values() if "kind" in e})) or "vLLM"


def _counter_row(name: str, src: str, e: dict, k_hint: int | None, rows: list, notes: list[str]) -> dict[str, Any]:
    """One engine's counters: a row appended to `rows` when they are sane and hold drafts; its table entry."""
    drafts = e.get("drafts")
    drafted, accepted = e.get("drafted"), e.get("accepted")
    k = len(e["pos"]) or k_hint
    est = False
    if drafts is None and drafted is not None and k:
        drafts, est = drafted / k, True  # 0.8.3–0.8.4 expose no drafts counter
        notes.append(f"{name}: no drafts counter (vLLM 0.8.3–0.8.4): drafts estimated as draft tokens / k")
    pp: tuple[float, ...] = ()
    if drafts and e["pos"]:
        pp = tuple(e["pos"].get(i, 0.0) / drafts for i in range(max(e["pos"]) + 1))
    # counters are never negative or infinite, and never accept more than was drafted
    sane = (
        all(v is None or (math.isfinite(v) and v >= 0) for v in (drafts, drafted, accepted))
        and (drafted is None or accepted is None or accepted <= drafted)
        and all(0.0 <= r <= 1.0 for r in pp)
    )
    if not sane:
        notes.append(f"{name}: implausible counter values (negative, infinite, or more accepted than drafted); ignored")
    elif drafts is not None and drafts > 0 and accepted is not None:
        rows.append(
            (
                _ROW_FORMAT.get(str(e.get("kind")), "vllm-metrics"),
                src,
                None,
                None,
                f"metrics {name}",
                drafts,
                int(drafted) if drafted is not None else None,
                int(accepted),
                k,
                pp,
                1.0 + accepted / drafts,
                None,
                None,
                None,
                None,
                est,
            )
        )
    entry = {"engine_kind": e["kind"]} if "kind" in e else {}
    return (
        entry
        | {
            "drafts": drafts,
            "draft_tokens": drafted,
            "accepted": accepted,
            "per_position_counts": [e["pos"][i] for i in sorted(e["pos"])],
        }
        | ({"generated_tokens": e["generated"]} if sane and "generated" in e else {})
    )


def intervals_from_scrapes(scrapes: list[Scrape], k_hint: int | None = None) -> tuple[list[tuple], list[str], dict]:
    """Rows in the SpecInterval field order (parse.frame.FIELDS), notes, and a per-engine table.

    One scrape: counters since start. Several: consecutive scrapes of one server, differenced.
    """
    notes: list[str] = []
    rows: list[tuple] = []
    table: dict[str, Any] = {}
    if not scrapes:
        return rows, notes, table
    last = scrapes[-1]
    if len(scrapes) == 1:
        notes.append(
            f"one scrape: {_kinds(last)} counters cover everything since the server started "
            "(scrape twice with --window for a recent interval)"
        )
        pairs = {lab: (e, True) for lab, e in last.engines.items()}
    else:
        notes.append(f"{len(scrapes)} scrapes: the interval between the first and the last")
        first = scrapes[0]
        pairs = {}
        for lab, e in last.engines.items():
            prev = first.engines.get(lab, {"pos": {}})
            d, ok = _delta(prev, e)
            if not ok:
                notes.append(
                    f"engine {lab or '0'}: a counter went down between scrapes (restart?); "
                    "using the last scrape since start"
                )
                d = e
            pairs[lab] = (d, True)
    for lab, (e, _) in sorted(pairs.items()):
        name = f"engine {lab}" if lab else "engine"
        src = last.source
        if "drafts" in e or "drafted" in e:
            table[name] = _counter_row(name, src, e, k_hint, rows, notes)
        if "v0_rate" in e or "v0_efficiency" in e:
            row = {"draft_acceptance_rate": e.get("v0_rate"), "system_efficiency": e.get("v0_efficiency")}
            if e.get("v0_efficiency") is not None and k_hint:
                row["tau"] = e["v0_efficiency"] * (k_hint + 1)  # efficiency = emitted / (drafts·(k+1))
            notes.append(
                f"{name}: vLLM V0 gauges only (acceptance rate, efficiency)"
                + ("; τ = efficiency·(k+1)" if k_hint else "; give k to turn efficiency into τ")
            )
            table.setdefault(name, {}).update(row)
        if "sgl_len" in e and not (math.isfinite(e["sgl_len"]) and e["sgl_len"] >= 1.0):
            notes.append(f"{name}: SGLang spec_accept_length {e['sgl_len']} is below 1 or not a number; ignored")
        elif "sgl_len" in e:
            verify = e.get("sgl_verify")
            weight = verify if verify and verify > 0 else 1.0
            k = k_hint
            rows.append(
                (
                    "sglang-metrics",
                    src,
                    None,
                    None,
                    f"metrics {name}",
                    float(weight),
                    None,
                    (e["sgl_len"] - 1.0) * weight,
                    k,
                    (),
                    e["sgl_len"],
                    None,
                    None,
                    None,
                    None,
                    True,
                )
            )
            notes.append(
                f"{name}: SGLang `spec_accept_length` is a gauge of the last decode-log interval, "
                "not a total" + ("" if verify else "; with no verify-call counter it carries no weight")
            )
            table.setdefault(name, {}).update(
                {"accept_length": e["sgl_len"], "accept_rate": e.get("sgl_rate"), "verify_calls": verify}
            )
    if len(pairs) > 1:
        notes.append(f"{len(pairs)} engine labels: kept apart in the table and summed in the totals")
    return rows, notes, table


def read_source(source: str, timeout: float = 10.0) -> str:
    """The text of a metrics file or URL, capped at MAX_BYTES."""
    if source.startswith(("http://", "https://")):
        from ..deadline import fetch_bytes

        data = fetch_bytes(source, timeout, MAX_BYTES)  # (the whole answer within `timeout`, not each read)
    else:
        import gzip

        from ..safeio import read_regular

        try:
            data = read_regular(source, MAX_BYTES)  # (a FIFO hung the run)
        except OSError as exc:
            if exc.errno != errno.EFBIG:
                raise
            raise MetricsError(f"larger than {MAX_BYTES >> 20} MiB: not a /metrics page") from None
        if data[:2] == b"\x1f\x8b":  # inflate at most the cap: a gzip bomb must not take gigabytes
            import io
            import zlib

            try:
                with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
                    data = gz.read(MAX_BYTES + 1)
            except (EOFError, zlib.error, OSError) as exc:  # truncated or corrupt: one line, not a crash
                raise MetricsError(f"damaged gzip file ({exc})") from None
    if len(data) > MAX_BYTES:
        raise MetricsError(f"larger than {MAX_BYTES >> 20} MiB: not a /metrics page")
    if b"\x00" in data[:65536]:
        raise MetricsError("binary data, not Prometheus text")
    return data.decode("utf-8", "replace")


def parse_window(text: str) -> float:
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min)?\s*", text)
    if not m:
        raise ValueError(text)
    v = float(m.group(1))
    unit = m.group(2) or "s"
    return v / 1000 if unit == "ms" else v * 60 if unit in ("m", "min") else v
