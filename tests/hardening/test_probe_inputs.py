"""Inputs of `probe` and `layer-offset` that are damaged or hostile: prompt ids beyond the vocabulary or
beyond any integer type, JSON nested 100 000 deep, a remote host answering with a made-up exit code or
an empty result, a checkpoint with pickle weights only (one that would run code if unpickled), a
hidden-state dump of NaN. Before: internal errors (IndexError, RuntimeError, RecursionError,
ValueError: 99 is not a valid ExitCode, TypeError, KeyError), a 7-line essay on `weights_only`, and
bare `NaN` in JSON with "exact match" in text."""

from __future__ import annotations

import json
import os
import pickle

import pytest

from dflash_doctor.errors import DoctorError, ExitCode, UsageError
from dflash_doctor.hosts.interface import CommandResult, Host
from tests.conftest import FIXTURES, run_cli
from tests.hardening import tally

TINY = FIXTURES / "tiny"


def _one_line_error(res, code: int) -> None:
    assert res.returncode == code, (res.returncode, res.stderr[-2000:])
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, res.stderr
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr


# -- prompt files ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "row",
    [
        '{"input_ids": [1, 100000000000000000000000000000000000000000]}',
        '{"input_ids": [1, -3]}',
        '{"input_ids": [true, 2]}',
        '{"input_ids": [1, ' + "9" * 5000 + "]}",
        "[" * 100_000 + "]" * 100_000,
        '{"messages": "hello"}',
        '{"messages": [{"role": "user", "content": 5}]}',
        '{"long_context": "x"}',
        '{"long_context": {"task": "t", "min_chars": 1e12}}',
    ],
)
def test_a_damaged_prompt_row_is_a_usage_error(tmp_path, row):
    from dflash_doctor.probe.prompts import load_prompts, portable_rows

    tally.hostile_input("probe: damaged prompt row")
    f = tmp_path / "p.jsonl"
    f.write_text(row + "\n")
    with pytest.raises(UsageError):
        load_prompts(str(f), tokenizer=object())
    if "long_context" in row:
        with pytest.raises(UsageError):
            portable_rows(str(f))


def test_prompt_ids_beyond_the_vocabulary_are_one_line(tmp_path):
    """Before: IndexError from the embedding, deep inside torch."""
    pytest.importorskip("torch")
    tally.hostile_input("probe: prompt id beyond the target's vocabulary")
    vocab = json.loads((TINY / "target/config.json").read_text())["vocab_size"]
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"input_ids": [1, 2, vocab]}) + "\n")
    res = run_cli(
        "probe",
        "--target",
        str(TINY / "target"),
        "--drafter",
        str(TINY / "drafter"),
        "--prompts",
        str(f),
        "--max-new-tokens",
        "2",
        "--device",
        "cpu",
        timeout=300,
    )
    _one_line_error(res, 2)
    assert f"token id {vocab} is outside the target's vocabulary" in res.stderr


# -- a remote probe's answer -----------------------------------------------------------------------------
class AnsweringHost(Host):
    """A host whose `python -c BOOTSTRAP` prints `answer` as the probe's marked result line."""

    name = "ssh://probe@answering"

    def __init__(self, answer: str):
        self.answer = answer

    def run(self, argv, timeout=30.0, max_bytes=16 << 20, stdin=None, on_stderr=None, bulk=False):
        from dflash_doctor.probe.remote import MARKER

        return CommandResult(tuple(argv), 0, (MARKER + self.answer + "\n").encode(), b"")

    def read_file(self, path, max_bytes=16 << 20, timeout=30.0):
        raise FileNotFoundError(path)

    def list_dir(self, path, timeout=30.0):
        raise FileNotFoundError(path)


@pytest.mark.parametrize(
    "answer,code",
    [
        ('{"error": "boom", "exit_code": 99}', ExitCode.NOT_CHECKED),
        ('{"error": "boom", "exit_code": 0}', ExitCode.NOT_CHECKED),
        ('{"error": "bad flag", "exit_code": 2}', ExitCode.USAGE),
        ('{"error": ["x"], "exit_code": "2"}', ExitCode.NOT_CHECKED),
        ("[]", ExitCode.NOT_CHECKED),
        ("{}", ExitCode.NOT_CHECKED),
        ('{"schema": "dflash-doctor/probe@1"}', ExitCode.NOT_CHECKED),
        ("[" * 100_000, ExitCode.NOT_CHECKED),
        ("null", ExitCode.NOT_CHECKED),
        ('"text"', ExitCode.NOT_CHECKED),
    ],
)
def test_a_remote_answer_is_a_claim_checked_before_use(answer, code):
    from dflash_doctor.probe.remote import run_remote_probe

    tally.hostile_input("probe: malformed remote answer")
    with pytest.raises(DoctorError) as err:
        run_remote_probe(AnsweringHost(answer), {"target": "t", "drafter": "d"})
    assert err.value.exit_code == code
    assert "\n" not in err.value.message


def test_a_real_probe_result_passes_the_check():
    from dflash_doctor.probe.remote import result_problem

    result = {
        "schema": "dflash-doctor/probe@1",
        "target": "t",
        "drafter": "d",
        "device": "cpu",
        "dtype": "float32",
        "block_size": 8,
        "max_new_tokens": 4,
        "decoding": "greedy",
        "end_rule": {"description": "x"},
        "prompts": {"count": 1, "min_length": 3, "max_length": 3},
        "taps": {"target_layer_ids": [1], "hf_hidden_state_indices": [2]},
        "acceptance": {"mean_acceptance_length": 2.5, "per_position": [0.5], "histogram": {}, "steps": 2},
        "lossless": True,
        "mismatches": [],
        "ablations": [],
    }
    assert result_problem(result) is None


@pytest.mark.ssh
def test_a_remote_python_answering_exit_code_99_is_one_line_over_real_ssh(sshd, tmp_path):
    tally.hostile_input("probe: remote answers exit_code 99 (over SSH)")
    fake = tmp_path / "fake-python"
    fake.write_text(
        '#!/bin/sh\ncat >/dev/null\necho \'DFLASH-DOCTOR-PROBE-RESULT {"error": "nope", "exit_code": 99}\'\n'
    )
    os.chmod(fake, 0o755)
    res = run_cli(
        "probe",
        "--target",
        "t",
        "--drafter",
        "d",
        "--host",
        "testhost",
        "--ssh-config",
        str(sshd.ssh_config),
        "--remote-python",
        str(fake),
        "--prompts",
        str(TINY / "prompts.jsonl"),
        timeout=120,
    )
    _one_line_error(res, 3)
    assert "nope" in res.stderr


# -- pickle-only checkpoints ------------------------------------------------------------------------------
class _RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("name", ["pytorch_model.bin", "model.pt", "consolidated.00.pth"])
def test_a_pickle_only_checkpoint_is_refused_in_one_line_and_never_unpickled(tmp_path, name):
    """Before: transformers tried torch.load(weights_only=True) and the CLI printed its 7-line advice to
    set weights_only=False (which would have run this file's code)."""
    pytest.importorskip("torch")
    tally.hostile_input("probe: pickle-only checkpoint that runs code when unpickled")
    target = tmp_path / "target"
    target.mkdir()
    for f in ("config.json", "generation_config.json"):
        (target / f).write_bytes((TINY / "target" / f).read_bytes())
    marker = tmp_path / "unpickled"
    (target / name).write_bytes(pickle.dumps({"model.embed_tokens.weight": _RunsCode(marker)}))
    for cmd in (
        [
            "probe",
            "--drafter",
            str(TINY / "drafter"),
            "--prompts",
            str(TINY / "prompts.jsonl"),
            "--max-new-tokens",
            "2",
        ],
        ["layer-offset", "--dump", str(tmp_path / "none.safetensors")],
    ):
        if cmd[0] == "layer-offset":
            _nan_dump(tmp_path / "none.safetensors", nan=False)
        res = run_cli(*cmd, "--target", str(target), "--device", "cpu", timeout=300)
        _one_line_error(res, 2)
        assert "pickle weights only" in res.stderr and "weights_only" not in res.stderr
        assert not marker.exists(), "the pickle was unpickled"


# -- hidden-state dumps -------------------------------------------------------------------------------------
def _nan_dump(path, nan: bool = True):
    import torch
    from safetensors.torch import save_file

    hidden = json.loads((TINY / "target/config.json").read_text())["hidden_size"]
    h = torch.full((5, hidden), float("nan")) if nan else torch.randn(5, hidden)
    save_file({"input_ids": torch.tensor([1, 2, 3, 4, 5]), "hidden_states.0": h}, str(path))


@pytest.mark.parametrize("fmt", ["terminal", "json"])
def test_an_all_nan_dump_is_refused_not_an_exact_match(tmp_path, fmt):
    pytest.importorskip("torch")
    tally.hostile_input("layer-offset: all-NaN hidden-state dump")
    dump = tmp_path / "nan.safetensors"
    _nan_dump(dump)
    res = run_cli(
        "layer-offset",
        "--target",
        str(TINY / "target"),
        "--dump",
        str(dump),
        "--device",
        "cpu",
        "--format",
        fmt,
        timeout=300,
    )
    _one_line_error(res, 2)
    assert "NaN" in res.stderr and "exact match" not in res.stdout and "NaN" not in res.stdout
