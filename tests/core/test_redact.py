"""Secrets never reach output; counts that merely contain the word "tokens" are left alone."""

import pytest

from dflash_doctor.redact import REDACTED, redact_any, redact_text

SECRETS = [
    ("--api-key sk-live-7f3c9a1e5b2d4f6a8c0e", "sk-live-7f3c9a1e5b2d4f6a8c0e"),
    ("--api-key=abcdefgh12345", "abcdefgh12345"),
    ("'api_key': ['plainsecretvalue']", "plainsecretvalue"),
    ("'hf_token': 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456'", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456"),
    ("HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGciOiJIUzI1NiJ9.payload.sig"),
    ("https://user:hunter2pass@example.com/metrics", "hunter2pass"),
    ("AWS key AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("password=correcthorse", "correcthorse"),
    ('{"secret": "s3cr3tvalue"}', "s3cr3tvalue"),
]

COUNTS = [
    "Chunked prefill is enabled with max_num_batched_tokens=8192.",
    "SpeculativeConfig(method='dflash', model='z-lab/Qwen3-8B-DFlash-b16', num_spec_tokens=15)",
    "Accepted: 468 tokens, Drafted: 38970 tokens, Per-position acceptance rate: 0.164",
    "tokenizer='Qwen/Qwen3-8B', max_tokens=4096",
]


@pytest.mark.parametrize("text,secret", SECRETS)
def test_secret_is_redacted(text, secret):
    out = redact_text(text)
    assert secret not in out and REDACTED in out


@pytest.mark.parametrize("text", COUNTS)
def test_token_counts_are_not_redacted(text):
    assert redact_text(text) == text


def test_structured_values_redact_by_key():
    args = {"api_key": ["k1"], "hf_token": "x", "num_speculative_tokens": 15, "nested": {"password": "p"}}
    out = redact_any(args)
    assert out["api_key"] == REDACTED and out["hf_token"] == REDACTED and out["nested"]["password"] == REDACTED
    assert out["num_speculative_tokens"] == 15


def test_prose_mentioning_token_is_left_alone():
    for text in ("acceptance at token 1:0.75", "the first token is the bonus token here"):
        assert redact_text(text) == text
