"""A probe result (schema dflash-doctor/probe@1) as ProbeResult evidence, from memory or a saved JSON file. No torch."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError
from ..evidence import Evidence, EvidenceSet, Source
from ..evidence.payloads import ProbeResult
from ..model_ref import model_identity
from ..names import names_of
from ..safeio import load_json, read_regular

PROBE_SCHEMA = "dflash-doctor/probe@1"


def summary_line(result: dict) -> str:
    acc = result.get("acceptance") or {}
    tau = acc.get("mean_acceptance_length")
    ll = result.get("lossless")
    parts = [
        f"probe τ {tau:.2f}" if isinstance(tau, (int, float)) else "probe τ unknown",
        f"block {result.get('block_size')}",
        f"{acc.get('steps', 0)} steps",
        "lossless" if ll else ("NOT lossless" if ll is False else "sampled"),
    ]
    names = [a.get("name") for a in result.get("ablations") or []]
    if names:
        parts.append("ablations " + ", ".join(str(n) for n in names if n and not str(n).startswith("context:")))
    return ", ".join(parts)


def add_probe_evidence(ev: EvidenceSet, result: dict, source: Source) -> Evidence:
    return ev.add(summary_line(result), source, ProbeResult(result))


@dataclass(frozen=True)
class SavedProbe:
    """`--probe-result FILE`, read and validated once (a mistake in it is a usage error, before collecting)."""

    path: str
    result: dict

    @property
    def pair(self) -> tuple[tuple[str | None, str | None], tuple[str | None, str | None]]:
        """((drafter, revision), (target, revision)) the probe ran."""

        pair = self.result.get("pair")
        p = pair if isinstance(pair, dict) else {}
        d, drev = model_identity(p.get("drafter") or self.result.get("drafter"))
        t, trev = model_identity(p.get("target") or self.result.get("target"))
        return (d, p.get("drafter_revision") or drev), (t, p.get("target_revision") or trev)


def read_probe_result(path: str) -> SavedProbe:
    hint = "save one with `dflash-doctor probe --target T --drafter D --format json -o probe.json`"

    try:
        result = load_json(read_regular(path, 64 << 20))
    except FileNotFoundError:
        raise UsageError(f"--probe-result {path}: no such file", hint=hint) from None
    except OSError as exc:
        raise UsageError(f"--probe-result {path}: cannot read it ({exc.strerror or exc})", hint=hint) from None
    except ValueError as exc:  # not JSON, NaN, absurd nesting or size
        raise UsageError(f"--probe-result {path}: not JSON ({str(exc)[:120]})", hint=hint) from None
    from ..schema import SavedProbeDoc, SchemaError, convert  # msgspec: not at start-up

    try:
        convert(result, SavedProbeDoc, "")
    except SchemaError as exc:
        raise UsageError(f"--probe-result {path}: not a {PROBE_SCHEMA} document ({str(exc)[2:]})", hint=hint) from None
    return SavedProbe(path, result)


def _same(a: str | None, b: str | None) -> bool | None:
    """Do two model references name the same model? None when either is unknown. A repo id and a local
    directory match on the last path component (`org/Name` and `/models/Name`)."""
    if not a or not b:
        return None
    tail = lambda x: re.split(r"[\\/]", x.rstrip("/\\"))[-1].lower()  # noqa: E731
    return a.lower() == b.lower() or tail(a) == tail(b)


def _pair_words(drafter: str | None, drev: str | None, target: str | None, trev: str | None) -> str:
    def one(name, rev):
        return (name or "an unnamed model") + (f"@{rev[:10]}" if rev else "")

    return f"{one(drafter, drev)} on {one(target, trev)}"


def probe_pair_mismatch(evidence: EvidenceSet, saved: SavedProbe, what: str | None = None) -> str | None:
    """Why the saved probe is of another pair than the deployment serves, or None when it matches (or the
    deployment names no pair to compare with)."""

    names = names_of(evidence)
    (pd, pdrev), (pt, ptrev) = saved.pair
    verdicts = [_same(pd, names.drafter), _same(pt, names.target)]
    revs = [(pdrev, names.drafter_revision), (ptrev, names.target_revision)]
    if False in verdicts or any(a and b and not (a.startswith(b) or b.startswith(a)) for a, b in revs):
        served = _pair_words(names.drafter, names.drafter_revision, names.target, names.target_revision)
        return (
            f"{what or f'the probe result {saved.path}'} is for {_pair_words(pd, pdrev, pt, ptrev)}, "
            f"but the deployment serves {served}"
        )
    return None


def attach_probe(evidence: EvidenceSet, saved: SavedProbe, force: bool = False) -> None:
    """Add a saved probe as PROBE evidence — only for the pair the deployment serves, unless forced."""

    why = probe_pair_mismatch(evidence, saved)
    if why and not force:
        raise UsageError(why, hint="run the probe on the served pair, or pass --force-probe-pair to use it anyway")
    if why:
        evidence.notes.append(f"{why}; used anyway (--force-probe-pair)")
    add_probe_evidence(evidence, saved.result, Source("file", saved.path, saved.result.get("host")))
