"""Served vs probe: which observation the comparison emits, from synthetic evidence (no torch)."""

from __future__ import annotations

from dflash_doctor.check import run_checks
from dflash_doctor.checks.probe_lossless import ProbeLossless
from dflash_doctor.checks.probe_vs_served import ProbeVsServed, tau_at
from dflash_doctor.evidence import EvidenceSet, Source, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary
from dflash_doctor.evidence.payloads import ProbeResult


def curve(tau: float, k: int = 7) -> list[float]:
    """A geometric-ish per-position curve whose 1 + sum equals tau."""
    target = tau - 1
    r = 0.99
    while sum(r ** (i + 1) for i in range(k)) > target and r > 0.01:
        r -= 0.001
    return [r ** (i + 1) for i in range(k)]


def probe(tau: float, ablations: dict[str, float] | None = None, sliding: bool = True) -> dict:
    abl = []
    for name, t in (ablations or {}).items():
        note = None if sliding or not name.startswith("swa") else "the drafter has no sliding layers"
        abl.append({"name": name, "mean_acceptance_length": t, "per_position": curve(t), "note": note})
    return {
        "acceptance": {"mean_acceptance_length": tau, "per_position": curve(tau)},
        "ablations": abl,
        "temperature": 0.0,
        "lossless": True,
        "mismatches": [],
    }


def served(tau: float, k: int | None = 7) -> AcceptanceSummary:
    return AcceptanceSummary(
        mean_acceptance_length=tau,
        per_position=tuple(curve(tau)),
        drafts=5000,
        drafted=35000,
        accepted=int((tau - 1) * 5000),
        k=k,
        draft_acceptance_rate=None,
        intervals=10,
        formats=("vllm",),
    )


def observations(p: dict, s: AcceptanceSummary) -> tuple[set[str], list]:
    ev = EvidenceSet()
    ev.add("probe", Source("command", "probe"), ProbeResult(p))
    ev.add("served", Source("file", "log"), s)
    findings = run_checks([ProbeVsServed()], ev)
    return {o.name for f in findings for o in f.observations}, findings


def test_probe_far_above_served_points_at_the_integration():
    names, findings = observations(probe(6.5), served(1.3))
    assert "probe:exceeds-served" in names
    assert findings[0].status == Status.FAIL


def test_probe_as_low_as_served_points_at_the_drafter():
    names, _ = observations(probe(1.4), served(1.3))
    assert names == {"probe:reproduces-served"}


def test_swa_ignored_ablation_that_matches_names_the_window_bug():
    names, _ = observations(
        probe(6.5, {"swa-honoured": 6.5, "swa-ignored": 1.35, "offset-1": 5.9, "offset+1": 5.0}), served(1.3)
    )
    assert names == {"probe:exceeds-served", "probe:ablation-swa-matches"}


def test_offset_ablation_that_matches_names_the_layer_map_bug():
    names, _ = observations(
        probe(6.5, {"swa-honoured": 6.5, "swa-ignored": 2.9, "offset-1": 5.0, "offset+1": 6.0}), served(5.1)
    )
    assert names == {"probe:exceeds-served", "probe:ablation-offset-matches"}


def test_several_matching_ablations_are_all_named():
    names, findings = observations(probe(6.5, {"swa-ignored": 1.35, "offset-1": 1.5, "offset+1": 1.1}), served(1.2))
    assert names == {"probe:exceeds-served", "probe:ablation-swa-matches", "probe:ablation-offset-matches"}
    assert "cannot tell them apart" in findings[-1].message


def test_swa_ablation_of_a_drafter_without_windows_is_not_evidence():
    names, _ = observations(probe(6.5, {"swa-honoured": 6.5, "swa-ignored": 6.5}, sliding=False), served(6.4 - 5))
    assert "probe:ablation-swa-matches" not in names


def test_served_k_shorter_than_the_probe_block_compares_at_that_k():
    p = probe(7.0)
    assert tau_at(p["acceptance"]["per_position"], 3) < 4.0
    names, _ = observations(p, served(tau_at(p["acceptance"]["per_position"], 3), k=3))
    assert names == {"probe:reproduces-served"}


def test_without_served_acceptance_the_check_cannot_run():
    ev = EvidenceSet()
    ev.add("probe", Source("command", "probe"), ProbeResult(probe(6.0)))
    [f] = run_checks([ProbeVsServed()], ev)
    assert f.status == Status.COULD_NOT_CHECK


def test_lossless_check():
    ev = EvidenceSet()
    ev.add(
        "probe",
        Source("command", "probe"),
        ProbeResult({**probe(6.0), "lossless": False, "mismatches": [{"prompt": "p1", "first_difference_at": 5}]}),
    )
    [f] = run_checks([ProbeLossless()], ev)
    assert f.status == Status.WARN and "p1" in f.details[0]
