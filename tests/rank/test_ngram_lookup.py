"""An n-gram drafter copies the continuation of an earlier occurrence of the last tokens from the context: a low
hit rate means the traffic repeats little of its context (a workload cause), not an engine fault, and a high one is
no fault at all. llama-server names its drafter type on the command line (--spec-type), so the method is known."""

from __future__ import annotations

import json

import pytest

NGRAM = "llama-server -m t.gguf --spec-type ngram-simple --spec-ngram-simple-size-n 2 --spec-ngram-simple-size-m 3"
DRAFT = "llama-server -m t.gguf -md d.gguf --spec-type draft-simple --spec-draft-n-max 3"


def _prom(path, drafts: int, pos: list[int], drafted: int) -> str:
    rows = [
        ("spec_decode_num_draft_tokens_total", drafted),
        ("spec_decode_num_accepted_tokens_total", sum(pos)),
        ("spec_decode_num_drafts_total", drafts),
    ]
    text = "".join(f"# TYPE llamacpp:{n} counter\nllamacpp:{n} {v}\n" for n, v in rows)
    text += "# TYPE llamacpp:spec_decode_num_accepted_tokens_per_pos_total counter\n"
    text += "".join(
        f'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{{position="{i}"}} {v}\n' for i, v in enumerate(pos)
    )
    path.write_text(text)
    return str(path)


def _diagnose(cli, prom: str, launch: str) -> dict:
    r = cli("diagnose", "--metrics", prom, "--launch", launch, "--format", "json")
    assert r.returncode in (0, 1, 3), r.stderr
    return json.loads(r.stdout)


def _obs(rep: dict) -> set[str]:
    return {o["name"] for f in rep["findings"] for o in f["observations"]}


def test_ngram_with_little_to_copy_is_a_workload_cause(cli, tmp_path):
    rep = _diagnose(cli, _prom(tmp_path / "m.prom", 120, [9, 1, 0], 330), NGRAM)
    ids = [c["id"] for c in rep["causes"]]
    assert ids[0] == "context-not-repeated", ids
    assert "lookup:rarely-repeats" in _obs(rep)
    assert "signature:cliff-after-first" not in _obs(rep)  # a learned drafter's reading, not an n-gram's
    assert "engine-bug" not in ids[:2]
    assert "undertrained-drafter" not in ids and "wrong-pairing" not in ids  # no drafter model to blame


def test_ngram_whose_lookups_land_has_no_workload_cause(cli, tmp_path):
    rep = _diagnose(cli, _prom(tmp_path / "m.prom", 400, [330, 290, 260], 1200), NGRAM)
    assert "lookup:rarely-repeats" not in _obs(rep)
    assert "context-not-repeated" not in [c["id"] for c in rep["causes"]]


@pytest.mark.parametrize("drafts, pos", [(40, [12, 2, 0])])
def test_few_drafts_are_likely_not_settled(cli, tmp_path, drafts, pos):
    """30 % first-token hits over 40 drafts: below half, but the counts do not settle it (strength 0.5)."""
    rep = _diagnose(cli, _prom(tmp_path / "m.prom", drafts, pos, drafts * 3), NGRAM)
    ctx = next(c for c in rep["causes"] if c["id"] == "context-not-repeated")
    full = _diagnose(cli, _prom(tmp_path / "n.prom", 400, [40, 5, 0], 1200), NGRAM)
    settled = next(c for c in full["causes"] if c["id"] == "context-not-repeated")
    assert ctx["confidence"] < settled["confidence"]


def test_a_draft_model_with_the_same_curve_is_read_as_a_learned_drafter(cli, tmp_path):
    rep = _diagnose(cli, _prom(tmp_path / "m.prom", 120, [9, 1, 0], 360), DRAFT)
    assert "lookup:rarely-repeats" not in _obs(rep)
    assert "context-not-repeated" not in [c["id"] for c in rep["causes"]]


def test_a_standalone_draft_model_with_every_draft_rejected_is_the_pairing(cli, tmp_path):
    """llama-server's draft-simple runs a whole LM as the drafter, through the target's own forward pass: nothing
    accepted is the drafter's distribution (another model, tokenizer, untrained weights), not a head's features."""
    rep = _diagnose(cli, _prom(tmp_path / "m.prom", 1000, [0, 0, 0], 3000), DRAFT)
    ids = [c["id"] for c in rep["causes"]]
    assert ids[0] == "wrong-pairing", ids
    assert "draft-model:all-rejected" in _obs(rep)
    conf = {c["id"]: c["confidence"] for c in rep["causes"]}
    assert conf.get("engine-bug", 0) < 0.1 and conf.get("method-mismatch", 0) < 0.1
