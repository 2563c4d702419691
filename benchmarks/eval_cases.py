"""Evaluate the diagnosis on a directory of real cases (and the bundled scenarios): τ accuracy, top-1 / top-2 on
labelled cases, decisive verdicts, overclaims on unlabelled ones, the Brier score of the cause confidences and a
reliability table (are causes reported at ~0.7 right ~70 % of the time?).

    python benchmarks/eval_cases.py [CASES_DIR] [--scenarios [DIR]] [--dd PATH] [-v] [--json]

CASES_DIR has one folder per case (engine.log, case.json, optional launch.txt / drafter-config.json): the layout
of shared/cases/README.md. Each case is diagnosed exactly as a user would run it — `dflash-doctor diagnose --log
engine.log [--drafter drafter-config.json] [--launch @launch.txt] [--engine NAME==VERSION]` — and scored with the
same definitions the project is judged by:
  tau        τ within 0.01 of expected_metrics.mean_acceptance_length
  top-2/1    labelled cases (A/B/C): an expected cause, or the verdict healthy / insufficient-data, first or in the two
  decisive   τ − 1 ≤ 0.2 over ≥ 100 drafts must get verdict `problem`
  overclaim  unlabelled cases (U): a cause at confidence ≥ 0.5 outside expected + acceptable causes
The Brier score and the reliability table count every reported cause as a prediction "this cause is present":
right when it is an expected cause (labelled cases) or an acceptable one (unlabelled cases), or, for a scenario,
its `top` cause. Exit 0; figures on stdout.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from dflash_doctor.schema import ScenarioFile, convert

ROOT = Path(__file__).resolve().parents[1]
BINS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0001)


def first_number(d, key: str):
    """The first numeric `key` anywhere in a JSON document (how the judge reads τ from the report)."""
    if isinstance(d, dict):
        if key in d and isinstance(d[key], (int, float)) and not isinstance(d[key], bool):
            return d[key]
        for v in d.values():
            r = first_number(v, key)
            if r is not None:
                return r
    if isinstance(d, list):
        for v in d:
            r = first_number(v, key)
            if r is not None:
                return r
    return None


def run(dd: str, args: list[str]) -> dict:
    p = subprocess.run([dd, "diagnose", *args, "--format", "json"], capture_output=True, text=True, timeout=180)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"causes": [], "verdict": None, "error": (p.stderr or "").strip()[-300:]}


def case_args(case: Path, meta: dict) -> list[str]:
    args = ["--log", str(case / "engine.log")]
    if (case / "drafter-config.json").exists():
        args += ["--drafter", str(case / "drafter-config.json")]
    if (case / "launch.txt").exists():
        args += ["--launch", "@" + str(case / "launch.txt")]
    v = meta.get("engine_version")
    if v and all(ch.isdigit() or ch == "." for ch in v):
        args += ["--engine", f"{meta['engine']}=={v}"]
    return args


def score_cases(cases_dir: Path, dd: str, verbose: bool) -> tuple[dict, list[tuple[float, int]], list[str]]:
    r = dict(n=0, tau_ok=0, tau_n=0, labelled=0, top1=0, top2=0, decisive=0, decisive_ok=0, u=0, u_bad=0)
    preds: list[tuple[float, int]] = []
    lines: list[str] = []
    for case in sorted(p for p in cases_dir.iterdir() if (p / "case.json").exists()):
        meta = json.loads((case / "case.json").read_text())
        d = run(dd, case_args(case, meta))
        r["n"] += 1
        causes = [(c["id"], float(c.get("confidence", 0))) for c in d.get("causes", [])]
        verdict = d.get("verdict")
        ranked = ([verdict] if verdict in ("healthy", "insufficient-data") else []) + [c for c, _ in causes]
        want = set(meta.get("expected_causes") or [])
        extra = set(meta.get("acceptable_causes") or [])
        em = meta.get("expected_metrics") or {}
        tau, drafts = em.get("mean_acceptance_length"), em.get("num_drafts")
        got = first_number(d.get("acceptance") or {}, "mean_acceptance_length")
        notes = []
        if tau is not None:
            r["tau_n"] += 1
            if got is not None and abs(got - tau) <= 0.01:
                r["tau_ok"] += 1
            else:
                notes.append(f"tau want {tau:.4f} got {got}")
        if tau is not None and drafts and tau - 1 <= 0.2 and drafts >= 100:
            r["decisive"] += 1
            if verdict == "problem":
                r["decisive_ok"] += 1
            else:
                notes.append(f"not decisive: verdict {verdict}")
        labelled = meta.get("label_quality") in ("A", "B", "C") and want
        if labelled:
            r["labelled"] += 1
            r["top1"] += bool(ranked[:1] and ranked[0] in want)
            if set(ranked[:2]) & want:
                r["top2"] += 1
            else:
                notes.append(f"miss: want {sorted(want)} got {ranked[:3]}")
        else:
            r["u"] += 1
            bad = [(c, round(p, 2)) for c, p in causes if p >= 0.5 and c not in want | extra]
            if bad:
                r["u_bad"] += 1
                notes.append(f"overclaim {bad}")
        right = want if labelled else want | extra
        preds += [(p, int(c in right)) for c, p in causes]
        if notes or verbose:
            lines.append(
                f"{case.name:52s} {str(verdict):18s} τ={got} top={ranked[:3]}" + "".join(f"\n    - {x}" for x in notes)
            )
    return r, preds, lines


def score_scenarios(scen_dir: Path, dd: str) -> tuple[dict, list[tuple[float, int]]]:
    r = dict(n=0, verdict_ok=0, top_ok=0, tops=0)
    preds: list[tuple[float, int]] = []
    for d in sorted(p for p in scen_dir.iterdir() if (p / "scenario.toml").exists()):
        spec = tomllib.loads((d / "scenario.toml").read_text())
        convert(spec, ScenarioFile, f"{d.name}/scenario.toml")
        args: list[str] = []
        for key, value in (spec.get("args") or {}).items():
            flag = "--" + key.replace("_", "-")
            values = value if isinstance(value, list) else [value]
            for v in values:
                if isinstance(v, bool):
                    args.append(flag if v else "--no-" + key.replace("_", "-"))
                elif key in ("log", "drafter", "target") and not str(v).startswith("/"):
                    args += [flag, str((d / str(v)).resolve())]
                else:
                    args += [flag, str(v)]
        out = run(dd, args)
        expect = spec.get("expect") or {}
        r["n"] += 1
        r["verdict_ok"] += out.get("verdict") == expect.get("verdict")
        top = expect.get("top")
        causes = [(c["id"], float(c.get("confidence", 0))) for c in out.get("causes", [])]
        if top:
            r["tops"] += 1
            r["top_ok"] += bool(causes and causes[0][0] == top)
        preds += [(p, int(c == top)) for c, p in causes]
    return r, preds


def reliability(preds: list[tuple[float, int]]) -> tuple[float | None, list[tuple[str, int, float, float]]]:
    if not preds:
        return None, []
    brier = sum((p - y) ** 2 for p, y in preds) / len(preds)
    rows = []
    for lo, hi in zip(BINS, BINS[1:], strict=False):
        sel = [(p, y) for p, y in preds if lo <= p < hi]
        if sel:
            rows.append(
                (
                    f"{lo:.1f}–{min(hi, 1.0):.1f}",
                    len(sel),
                    sum(p for p, _ in sel) / len(sel),
                    sum(y for _, y in sel) / len(sel),
                )
            )
    return brier, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="?", default=str(ROOT.parent / "shared" / "cases"))
    ap.add_argument(
        "--scenarios",
        nargs="?",
        const=str(ROOT / "fixtures" / "scenarios"),
        default=None,
        help="also diagnose the bundled scenarios (default directory fixtures/scenarios)",
    )
    ap.add_argument("--dd", default=None, help="the dflash-doctor to run (default .venv/bin/dflash-doctor, then PATH)")
    ap.add_argument("-v", action="store_true", help="a line for every case, not only the misses")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args()
    dd = a.dd or (
        str(ROOT / ".venv" / "bin" / "dflash-doctor")
        if (ROOT / ".venv" / "bin" / "dflash-doctor").exists()
        else shutil.which("dflash-doctor")
    )
    if not dd:
        print("eval_cases: no dflash-doctor found (give --dd)", file=sys.stderr)
        return 2
    cases_dir = Path(a.cases)
    r = preds = lines = None
    out: dict = {}
    if cases_dir.is_dir():
        r, preds, lines = score_cases(cases_dir, dd, a.v)
        out["cases"] = r
    else:
        print(f"eval_cases: no case directory at {cases_dir}", file=sys.stderr)
        preds = []
    spreds: list[tuple[float, int]] = []
    if a.scenarios:
        sr, spreds = score_scenarios(Path(a.scenarios), dd)
        out["scenarios"] = sr
    b_cases, _ = reliability(preds or [])
    brier, table = reliability((preds or []) + spreds)
    out.update(
        {
            "brier_cases": b_cases,
            "brier_all": brier,
            "reliability": [{"bin": b, "n": n, "mean_confidence": mc, "right": fr} for b, n, mc, fr in table],
        }
    )
    if a.json:
        print(json.dumps(out, indent=2))
        return 0
    for line in lines or []:
        print(line)
    if r is not None:
        print(
            f"score: tau {r['tau_ok']}/{r['tau_n']}, top-2 {r['top2']}/{r['labelled']}, "
            f"top-1 {r['top1']}/{r['labelled']}, "
            f"decisive {r['decisive_ok']}/{r['decisive']}, overclaims {r['u_bad']}/{r['u']}  ({r['n']} cases)"
        )
    if a.scenarios:
        sr = out["scenarios"]
        print(f"scenarios: verdict {sr['verdict_ok']}/{sr['n']}, top cause {sr['top_ok']}/{sr['tops']}")
    if b_cases is not None:
        print(f"Brier (cause confidences, cases): {b_cases:.3f}")
    if brier is not None:
        print(
            f"Brier (cases{' + scenarios' if a.scenarios else ''}): {brier:.3f} over {len((preds or []) + spreds)} "
            "reported causes"
        )
        print("reliability: bin  n  mean confidence  right")
        for b, n, mc, fr in table:
            print(f"  {b:8s} {n:4d}  {mc:.2f}  {fr:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
