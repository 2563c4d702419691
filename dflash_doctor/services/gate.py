"""The CI gate: measured acceptance against thresholds -> pass / fail / no data.

One ThresholdResult per threshold the user asked for; the gate passes only when every threshold
passed. Each threshold is judged on the measurement's 95 % interval from its counts (dflash_doctor.stats:
τ from its drafts and per-position rates, a position's rate as a proportion of drafts): it FAILS when the
whole interval lies below the threshold, PASSES when the whole interval is at or above it, and gives
"no data" (exit 3) only when the interval straddles it — a gate never passes on silence, and never fails a
build on a sample the counts cannot decide. 181 drafts at τ 1.18 fail a threshold of 3; 65 drafts at
τ 3.1 decide nothing about a threshold of 3. `--min-drafts N` stays as an explicit floor (default none).
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from typing import Any

from .. import stats
from ..errors import ExitCode, UsageError
from ..evidence import Report
from ..interpret.readings import REQUEST_AVERAGE_SPREAD, design_effect
from ..safeio import load_json, read_regular

GATE_SCHEMA = "dflash-doctor/gate@1"
MAX_TAU = 1000.0  # τ ≤ k + 1, and no drafter drafts a thousand tokens a step


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
    def parse(cls, text: str) -> PositionRate:
        m = re.fullmatch(r"\s*(\d+)\s*:\s*([0-9]*\.?[0-9]+)\s*", text)
        if not m:
            raise UsageError(
                f"--min-position-rate {text!r} is not POS:RATE", hint="for example --min-position-rate 1:0.6"
            )
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
    min_drafts: int = 0

    def any(self) -> bool:
        return (
            self.min_acceptance_length is not None
            or bool(self.min_position_rates)
            or self.max_regression_pct is not None
        )


@dataclass(frozen=True)
class ThresholdResult:
    name: str  # testcase name, e.g. "min-acceptance-length" or "min-position-rate[1]"
    outcome: Outcome
    message: str
    measured: float | None
    threshold: float | None
    properties: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "outcome": self.outcome.value,
            "message": self.message,
            "measured": _round(self.measured),
            "threshold": self.threshold,
            "properties": {k: _round(v) for k, v in self.properties.items()},
        }


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
            diag = {
                "verdict": self.report.verdict.value,
                "causes": [
                    {"id": c.id, "confidence": round(c.confidence, 3), "title": c.title} for c in self.report.causes[:3]
                ],
            }
        return {
            "schema": GATE_SCHEMA,
            "outcome": self.outcome.value,
            "exit_code": int(self.exit_code),
            "source": self.source,
            "measured": {k: _round(v) for k, v in self.measured.items()},
            "thresholds": [r.to_dict() for r in self.results],
            "diagnosis": diag,
            "notes": list(self.notes),
        }


def _round(v: Any) -> Any:
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else round(v, 4)
    if isinstance(v, (list, tuple)):
        return [_round(x) for x in v]
    return v


def read_json_flag(path: str, flag: str, hint: str | None = None):
    """The JSON document a flag names (`--baseline`, `--probe`); unreadable or non-JSON is a usage error."""

    try:
        raw = read_regular(path, 64 << 20)  # (a FIFO given as --baseline hung the gate)
    except OSError as exc:
        raise UsageError(f"cannot read {flag} {path}: {exc.strerror or exc}") from None
    try:
        return load_json(raw)
    except ValueError as exc:  # not JSON / not UTF-8 / 5000-digit numbers / absurd nesting / NaN
        raise UsageError(f"{flag} {path} is not JSON: {str(exc)[:120]}", hint=hint) from None


def load_baseline_tau(path: str) -> tuple[float, str]:
    """τ from a saved dflash-doctor report (diagnose/probe JSON) or a saved gate JSON."""
    from ..schema import SavedTau, convert  # msgspec: not at start-up

    data = read_json_flag(
        path, "--baseline", hint="save one with `dflash-doctor diagnose … --format json -o REPORT.json`"
    )
    doc = convert(data, SavedTau, f"--baseline {path}", UsageError)
    block = doc.acceptance if doc.schema == "dflash-doctor/report@1" else doc.measured
    if block is None or block.mean_acceptance_length is None:
        raise UsageError(
            f"--baseline {path} holds no mean acceptance length",
            hint="the saved report must come from a run that measured acceptance",
        )
    return float(block.mean_acceptance_length), f"{path} (generated {(doc.generated_at or 'at an unknown time')[:60]})"


def finite_option(name: str, value: float | None, lo: float | None = None, hi: float | None = None) -> float | None:
    """A numeric option the user typed: nan, inf or out of range is a usage error, never a silent fail."""
    if value is None:
        return None
    if not math.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = (
            f" between {lo:g} and {hi:g}"
            if lo is not None and hi is not None
            else f" ≥ {lo:g}"
            if lo is not None
            else ""
        )
        raise UsageError(f"{name} {value!r}: expected a finite number{bounds}")
    return value


LEVEL = 0.95  # the confidence level of every interval a threshold is judged on


def _judge(iv, threshold: float) -> Outcome:
    if not (math.isfinite(iv.estimate) and math.isfinite(iv.low)) or iv.n != iv.n:
        return Outcome.NO_DATA  # a measurement that is not a finite number decides nothing
    if iv.high < threshold:
        return Outcome.FAIL
    if iv.low >= threshold:
        return Outcome.PASS
    return Outcome.NO_DATA


def _span(iv, fmt: str = ".2f") -> str:
    hi = "∞" if math.isinf(iv.high) else format(iv.high, fmt)
    return f"[{format(iv.low, fmt)}–{hi}, {LEVEL:.0%}]"


def _integrity(rejected: int, rejected_examples: tuple, conflicts: tuple[str, ...]) -> list[ThresholdResult]:
    """The results that fail a gate closed whatever the figures: rejected lines, facts the sources disagree on."""
    results: list[ThresholdResult] = []
    if rejected:
        ex = "; ".join(str(e) for e in rejected_examples[:2])
        results.append(
            ThresholdResult(
                "log-integrity",
                Outcome.FAIL,
                f"{rejected} metrics line(s) rejected as forged or damaged (impossible counts): a log that holds them "
                "cannot pass a gate" + (f" — {ex}" if ex else ""),
                float(rejected),
                0.0,
                {"rejected": rejected},
            )
        )
    if conflicts:
        results.append(
            ThresholdResult(
                "facts-agree",
                Outcome.FAIL,
                f"the sources disagree on {len(conflicts)} fact(s), so one of them is not the engine's: "
                + "; ".join(conflicts[:3]),
                float(len(conflicts)),
                0.0,
                {"conflicts": len(conflicts)},
            )
        )
    return results


def evaluate(  # noqa: C901 - one row per kind of threshold
    acceptance,
    thresholds: Thresholds,
    source: str,
    report: Report | None = None,
    no_data_reason: str | None = None,
    rejected: int = 0,
    rejected_examples: tuple = (),
    conflicts: tuple[str, ...] = (),
) -> GateResult:
    """Judge the acceptance summary (parse.AcceptanceSummary or None) against the thresholds. `rejected`:
    metrics lines the scan rejected as forged or damaged (impossible counts); `conflicts`: facts two sources
    state differently (models/launch_view.facts_conflicts). The gate fails closed on either, whatever the
    figures say (SECURITY.md)."""
    results = _integrity(rejected, rejected_examples, conflicts)
    measured: dict[str, Any] = {}
    notes: list[str] = []
    drafts = acceptance.drafts if acceptance is not None else 0.0
    if acceptance is not None:
        measured = {
            "mean_acceptance_length": acceptance.mean_acceptance_length,
            "drafts": acceptance.drafts,
            "k": acceptance.k,
            "per_position": list(acceptance.per_position),
            "intervals": acceptance.intervals,
        }
    enough = acceptance is not None and (drafts >= thresholds.min_drafts or acceptance.per_request)
    if acceptance is None:
        why = no_data_reason or "no spec-decode acceptance was measured"
    elif not enough:
        why = f"only {drafts:.0f} drafts, fewer than --min-drafts {thresholds.min_drafts}: too few to judge"
    else:
        why = ""
    common = {"drafts": drafts, "min_drafts": thresholds.min_drafts}

    def nodata(name: str, threshold: float | None, extra: dict | None = None) -> ThresholdResult:
        return ThresholdResult(name, Outcome.NO_DATA, f"no data: {why}", None, threshold, {**common, **(extra or {})})

    if thresholds.min_drafts > 0 or acceptance is None:  # an explicit floor (or nothing measured) is its own row
        results.append(
            ThresholdResult(
                "min-drafts",
                Outcome.PASS if enough else Outcome.NO_DATA,
                f"{drafts:.0f} drafts ≥ {thresholds.min_drafts}" if enough else f"no data: {why}",
                drafts if acceptance is not None else None,
                float(thresholds.min_drafts),
                dict(common),
            )
        )
    tau = acceptance.mean_acceptance_length if acceptance is not None else None
    tau_iv: stats.Interval | None = None
    deff = None
    if acceptance is not None:
        assert tau is not None  # acceptance's mean, read just above
        deff = design_effect(acceptance, acceptance.k)
        if acceptance.per_request:
            spread = REQUEST_AVERAGE_SPREAD * tau
            tau_iv = stats.Interval(tau, max(1.0, tau - 1.96 * spread), tau + 1.96 * spread, 0.0)
        else:
            tau_iv = stats.tau_interval(
                acceptance.drafts,
                (tau - 1.0) * acceptance.drafts,
                acceptance.per_position,
                acceptance.k,
                design_effect=deff,
            )
        measured["mean_acceptance_length_interval"] = [tau_iv.low, tau_iv.high]
        measured["confidence_level"] = LEVEL

    def tau_result(name: str, x: float, extra: dict) -> ThresholdResult:
        assert acceptance is not None and tau is not None and tau_iv is not None  # called only with enough counts
        out = _judge(tau_iv, x)
        rel = {Outcome.PASS: "≥", Outcome.FAIL: "<", Outcome.NO_DATA: "straddles"}[out]
        msg = f"mean acceptance length {tau:.2f} {_span(tau_iv)} {rel} {x:.3g}" + (
            "" if out != Outcome.NO_DATA else ": the counts cannot decide it"
        )
        return ThresholdResult(
            name,
            out,
            msg,
            tau,
            x,
            {
                **common,
                "mean_acceptance_length": tau,
                "interval_low": tau_iv.low,
                "interval_high": tau_iv.high,
                "k": acceptance.k,
                **extra,
            },
        )

    if thresholds.min_acceptance_length is not None:
        x = thresholds.min_acceptance_length
        if not enough:
            results.append(nodata("min-acceptance-length", x))
        else:
            results.append(tau_result("min-acceptance-length", x, {}))
    for pr in thresholds.min_position_rates:
        name = f"min-position-rate[{pr.position}]"
        if not enough:
            results.append(nodata(name, pr.rate, {"position": pr.position}))
            continue
        pp = acceptance.per_position
        if pr.position > len(pp):
            # A position beyond k is never drafted: its rate is 0, which meets only a 0 threshold.
            ok = pr.rate <= 0.0
            results.append(
                ThresholdResult(
                    name,
                    Outcome.PASS if ok else Outcome.FAIL,
                    f"position {pr.position} was never drafted (k = {acceptance.k}): "
                    f"its rate is 0 {'≥' if ok else '<'} {pr.rate:g}",
                    0.0,
                    pr.rate,
                    {**common, "position": pr.position, "k": acceptance.k},
                )
            )
            continue
        rate = pp[pr.position - 1]
        iv = stats.wilson(rate * drafts, drafts, design_effect=deff or stats.DESIGN_EFFECT)
        if acceptance.per_request:
            iv = stats.Interval(rate, 0.0, 1.0, 0.0)  # no counts behind a per-request figure
        out = _judge(iv, pr.rate)
        rel = {Outcome.PASS: "≥", Outcome.FAIL: "<", Outcome.NO_DATA: "straddles"}[out]
        results.append(
            ThresholdResult(
                name,
                out,
                f"position {pr.position} acceptance rate {rate:.3f} "
                f"{_span(iv, '.3f')} {rel} {pr.rate:g}"
                + ("" if out != Outcome.NO_DATA else ": the counts cannot decide it"),
                rate,
                pr.rate,
                {**common, "position": pr.position, "rate": rate, "interval_low": iv.low, "interval_high": iv.high},
            )
        )
    if thresholds.max_regression_pct is not None:
        pct = thresholds.max_regression_pct
        base = thresholds.baseline_tau
        if base is None:
            raise UsageError("--max-regression needs --baseline REPORT.json")
        if not enough:
            results.append(nodata("max-regression", pct, {"baseline_mean_acceptance_length": base}))
        else:
            assert tau is not None and tau_iv is not None  # enough counts: acceptance was read
            reg = 100.0 * (base - tau) / base
            floor = base * (1.0 - pct / 100.0)
            out = _judge(tau_iv, floor)
            word = {Outcome.PASS: "within", Outcome.FAIL: "beyond", Outcome.NO_DATA: "possibly beyond"}[out]
            results.append(
                ThresholdResult(
                    "max-regression",
                    out,
                    f"mean acceptance length {tau:.2f} {_span(tau_iv)} vs baseline {base:.2f}: "
                    + (f"{reg:.1f} % lower" if reg > 0 else f"{-reg:.1f} % higher")
                    + f" ({word} the allowed {pct:g} %, i.e. τ ≥ {floor:.2f})"
                    + ("" if out != Outcome.NO_DATA else ": the counts cannot decide it"),
                    reg,
                    pct,
                    {
                        **common,
                        "mean_acceptance_length": tau,
                        "baseline_mean_acceptance_length": base,
                        "regression_pct": reg,
                        "baseline": thresholds.baseline_label or "",
                        "interval_low": tau_iv.low,
                        "interval_high": tau_iv.high,
                    },
                )
            )
    if any(r.outcome == Outcome.FAIL for r in results):
        outcome = Outcome.FAIL
    elif any(r.outcome == Outcome.NO_DATA for r in results):
        outcome = Outcome.NO_DATA
    else:
        outcome = Outcome.PASS
    if acceptance is not None and acceptance.notes:
        notes.extend(acceptance.notes)
    return GateResult(outcome, tuple(results), source, measured, report, tuple(notes))
