"""Prometheus alerting rules and a Grafana dashboard for spec-decode acceptance, as documents
(dicts); render/monitor.py turns them into YAML / JSON.

Every expression aggregates by the `--by` labels, so each alert fires per engine, and reads vLLM V1's
counters or SGLang's (0.5.13+), whichever the engine exposes (`or`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .metrics import (
    SGL_GENERATION,
    SGL_REQUESTS,
    SGL_VERIFY_CALLS,
    VLLM_ACCEPTED,
    VLLM_DRAFTS,
    VLLM_GENERATION,
    VLLM_PER_POS,
)
from .queries import selector_matchers


@dataclass(frozen=True)
class RuleSettings:
    min_acceptance_length: float = 2.0
    first_position_min: float = 0.3
    drop: float = 0.2  # share of the accepted tokens per draft lost against the engine's own past
    offset: str = "1d"
    window: str = "10m"
    for_: str = "10m"
    min_drafts: int = 200
    by: tuple[str, ...] = ("instance",)
    selector: str | None = None
    group: str = "dflash-doctor"


def _sel(metric: str, matchers: str, extra: str = "") -> str:
    inner = ", ".join(x for x in (matchers, extra) if x)
    return f"{metric}{{{inner}}}" if inner else metric


class Exprs:
    """PromQL pieces per engine (grouped by `by`)."""

    def __init__(self, s: RuleSettings):
        self.s = s
        self.m = selector_matchers(s.selector)
        self.by = ", ".join(s.by)

    def inc(self, metric: str, window: str, extra: str = "", offset: str = "") -> str:
        off = f" offset {offset}" if offset else ""
        return f"sum by ({self.by}) (increase({_sel(metric, self.m, extra)}[{window}]{off}))"

    def drafts(self, window: str, offset: str = "") -> str:
        return (
            f"({self.inc(VLLM_DRAFTS, window, offset=offset)} or {self.inc(SGL_VERIFY_CALLS, window, offset=offset)})"
        )

    def accepted_per_draft(self, window: str, offset: str = "") -> str:
        """τ − 1: vLLM accepted/drafts, or SGLang (generated − requests − verify calls) / verify calls."""
        vllm = f"{self.inc(VLLM_ACCEPTED, window, offset=offset)} / {self.inc(VLLM_DRAFTS, window, offset=offset)}"
        sgl = (
            f"({self.inc(SGL_GENERATION, window, offset=offset)} - {self.inc(SGL_REQUESTS, window, offset=offset)}) / "
            f"{self.inc(SGL_VERIFY_CALLS, window, offset=offset)} - 1"
        )
        return f"(({vllm}) or ({sgl}))"

    def tau(self, window: str, offset: str = "") -> str:
        return f"(1 + {self.accepted_per_draft(window, offset)})"

    def first_position(self, window: str) -> str:
        first = self.inc(VLLM_PER_POS, window, extra='position="0"')
        return f"({first} / {self.inc(VLLM_DRAFTS, window)})"

    def generation(self, window: str) -> str:
        return f"({self.inc(VLLM_GENERATION, window)} or {self.inc(SGL_GENERATION, window)})"

    def enough(self, window: str, offset: str = "") -> str:
        return f"{self.drafts(window, offset)} > {self.s.min_drafts}"


def alert_rules(s: RuleSettings) -> dict:
    x = Exprs(s)
    w = s.window
    who = " ".join("{{ $labels." + b + " }}" for b in s.by)  # Prometheus templates, not Python's
    common = {"for": s.for_}
    rules = [
        {
            "alert": "SpecDecodeLowAcceptanceLength",
            "expr": f"{x.tau(w)} < {s.min_acceptance_length:g}\nand {x.enough(w)}",
            **common,
            "labels": {"severity": "warning", "threshold": f"{s.min_acceptance_length:g}"},
            "annotations": {
                "summary": f'Mean acceptance length {{{{ $value | printf "%.2f" }}}} on {who} is below '
                f"{s.min_acceptance_length:g}",
                "description": f"τ = 1 + accepted/drafts over {w}. Run `dflash-doctor diagnose --prometheus URL "
                f"--selector '{{...}}'` for the ranked causes.",
            },
        },
        {
            "alert": "SpecDecodeFirstPositionCollapse",
            "expr": f"{x.first_position(w)} < {s.first_position_min:g}\nand {x.enough(w)}",
            **common,
            "labels": {"severity": "warning", "threshold": f"{s.first_position_min:g}"},
            "annotations": {
                "summary": f'Position-1 acceptance {{{{ $value | printf "%.3f" }}}} on {who} is below '
                f"{s.first_position_min:g}",
                "description": "The first draft token is rarely accepted: a drafter fed the wrong hidden states, a "
                "wrong pairing or a broken drafter path (see `dflash-doctor diagnose`).",
            },
        },
        {
            "alert": "SpecDecodeDraftsStopped",
            "expr": f"{x.drafts(w)} == 0\nand {x.generation(w)} > 0",
            **common,
            "labels": {"severity": "critical"},
            "annotations": {
                "summary": f"No drafts on {who} for {w} while it keeps generating tokens",
                "description": "Speculative decoding stopped (or fell back to plain decoding) while requests are "
                "served: check the engine log and its speculative config.",
            },
        },
        {
            "alert": "SpecDecodeAcceptanceDrop",
            "expr": f"{x.accepted_per_draft(w)} < {1 - s.drop:g} * {x.accepted_per_draft(w, s.offset)}\n"
            f"and {x.enough(w)}\nand {x.enough(w, s.offset)}",
            **common,
            "labels": {"severity": "warning", "offset": s.offset},
            "annotations": {
                "summary": f"Accepted tokens per draft on {who} fell by more than {s.drop:.0%} against {s.offset} ago",
                "description": "A drop against the engine's own past: look for a deploy or restart "
                "(`dflash-doctor diagnose --prometheus` shows the change point).",
            },
        },
    ]
    return {"groups": [{"name": s.group, "rules": rules}]}


def grafana_dashboard(s: RuleSettings, title: str = "Speculative decoding acceptance") -> dict:
    x = Exprs(s)
    rate_w = "$__rate_interval"
    legend = " ".join("{{" + b + "}}" for b in s.by)  # Grafana legend templates
    ds = {"type": "prometheus", "uid": "${datasource}"}

    def panel(
        pid: int,
        ptitle: str,
        expr: str,
        leg: str,
        y: int,
        x0: int,
        unit: str = "none",
        threshold: float | None = None,
        w: int = 12,
        desc: str = "",
    ) -> dict:
        steps: list[dict[str, str | float | None]] = [{"color": "green", "value": None}]
        style = {"mode": "off"}
        if threshold is not None:
            steps = [{"color": "red", "value": None}, {"color": "green", "value": threshold}]
            style = {"mode": "line"}
        return {
            "id": pid,
            "type": "timeseries",
            "title": ptitle,
            "description": desc,
            "datasource": ds,
            "gridPos": {"h": 9, "w": w, "x": x0, "y": y},
            "targets": [{"refId": "A", "datasource": ds, "expr": expr, "legendFormat": leg, "range": True}],
            "fieldConfig": {
                "defaults": {
                    "unit": unit,
                    "custom": {"thresholdsStyle": style, "lineWidth": 1},
                    "thresholds": {"mode": "absolute", "steps": steps},
                },
                "overrides": [],
            },
            "options": {
                "legend": {"displayMode": "table", "placement": "bottom", "calcs": ["mean", "lastNotNull"]},
                "tooltip": {"mode": "multi", "sort": "desc"},
            },
        }

    per_pos = (
        f"sum by ({x.by}, position) (increase({_sel(VLLM_PER_POS, x.m)}[{rate_w}]))\n"
        f"/ on ({x.by}) group_left {x.inc(VLLM_DRAFTS, rate_w)}"
    )
    panels = [
        panel(
            1,
            "Mean acceptance length τ per engine",
            x.tau(rate_w),
            legend,
            0,
            0,
            threshold=s.min_acceptance_length,
            desc=f"1 + accepted / drafts. The line is the alert threshold ({s.min_acceptance_length:g}).",
        ),
        panel(
            2,
            "Position-1 acceptance per engine",
            x.first_position(rate_w),
            legend,
            0,
            12,
            unit="percentunit",
            threshold=s.first_position_min,
            desc="Share of drafts whose first token was accepted (vLLM).",
        ),
        panel(
            3,
            "Per-position acceptance (unconditional)",
            per_pos,
            f"{legend} pos {{{{position}}}}",
            9,
            0,
            unit="percentunit",
            desc="P(first i+1 draft tokens accepted), per engine and position (vLLM).",
        ),
        panel(
            4,
            "Draft rate (drafts/s)",
            f"sum by ({x.by}) (rate({_sel(VLLM_DRAFTS, x.m)}[{rate_w}]))\nor sum by ({x.by}) "
            f"(rate({_sel(SGL_VERIFY_CALLS, x.m)}[{rate_w}]))",
            legend,
            9,
            12,
            unit="ops",
            desc="Drafts (vLLM) or verify calls (SGLang) per second; 0 while tokens flow means spec decoding stopped.",
        ),
        panel(
            5,
            f"τ now vs {s.offset} ago",
            f"{x.tau(rate_w)}\n/ {x.tau(rate_w, s.offset)}",
            legend,
            18,
            0,
            unit="percentunit",
            threshold=1 - s.drop,
            w=24,
            desc=(
                f"Ratio of τ to the same engine's τ {s.offset} earlier; the line is the drop alert ({1 - s.drop:.0%})."
            ),
        ),
    ]
    return {
        "__inputs": [
            {
                "name": "DS_PROMETHEUS",
                "label": "Prometheus",
                "type": "datasource",
                "pluginId": "prometheus",
                "pluginName": "Prometheus",
            }
        ],
        "title": title,
        "uid": "dflash-doctor-acceptance",
        "tags": ["speculative-decoding", "dflash-doctor"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "refresh": "1m",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Prometheus",
                    "type": "datasource",
                    "query": "prometheus",
                    "current": {},
                    "hide": 0,
                }
            ]
        },
        "annotations": {"list": []},
        "panels": panels,
    }


@dataclass(frozen=True)
class AlertRules:
    """`monitor rules`: the alerting-rules document, rendered as Prometheus YAML."""

    doc: dict


@dataclass(frozen=True)
class Dashboard:
    """`monitor grafana`: the dashboard document, rendered as Grafana JSON."""

    doc: dict
