"""Load a ranking scenario (fixtures/scenarios/NAME/scenario.toml) and diagnose it in-process,
exactly as `dflash-doctor diagnose` would with the same flags."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from dflash_doctor.collect.inputs import FileInputs, gather_files
from dflash_doctor.collect.workload import gather_workload
from dflash_doctor.evidence import PAYLOAD_TYPES, EvidenceSet, Kind, Report
from dflash_doctor.schema import ScenarioFile, convert
from dflash_doctor.services.doctor import build_report

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


@dataclass
class Scenario:
    name: str
    dir: Path
    args: dict
    expect: dict

    def path(self, p: str) -> str:
        return str((self.dir / p).resolve())

    def cli_args(self) -> list[str]:
        a = self.args
        out: list[str] = []
        for log in a.get("log", []):
            out += ["--log", self.path(log)]
        for key in ("drafter", "target"):
            if key in a:
                out += [f"--{key}", self.path(a[key])]
        for key in ("engine", "launch", "dataset"):
            if key in a:
                out += [f"--{key}", a[key]]
        if "temperature" in a:
            out += ["--temperature", str(a["temperature"])]
        if "thinking" in a:
            out += ["--thinking" if a["thinking"] else "--no-thinking"]
        return out


def names() -> list[str]:
    return sorted(p.parent.name for p in SCENARIOS.glob("*/scenario.toml"))


def load(name: str) -> Scenario:
    d = SCENARIOS / name
    data = tomllib.loads((d / "scenario.toml").read_text(encoding="utf-8"))
    convert(data, ScenarioFile, f"scenarios/{name}/scenario.toml")  # a typo in a key fails here, not silently
    return Scenario(name, d, data.get("args", {}), data.get("expect", {}))


def evidence_for(s: Scenario) -> EvidenceSet:
    a = s.args
    ev = gather_files(
        FileInputs(
            logs=[s.path(p) for p in a.get("log", [])],
            drafter=s.path(a["drafter"]) if "drafter" in a else None,
            target=s.path(a["target"]) if "target" in a else None,
            engine=a.get("engine"),
            launch=a.get("launch"),
        )
    )
    gather_workload(ev, temperature=a.get("temperature"), thinking=a.get("thinking"), dataset=a.get("dataset"))
    return ev


def diagnose(s: Scenario, knowledge=None) -> tuple[Report, EvidenceSet]:
    ev = evidence_for(s)
    report, _ = build_report(ev, knowledge=knowledge)
    return report, ev


def uncollected(s: Scenario, ev: EvidenceSet) -> list[str]:
    """Evidence kinds the scenario's expectation rests on that this build could not collect."""
    return [k for k in s.expect.get("needs", []) if not ev.has(PAYLOAD_TYPES[Kind(k)])]
