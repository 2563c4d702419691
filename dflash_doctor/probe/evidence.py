"""A probe result (schema dflash-doctor/probe@1) as Kind.PROBE evidence, from memory or a saved JSON file. No torch."""

from __future__ import annotations

import json

from ..evidence import Evidence, EvidenceSet, Kind, Source

PROBE_SCHEMA = "dflash-doctor/probe@1"


def summary_line(result: dict) -> str:
    acc = result.get("acceptance") or {}
    tau = acc.get("mean_acceptance_length")
    ll = result.get("lossless")
    parts = [f"probe τ {tau:.2f}" if isinstance(tau, (int, float)) else "probe τ unknown",
             f"block {result.get('block_size')}", f"{acc.get('steps', 0)} steps",
             "lossless" if ll else ("NOT lossless" if ll is False else "sampled")]
    names = [a.get("name") for a in result.get("ablations") or []]
    if names:
        parts.append("ablations " + ", ".join(str(n) for n in names if n and not str(n).startswith("context:")))
    return ", ".join(parts)


def add_probe_evidence(ev: EvidenceSet, result: dict, source: Source) -> Evidence:
    from ..payloads import ProbeResult

    return ev.add(Kind.PROBE, summary_line(result), source, ProbeResult(result))


def gather_probe_result(ev: EvidenceSet, path: str) -> None:
    """`--probe-result FILE`: a JSON written by `dflash-doctor probe --format json -o FILE`."""
    try:
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh)
    except FileNotFoundError:
        ev.could_not_collect(f"probe result {path}", "file not found", Kind.PROBE)
        return
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        ev.could_not_collect(f"probe result {path}", f"could not read: {exc}", Kind.PROBE)
        return
    if not isinstance(result, dict) or result.get("schema") != PROBE_SCHEMA \
            or not isinstance(result.get("acceptance"), dict):
        ev.could_not_collect(f"probe result {path}", f"not a {PROBE_SCHEMA} document", Kind.PROBE)
        return
    add_probe_evidence(ev, result, Source("file", path, result.get("host")))
