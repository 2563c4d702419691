"""Property tests for the parsers that landed with the log and hosts issues: Prometheus text and
scrape differencing, the serve command line with its --speculative-config JSON, and host
inventories (plain lists and Ansible INI). Each returns a result or its one documented error."""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import tempfile

from hypothesis import example, given
from hypothesis import strategies as st

from dflash_doctor.errors import UsageError
from dflash_doctor.evidence.serialise import to_jsonable
from dflash_doctor.parse.launch import LaunchParseError, parse_launch_text
from dflash_doctor.parse.metrics_text import MetricsError, intervals_from_scrapes, parse_text, parse_window, read_source
from tests.hardening import tally
from tests.hardening.strategies import NUMBERS, json_value, nasty_text

METRIC_NAMES = [
    "vllm:spec_decode_num_drafts_total",
    "vllm:spec_decode_num_draft_tokens_total",
    "vllm:spec_decode_num_accepted_tokens_total",
    "vllm:spec_decode_num_accepted_tokens_per_pos_total",
    "vllm:spec_decode_num_drafts_created",
    "sglang:spec_accept_length",
    "sglang:spec_accept_rate",
    "sglang:spec_verify_calls_total",
    "vllm:spec_decode_draft_acceptance_rate",
    "other_metric",
]
value = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(NUMBERS),
    st.integers(-10, 10**20).map(str),
)
label_value = st.one_of(st.sampled_from(["0", "1", "-1", "x", "", "99999999999999999999"]), nasty_text)


@st.composite
def prom_sample(draw):
    name = draw(st.sampled_from(METRIC_NAMES))
    labels = draw(st.dictionaries(st.sampled_from(["engine", "position", "model_name", "le"]), label_value, max_size=3))
    lab = ",".join(f'{k}="{json.dumps(v)[1:-1]}"' for k, v in labels.items())
    return f"{name}{{{lab}}} {draw(value)}" if labels else f"{name} {draw(value)}"


@st.composite
def prom_text(draw):
    lines = draw(
        st.lists(
            st.one_of(
                prom_sample(),
                st.sampled_from(
                    ["# TYPE vllm:spec_decode_num_drafts counter", "# HELP x y", "", "#", "garbage line {", 'x{a="}']
                ),
                nasty_text,
            ),
            max_size=12,
        )
    )
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n# EOF\n"]))


def _sane_rows(rows) -> None:
    from dflash_doctor.parse.frame import FIELDS

    for r in rows:
        row = dict(zip(FIELDS, r, strict=False))
        for key in ("drafts", "drafted", "accepted"):
            v = row.get(key)
            assert v is None or (isinstance(v, (int, float)) and v >= 0 and math.isfinite(v)), (key, v)
        assert all(0.0 <= p <= 1.0 for p in row.get("per_position") or ()), row


@given(st.lists(prom_text(), min_size=1, max_size=3))
@example(["vllm:spec_decode_num_drafts_total 1" + "0" * 400])  # found by the long profile: OverflowError
@example(["sglang:spec_accept_length 0.0"])  # found: a negative accepted count
def test_prometheus_text_parses_or_is_a_metrics_error_and_deltas_stay_sane(texts):
    tally.example("prometheus-text")
    scrapes = []
    for t in texts:
        try:
            scrapes.append(parse_text(t, "fuzz"))
        except MetricsError:
            continue
    for s in scrapes:
        json.dumps(to_jsonable(s), allow_nan=False)
    rows, notes, table = intervals_from_scrapes(scrapes)
    _sane_rows(rows)
    json.dumps(to_jsonable(table), allow_nan=False)


@given(
    st.one_of(
        st.binary(max_size=200),
        st.sampled_from(
            [b"\x1f\x8b" + b"\0" * 20, gzip.compress(b"a 1\n")[:15], gzip.compress(b"vllm:x 1\n" * 50)[:-9]]
        ),
    )
)
def test_a_metrics_file_of_any_bytes_is_text_or_a_metrics_error(blob):
    tally.example("prometheus-file")
    fd, path = tempfile.mkstemp()
    os.write(fd, blob)
    os.close(fd)
    try:
        try:
            text = read_source(path)
        except (MetricsError, OSError):  # what gather_metrics turns into a could-not-check line
            return
        with contextlib.suppress(MetricsError):
            parse_text(text, path)
    finally:
        os.unlink(path)


def test_a_gzip_bomb_metrics_file_is_capped_before_it_is_inflated(tmp_path):
    # 1 GiB of zeros is ~1 MiB compressed: inflating it whole would take 1 GiB of memory.
    import resource
    import zlib

    tally.hostile_input("metrics: gzip bomb")
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * (1 << 20)
    with open(tmp_path / "bomb.prom.gz", "wb") as fh:
        for _ in range(1024):
            fh.write(comp.compress(chunk))
        fh.write(comp.flush())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:
        read_source(str(tmp_path / "bomb.prom.gz"))
    except MetricsError as exc:
        assert "larger than" in str(exc) or "binary" in str(exc)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before < 200


@given(st.one_of(st.text(max_size=20), st.sampled_from(["30s", "1.5m", "0", "-1", "1e9", "nan", "inf", "10ms"])))
def test_window_spec_is_a_number_or_value_error(text):
    tally.example("metrics-window")
    try:
        v = parse_window(text)
    except ValueError:
        return
    assert v >= 0 and math.isfinite(v)


spec_json = st.one_of(
    json_value.map(json.dumps),
    st.fixed_dictionaries(
        {},
        optional={
            "method": st.one_of(st.sampled_from(["dflash", "eagle3", "mtp", "ngram"]), json_value),
            "model": st.one_of(st.text(max_size=20), json_value),
            "num_speculative_tokens": st.one_of(st.integers(-5, 10**30), json_value),
        },
    ).map(json.dumps),
    st.sampled_from(
        [
            '{"method": "dflash", "model": "x", num_speculative_tokens: 15}',
            "{'method': 'dflash'}",
            '{"method": "dflash",',
            "{" * 5000,
            '{"num_speculative_tokens": ' + "9" * 5000 + "}",
            "null",
        ]
    ),
)
launch_word = st.one_of(
    st.sampled_from(
        [
            "--port",
            "8000",
            "--api-key",
            "sk-x",
            "--speculative-config",
            "-tp",
            "2",
            "--host",
            "0.0.0.0",
            "--model",
            "--",
            "\\",
            "'",
            '"',
            "$(id)",
            "`x`",
        ]
    ),
    nasty_text,
    st.text(max_size=12),
)


@given(
    st.sampled_from(
        [
            "vllm serve Qwen/Qwen3-8B",
            "python -m sglang.launch_server --model-path m",
            "VLLM_USE_V1=1 HF_TOKEN=hf_x vllm serve m",
            "python3 -m vllm.entrypoints.openai.api_server",
            "$ vllm serve m \\\n",
            "",
        ]
    ),
    st.lists(launch_word, max_size=8),
    spec_json,
    st.booleans(),
)
@example("vllm serve m", [], '{"num_speculative_tokens": ' + "9" * 5000 + "}", True)  # found by the long profile
@example("vllm serve m", [], "{[1]: 2}", True)  # the repair's literal_eval raised TypeError
def test_launch_lines_parse_or_are_a_one_line_error(prefix, words, spec, quote):
    tally.example("launch-command")
    import shlex

    flag = f"--speculative-config {shlex.quote(spec) if quote else spec}"
    text = " ".join([prefix, *words, flag])
    try:
        cfg = parse_launch_text(text)
    except LaunchParseError as exc:
        assert "\n" not in str(exc)
        return
    json.dumps(to_jsonable(cfg), allow_nan=False)
    k = cfg.num_speculative_tokens
    assert k is None or isinstance(k, int)


inventory_line = st.one_of(
    st.sampled_from(
        [
            "[gpus]",
            "[gpus:vars]",
            "[all:children]",
            "gpu-1 ansible_host=10.0.0.1 ansible_user=ubuntu",
            "gpu-2 ansible_port=2222",
            "local ansible_connection=local",
            "; comment",
            "# comment",
            "host ansible_host=",
            "x ansible_port=notaport",
            "ssh://u:pw@h",
            "a=b=c",
            "[",
            "]",
        ]
    ),
    nasty_text,
    st.text(max_size=30),
)


@given(st.lists(inventory_line, max_size=12))
def test_inventories_give_host_specs_or_a_usage_error(lines):
    from dflash_doctor.hosts.interface import HostError
    from dflash_doctor.hosts.inventory import read_hosts_file
    from dflash_doctor.hosts.ssh import parse_target

    tally.example("hosts-file")
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write("\n".join(lines))
    try:
        try:
            specs = read_hosts_file(path)
        except UsageError as exc:
            assert "\n" not in exc.message
            return
        for spec in specs:
            assert isinstance(spec, str) and spec
            if spec != "local":
                try:
                    parse_target(spec)  # every spec is a host or a one-line refusal, never a crash
                except HostError as exc:
                    assert "\n" not in exc.message
    finally:
        os.unlink(path)
