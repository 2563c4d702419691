"""rank/plan.py: remedies per cause, merged; the order by what fixing buys; explained causes; names filled in."""

from __future__ import annotations

import pytest

from dflash_doctor.evidence import Cause, Contribution
from dflash_doctor.model_ref import model_identity
from dflash_doctor.names import Names
from dflash_doctor.rank.plan import _combined_tau, fill


def cause(cid: str, conf: float, tau: float | None, obs: str = "engine-swa:ignored") -> Cause:
    return Cause(
        id=cid,
        title=cid,
        confidence=conf,
        evidence_for=(Contribution(obs, 1.0, "x"),),
        evidence_against=(),
        fix="f",
        next_step="n",
        expected_tau_if_fixed=tau,
        speedup_if_fixed=None,
    )


def test_a_model_reference_names_its_repo_and_snapshot():
    assert model_identity("/c/hub/models--z-lab--Qwen3.6-27B-DFlash/snapshots/34b294e1bb00/config.json") == (
        "z-lab/Qwen3.6-27B-DFlash",
        "34b294e1bb00",
    )
    assert model_identity("/models/drafter/config.json") == ("/models/drafter", None)
    assert model_identity("org/name") == ("org/name", None)


@pytest.mark.parametrize(
    "names,text,want",
    [
        (
            Names(engine="vllm", engine_version="0.20.1"),
            "run `dflash-doctor inspect-model DRAFTER --engine NAME==VERSION`",
            "run `dflash-doctor inspect-model DRAFTER --engine vllm==0.20.1`",
        ),
        (
            Names(engine="vllm", engine_version="0.20.1", engine_source_read=True, drafter="z/D"),
            "run `dflash-doctor inspect-model DRAFTER --engine NAME==VERSION`",
            "run `dflash-doctor inspect-model z/D`",
        ),
        (
            Names(engine="vllm", engine_source_read=True),
            "Serve it with a release (`--engine NAME==VERSION` says whether).",
            "Serve it with a release.",
        ),
        (Names(engine="sglang"), "give `--engine NAME==VERSION`", "give `--engine sglang==VERSION`"),
        (Names(), "give `--engine NAME==VERSION`", "give `--engine NAME==VERSION`"),  # nobody knows: a placeholder
        (
            Names(drafter="z/D", target="q/T"),
            "`dflash-doctor probe --ablate swa`",
            "`dflash-doctor probe --target q/T --drafter z/D --ablate swa`",
        ),
        (Names(drafter="z/D"), "saw `code`` fence", "saw `code`` fence"),  # text that is not ours is left alone
    ],
)
def test_fill_puts_the_evidence_names_into_commands_and_only_there(names, text, want):
    assert fill(text, names) == want


def test_the_tau_of_a_step_multiplies_the_fixes_and_never_passes_the_reference():
    both = [cause("swa-ignored", 0.9, 5.55), cause("layer-offset", 0.56, 1.41)]
    assert _combined_tau(both, 1.18, 6.61) == pytest.approx(6.61)
    assert _combined_tau(both, 1.18, None) == pytest.approx(5.55 * 1.41 / 1.18)
    assert _combined_tau([cause("x", 0.5, None)], 1.18, 6.61) is None


def test_a_failing_plan_never_costs_the_report(monkeypatch):
    from dflash_doctor.collect.inputs import FileInputs, gather_files
    from dflash_doctor.services import doctor
    from tests.conftest import FIXTURES

    def boom(*a, **k):
        raise ZeroDivisionError("plan")

    monkeypatch.setattr(doctor, "build_plan", boom)
    report, _ = doctor.build_report(gather_files(FileInputs(logs=[str(FIXTURES / "seed" / "vllm-0.20.1.log")])))
    assert report.plan is None and report.causes
    assert any("no fix plan" in n for n in report.notes)
    from dflash_doctor.render import Format, render

    for fmt in Format:
        assert render(report, fmt)
