"""The CI gate: measured acceptance against thresholds -> pass / fail / no data.

One ThresholdResult per threshold the user asked for; the gate passes only when every threshold
passed. "No data" (nothing measured, or fewer drafts than --min-drafts) is its own outcome with its
own exit code (3): a gate never passes on silence, and never fails a build on a sample too small to
judge.
"""

from __future__ import annotations

import enum
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import ExitCode, UsageError
from .evidence import Report

GATE_SCHEMA = "dflash-doctor/gate@1"


class Outcome(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    NO_DATA = "no-data"


EXIT = {Outcome.PASS: ExitCode.OK, Outcome.FAIL: ExitCode.PROBLEMS, Outcome.NO_DATA: ExitCode.NOT_CHECKED}


@dataclass(frozen=True)
class PositionRate:
    position: int  # 1-based draft position
    rate: float

    @classmethod
    def parse(cls, text: str) -> "PositionRate":
        m = re.fullmatch(r"\s*(\d+)\s*:\s*([0-9]*\.?[0-9]+)\s*", text)
        if not m:
            raise UsageError(f"--min-position-rate {text!r} is not POS:RATE", hint="for example --min-position-rate 1:0.6")
        pos, rate = int(m.group(1)), float(m.group(2))
        if pos < 1 or not 0.0 <= rate <= 1.0:
            raise UsageError(f"--min-position-rate {text!r}: POS starts at 1 and RATE is within 0..1")
        return cls(pos, rate)


@dataclass(frozen=True)
class Thresholds:
    min_acceptance_length: float | None = None
    min_position_rates: tuple[PositionRate, ...] = ()
    max_regression_pct: float | None = None
    baseline_tau: float | None = None
    baseline_label: str | None = None
    min_drafts: int = 200

    def any(self) -> bool:
        return self.min_acceptance_length is not None or bool(self.min_position_rates) or \
            self.max_regression_pct is not None


@dataclass(frozen=True)
class ThresholdResult:
    name: str  # testcase name, e.g. "min-acceptance-length" or "min-position-rate[1]"
    outcome: Outcome
    message: str
    measured: float | None
    threshold: float | None
    properties: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "outcome": self.outcome.value, "message": self.message,
                "measured": _round(self.measured), "threshold": self.threshold,
                "properties": {k: _round(v) for k, v in self.properties.items()}}


@dataclass(frozen=True)
class GateResult:
    outcome: Outcome
    results: tuple[ThresholdResult, ...]
    source: str
    measured: dict[str, Any]
    report: Report | None = None
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        return EXIT[self.outcome]

    def to_dict(self) -> dict[str, Any]:
        diag = None
        if self.report is not None:
            diag = {"verdict": self.report.verdict.value,
                    "causes": [{"id": c.id, "confidence": round(c.confidence, 3), "title": c.title}
                               for c in self.report.causes[:3]]}
        return {"schema": GATE_SCHEMA, "outcome": self.outcome.value, "exit_code": int(self.exit_code),
                "source": self.source, "measured": {k: _round(v) for k, v in self.measured.items()},
                "thresholds": [r.to_dict() for r in self.results], "diagnosis": diag, "notes": list(self.notes)}


def _round(v: Any) -> Any:
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else round(v, 4)
    if isinstance(v, (list, tuple)):
        return [_round(x) for x in v]
    return v


def read_json_flag(path: str, flag: str, hint: str | None = None):
    """The JSON document a flag names (`--baseline`, `--probe`); unreadable or non-JSON is a usage error."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise UsageError(f"cannot read {flag} {path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # not JSON / not UTF-8 / 5000-digit numbers / absurd nesting
        raise UsageError(f"{flag} {path} is not JSON: {str(exc)[:120]}", hint=hint) from None


def load_baseline_tau(path: str) -> tuple[float, str]:
    """τ from a saved dflash-doctor report (diagnose/probe JSON) or a saved gate JSON."""
    data = read_json_flag(path, "--baseline",
                          hint="save one with `dflash-doctor diagnose … --format json -o REPORT.json`")
    if not isinstance(data, dict):
        raise UsageError(f"--baseline {path} is not a dflash-doctor report")
    schema = data.get("schema")
    block = data.get("acceptance") if schema == "dflash-doctor/report@1" else \
        data.get("measured") if schema == GATE_SCHEMA else None
    if block is None and schema not in ("dflash-doctor/report@1", GATE_SCHEMA):
        raise UsageError(f"--baseline {path} has schema {schema!r}, not a dflash-doctor report or gate result")
    tau = block.get("mean_acceptance_length") if isinstance(block, dict) else None
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not tau >= 1.0:
        raise UsageError(f"--baseline {path} holds no mean acceptance length",
                         hint="the saved report must come from a run that measured acceptance")
    return float(tau), f"{path} (generated {data.get('generated_at', 'at an unknown time')})"


def evaluate(acceptance, thresholds: Thresholds, source: str, report: Report | None = None,
             no_data_reason: str | None = None, rejected: int = 0, rejected_examples: tuple = ()) -> GateResult:
    """Judge the acceptance summary (parse.AcceptanceSummary or None) against the thresholds. `rejected`:
    metrics lines the scan rejected as forged or damaged (impossible counts): the gate fails closed on them,
    whatever the figures say (SECURITY.md)."""
    results: list[ThresholdResult] = []
    if rejected:
        ex = "; ".join(str(e) for e in rejected_examples[:2])
        results.append(ThresholdResult(
            "log-integrity", Outcome.FAIL,
            f"{rejected} metrics line(s) rejected as forged or damaged (impossible counts): a log that holds them "
            "cannot pass a gate" + (f" — {ex}" if ex else ""), float(rejected), 0.0, {"rejected": rejected}))
    measured: dict[str, Any] = {}
    notes: list[str] = []
    drafts = acceptance.drafts if acceptance is not None else 0.0
    if acceptance is not None:
        measured = {"mean_acceptance_length": acceptance.mean_acceptance_length, "drafts": acceptance.drafts,
                    "k": acceptance.k, "per_position": list(acceptance.per_position),
                    "intervals": acceptance.intervals}
    enough = acceptance is not None and drafts >= thresholds.min_drafts
    if acceptance is None:
        why = no_data_reason or "no spec-decode acceptance was measured"
    elif not enough:
        why = f"only {drafts:.0f} drafts, fewer than --min-drafts {thresholds.min_drafts}: too few to judge"
    else:
        why = ""
    common = {"drafts": drafts, "min_drafts": thresholds.min_drafts}

    def nodata(name: str, threshold: float | None, extra: dict | None = None) -> ThresholdResult:
        return ThresholdResult(name, Outcome.NO_DATA, f"no data: {why}", None, threshold, {**common, **(extra or {})})

    results.append(ThresholdResult(
        "min-drafts", Outcome.PASS if enough else Outcome.NO_DATA,
        f"{drafts:.0f} drafts ≥ {thresholds.min_drafts}" if enough else f"no data: {why}",
        drafts if acceptance is not None else None, float(thresholds.min_drafts), dict(common)))
    tau = acceptance.mean_acceptance_length if acceptance is not None else None
    if thresholds.min_acceptance_length is not None:
        x = thresholds.min_acceptance_length
        if not enough:
            results.append(nodata("min-acceptance-length", x))
        else:
            ok = tau >= x
            results.append(ThresholdResult(
                "min-acceptance-length", Outcome.PASS if ok else Outcome.FAIL,
                f"mean acceptance length {tau:.2f} {'≥' if ok else '<'} {x:g}", tau, x,
                {**common, "mean_acceptance_length": tau, "k": acceptance.k}))
    for pr in thresholds.min_position_rates:
        name = f"min-position-rate[{pr.position}]"
        if not enough:
            results.append(nodata(name, pr.rate, {"position": pr.position}))
            continue
        pp = acceptance.per_position
        if pr.position > len(pp):
            # A position beyond k is never drafted: its rate is 0, which meets only a 0 threshold.
            ok = pr.rate <= 0.0
            results.append(ThresholdResult(name, Outcome.PASS if ok else Outcome.FAIL,
                                           f"position {pr.position} was never drafted (k = {acceptance.k}): "
                                           f"its rate is 0 {'≥' if ok else '<'} {pr.rate:g}", 0.0, pr.rate,
                                           {**common, "position": pr.position, "k": acceptance.k}))
            continue
        rate = pp[pr.position - 1]
        ok = rate >= pr.rate
        results.append(ThresholdResult(name, Outcome.PASS if ok else Outcome.FAIL,
                                       f"position {pr.position} acceptance rate {rate:.3f} {'≥' if ok else '<'} {pr.rate:g}",
                                       rate, pr.rate, {**common, "position": pr.position, "rate": rate}))
    if thresholds.max_regression_pct is not None:
        pct = thresholds.max_regression_pct
        base = thresholds.baseline_tau
        if base is None:
            raise UsageError("--max-regression needs --baseline REPORT.json")
        if not enough:
            results.append(nodata("max-regression", pct, {"baseline_mean_acceptance_length": base}))
        else:
            reg = 100.0 * (base - tau) / base
            ok = reg <= pct
            results.append(ThresholdResult(
                "max-regression", Outcome.PASS if ok else Outcome.FAIL,
                f"mean acceptance length {tau:.2f} vs baseline {base:.2f}: "
                + (f"{reg:.1f} % lower" if reg > 0 else f"{-reg:.1f} % higher")
                + f" ({'within' if ok else 'beyond'} the allowed {pct:g} %)", reg, pct,
                {**common, "mean_acceptance_length": tau, "baseline_mean_acceptance_length": base,
                 "regression_pct": reg, "baseline": thresholds.baseline_label or ""}))
    if any(r.outcome == Outcome.FAIL for r in results):
        outcome = Outcome.FAIL
    elif any(r.outcome == Outcome.NO_DATA for r in results):
        outcome = Outcome.NO_DATA
    else:
        outcome = Outcome.PASS
    if acceptance is not None and acceptance.notes:
        notes.extend(acceptance.notes)
    return GateResult(outcome, tuple(results), source, measured, report, tuple(notes))
