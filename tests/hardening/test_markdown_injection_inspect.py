"""issue 19 item 6: `inspect-model --format markdown` must not pass HTML, script, javascript: links or
tracking images from configs and model cards through as live markdown. Every place untrusted text
reaches the markdown report (architecture names, the verifier a speculators config names, config
keys listed as not understood, model-card lines, the checkpoint path) carries a payload here."""

from __future__ import annotations

import json
import re

import pytest

from tests.hardening import tally

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "![t](https://tracker.example/p.png?u=1)",
    "<iframe src=//evil>",
    "`code` **bold** | pipe",
]

# A construct is live when its opening character is neither escaped nor an HTML entity.
LIVE = [
    re.compile(r"(?<![\\&])<\s*(script|img|iframe)\b", re.I),
    re.compile(r"(?<!\\)\]\(\s*javascript:", re.I),
    re.compile(r"(?<!\\)!\[[^\]]*(?<!\\)\]\("),
    re.compile(r"(?<!\\)\]\(https?:"),
]


def _checkpoint(tmp_path, payload: str):
    d = tmp_path / "drafter"
    d.mkdir()
    cfg = {
        "architectures": [f"DFlashDraftModel{payload}"],
        "speculators_model_type": "dflash",
        "speculators_config": {"verifier": {"name_or_path": f"org/{payload}"}},
        "aux_hidden_state_layer_ids": [2, 10],
        "mask_token_id": 5,
        payload: 1,
        "transformer_layer_config": {"num_hidden_layers": 1, "hidden_size": 8, "vocab_size": 16},
    }
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "README.md").write_text(f"This drafter is still under training {payload}\n")
    return d


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_report_of_a_hostile_config_and_card_is_inert(cli, tmp_path, payload):
    tally.hostile_input("markdown-inspect-model")
    d = _checkpoint(tmp_path, payload)
    r = cli("inspect-model", str(d), "--format", "markdown")
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
    live = [m.group() for rx in LIVE for m in rx.finditer(r.stdout)]
    assert not live, f"live markdown from untrusted text: {live}"
    assert "org/" in r.stdout  # the verifier is still shown, only inert


def test_markdown_escapes_every_metacharacter_of_untrusted_text():
    from dflash_doctor.render.inspection_view import _md

    out = _md("<script>x</script> [a](javascript:b) ![c](d) `e` *f* _g_ |h|")
    assert "<" not in out and ">" not in out
    assert "\\[a\\]\\(javascript:b\\)" in out and "\\!\\[c\\]\\(d\\)" in out
    assert "\\`e\\`" in out and "\\*f\\*" in out and "\\_g\\_" in out and "\\|h\\|" in out
