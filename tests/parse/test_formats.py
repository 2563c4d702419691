"""Every engine format, one fixture per format and version (fixtures/logs, written by
fixtures/scripts/make_logs.py from the reference).

Two independent checks per fixture: the printed numbers agree with each other (recomputed here
from the counts on the line, to the printed rounding), and the parser's drafts-weighted totals
equal the true counts the generator derived the lines from (EXPECTED.json)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dflash_doctor.evidence.serialise import to_jsonable
from dflash_doctor.parse import formats as F
from dflash_doctor.parse import logscan
from dflash_doctor.parse.logscan import aggregate

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
EXPECTED = json.loads((LOGS / "EXPECTED.json").read_text())
NUM = r"([-\d.]+)"


def summary_of(name: str):
    scan = logscan.scan(str(LOGS / name))
    assert scan.malformed_count == 0, scan.malformed
    return scan, aggregate(scan)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_parsed_totals_equal_the_true_counts(name):
    exp = EXPECTED[name]
    scan, s = summary_of(name)
    assert s is not None
    # printed means carry 2 decimals; where the drafts count is printed or derivable the totals are exact
    assert s.mean_acceptance_length == pytest.approx(exp["tau"], abs=0.006 if "old" in name else 5e-4)
    assert s.k == exp["k"]
    if exp.get("per_position"):
        assert len(s.per_position) == len(exp["per_position"])
        tol = 0.006 if "offline" in name else 6e-4  # %.2f there, %.3f elsewhere
        for got, want in zip(s.per_position, exp["per_position"], strict=False):
            assert got == pytest.approx(want, abs=tol)
    if (
        exp.get("drafts")
        and not name.startswith(("sglang-0", "vllm-offline-example-old"))
        or name == "sglang-0.5.23-requests.log"
    ):
        assert s.drafts == pytest.approx(exp["drafts"], rel=1e-9)
    assert s.per_request is bool(exp.get("per_request")), s.standing
    assert (s.standing == "unrecognised-format") is (exp.get("standing") == "unrecognised-format")
    assert scan.salvaged_count == exp.get("salvaged", 0), scan.salvaged
    assert len(scan.shadowed) == exp.get("shadowed", 0)
    if "true_tau" in exp:  # a figure computed from rounded averages: within what the rounding allows
        assert s.mean_acceptance_length == pytest.approx(exp["true_tau"], abs=0.01)
    for alt in exp.get("alternatives", ()):
        assert any(alt in a["figure"] for a in s.alternatives), s.alternatives
    if "engines" in exp:
        assert list(s.engines) == exp["engines"]
    named = "; ".join(n for n in s.notes if n.startswith("acceptance read from"))
    assert all(
        F.BY_ID[f].label in named or f not in {d["format"] for d in s.format_details if d["used"]}
        for f in exp["formats"]
    ), named


def test_every_registry_format_has_a_fixture_and_expectation():
    """Adding a format is one module plus its fixture and its EXPECTED.json entry: a format without
    them fails here."""
    covered = {f for e in EXPECTED.values() for f in e["formats"]}
    assert covered == {f.id for f in F.FORMATS}, sorted({f.id for f in F.FORMATS} ^ covered)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_fixture_reads_as_the_formats_its_expectation_names(name):
    scan = logscan.scan(str(LOGS / name))
    assert sorted({F.BY_FMT[f].id for f in scan.formats}) == sorted(EXPECTED[name]["formats"])
    # and the summary names where each used number came from
    s = aggregate(scan)
    assert all(d["label"] and d["meaning"] for d in s.format_details)


V1_NEW = re.compile(
    r"Mean acceptance length: " + NUM + r", Accepted throughput: " + NUM + r" ?tokens/s, "
    r"Drafted throughput: " + NUM + r" tokens/s, Accepted: (\d+) tokens, Drafted: (\d+) tokens, "
    r"Per-position acceptance rate: ([\d., ]+), Avg Draft acceptance rate: " + NUM + "%"
)
V1_OLD = re.compile(
    r"Draft acceptance rate: "
    + NUM
    + r"%, Mean acceptance length: "
    + NUM
    + r", Accepted: (\d+) tokens, Drafted: (\d+) tokens, Per-position acceptance rate: ([\d., ]+)"
)


@pytest.mark.parametrize(
    "name,bonus",
    [
        ("vllm-0.11.0.log", True),
        ("vllm-0.17.0-compose.log", True),
        ("vllm-0.20.1-journald.log", True),
        ("vllm-0.33.0.jsonl", True),
        ("vllm-0.9.2.log", True),
        ("vllm-0.10.1.log", True),
        ("vllm-0.8.5.log", False),
    ],
)
def test_vllm_v1_printed_arithmetic_is_consistent(name, bonus):
    lines = 0
    for line in (LOGS / name).read_text().splitlines():
        m = V1_NEW.search(line)
        if m:
            mean, _, _, acc, dft, pp, rate = m.groups()
        else:
            m = V1_OLD.search(line)
            if not m:
                continue
            rate, mean, acc, dft, pp = m.groups()
        lines += 1
        acc, dft, mean, rate = int(acc), int(dft), float(mean), float(rate)
        rates = [float(x) for x in pp.split(",")]
        k = len(rates)
        drafts = dft / k
        assert mean == pytest.approx((1.0 if bonus else 0.0) + acc / drafts, abs=0.005 + 1e-9)
        assert sum(rates) == pytest.approx(acc / drafts, abs=k * 0.0005 + 1e-9)
        assert rate == pytest.approx(acc / dft * 100, abs=0.05 + 1e-9)
        assert all(a >= b for a, b in zip(rates, rates[1:], strict=False))  # unconditional rates never rise
    assert lines >= 30


def test_vllm_085_mean_is_normalised_and_said_so():
    scan, s = summary_of("vllm-0.8.5.log")
    assert scan.mean_normalised == 30
    assert set(scan.formats) == {"vllm-v1-0.8.5"}
    assert s.mean_acceptance_length > 2  # the printed means are all < 2 (bonus excluded)


def test_vllm_083_needs_k_from_startup_for_tau():
    scan, s = summary_of("vllm-0.8.3.log")
    assert scan.startup.num_speculative_tokens == 3  # from args: Namespace(... speculative_config=...)
    assert any("estimated" in n for n in s.notes)


def test_vllm_v0_cumulative_lines_are_differenced():
    text = (LOGS / "vllm-0.7.3-v0.log").read_text()
    rx = re.compile(
        r"Draft acceptance rate: " + NUM + r", System efficiency: " + NUM + r", Number of speculative "
        r"tokens: (\d+), Number of accepted tokens: (\d+), Number of draft tokens(?: tokens)?: (\d+), "
        r"Number of emitted tokens: (\d+)\."
    )
    prev = None
    typo = 0
    for line in text.splitlines():
        m = rx.search(line)
        if not m:
            continue
        typo += "tokens tokens" in line
        rate, eff, k, acc, dft, emt = float(m[1]), float(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6])
        assert rate == pytest.approx(acc / dft, abs=0.0005 + 1e-9)
        assert eff == pytest.approx(emt / (dft / k * (k + 1)), abs=0.0005 + 1e-9)
        if prev:
            assert acc >= prev[0] and dft >= prev[1] and emt >= prev[2]  # cumulative
        prev = (acc, dft, emt)
    assert typo >= 5
    scan, s = summary_of("vllm-0.7.3-v0.log")
    # τ = emitted / drafts over the whole run, which differencing must preserve
    assert s.mean_acceptance_length == pytest.approx(prev[2] / (prev[1] / 4), abs=1e-9)
    assert s.intervals == 30


@pytest.mark.parametrize("name,meaning", [("sglang-0.5.8.log", "0.5.6–0.5.10"), ("sglang-0.5.23.log", "0.5.23")])
def test_sglang_accept_rate_meaning_is_detected(name, meaning):
    ndt = 9 if "0.5.8" in name else 16
    for line in (LOGS / name).read_text().splitlines():
        m = re.search(r"accept len: " + NUM + r", accept rate: " + NUM, line)
        if m:
            ln, rate = float(m[1]), float(m[2])
            want = ln / ndt if "0.5.8" in name else (ln - 1) / (ndt - 1)
            assert rate == pytest.approx(want, abs=0.005 + 1e-9)
    scan, _ = summary_of(name)
    assert meaning in scan.sglang_rate_meaning


def test_sglang_weighting_is_by_running_requests():
    """τ = Σ(len-1)·40·running / Σ 40·running + 1, computed here from the lines themselves."""
    num = den = 0.0
    for line in (LOGS / "sglang-0.5.2.log").read_text().splitlines():
        m = re.search(r"Decode batch\. #running-req: (\d+),.*accept len: " + NUM, line)
        if m:
            w = int(m[1]) * 40
            num += (float(m[2]) - 1) * w
            den += w
    _, s = summary_of("sglang-0.5.2.log")
    assert s.mean_acceptance_length == pytest.approx(1 + num / den, abs=1e-9)


def test_bench_serve_block_arithmetic():
    text = (LOGS / "vllm-bench-serve.txt").read_text()
    val = {
        k: float(re.search(re.escape(k) + r":\s+" + NUM, text)[1])
        for k in ("Acceptance rate (%)", "Acceptance length", "Drafts", "Draft tokens", "Accepted tokens")
    }
    pos = [float(x) / 100 for x in re.findall(r"Position \d+:\s+" + NUM, text)]
    assert val["Acceptance length"] == pytest.approx(1 + val["Accepted tokens"] / val["Drafts"], abs=0.005)
    assert val["Acceptance rate (%)"] == pytest.approx(val["Accepted tokens"] / val["Draft tokens"] * 100, abs=0.005)
    assert sum(pos) == pytest.approx(val["Accepted tokens"] / val["Drafts"], abs=len(pos) * 0.00005 + 1e-9)
    _, s = summary_of("vllm-bench-serve.txt")
    assert s.drafts == val["Drafts"] and s.accepted == val["Accepted tokens"]
    assert s.per_position == pytest.approx(pos)


def test_offline_old_form_drops_the_bonus_slot():
    _, new = summary_of("vllm-offline-example.txt")
    scan, old = summary_of("vllm-offline-example-old.txt")
    assert len(old.per_position) == len(new.per_position) == 7
    assert old.per_position == pytest.approx(new.per_position, abs=1e-9)
    assert any("bonus slot" in n for n in scan.notes)
    assert not old.sufficient  # no counts printed: the sample size is unknown, never assumed


def test_real_world_variants_parse():
    """`394.48tokens/s` (no space) and `0.000,0.000` (no space) lines are in vllm-0.11.0.log."""
    text = (LOGS / "vllm-0.11.0.log").read_text()
    assert re.search(r"\dtokens/s", text) and re.search(r"\d\.\d{3},\d\.\d{3}", text)
    scan, s = summary_of("vllm-0.11.0.log")
    assert s.intervals == 45


def test_rotated_logs_are_read_oldest_first(cli):
    r = cli("logs", str(LOGS / "rotated" / "vllm.log"), str(LOGS / "rotated" / "vllm.log.1.gz"), "--format", "json")
    rep = json.loads(r.stdout)
    assert rep["acceptance"]["intervals"] == 45
    assert rep["acceptance"]["mean_acceptance_length"] == pytest.approx(EXPECTED["vllm-0.11.0.log"]["tau"], abs=5e-4)
    times = [p["timestamp"] for p in rep["acceptance"]["series"]]
    assert times == sorted(times)


def test_a_per_request_average_is_kept_as_such_and_flagged():
    """trtllm-bench's [AL] AVERAGE weights every request equally: reported as a per-request average, never
    as a drafts-weighted τ; with [DT]/[ADT] printed the drafts-weighted figure is computed and used instead."""
    _, al_only = summary_of("trtllm-bench-al-only.log")
    assert al_only.per_request and al_only.standing == "per-request"
    assert any("per-request average" in n for n in al_only.notes)
    assert to_jsonable(al_only)["mean_acceptance_length"] == pytest.approx(EXPECTED["trtllm-bench-al-only.log"]["tau"])
    _, full = summary_of("trtllm-bench.log")
    assert not full.per_request
    assert any("[AL] AVERAGE" in a["figure"] for a in full.alternatives)


def test_two_printed_acceptance_lengths_are_both_kept():
    """SGLang's bench block prints the server's cumulative length and this run's: the run's is used (it is
    1 + Accepted tokens / Drafts), the server's kept as an alternative."""
    _, s = summary_of("sglang-bench-serving-pr16694.txt")
    server = next(a for a in s.alternatives if "server" in a["figure"])
    assert server["value"] == pytest.approx(2.74) and s.mean_acceptance_length == pytest.approx(2.70)


def test_same_drafts_in_two_formats_are_counted_once():
    """llama.cpp's per-request print_timing lines and its cumulative statistics lines describe the same
    drafts; SGLang's request log and its Decode batch lines too: the exact ones are used, the others set aside
    (and said so), never summed."""
    for name in ("llamacpp-server-trace.log", "sglang-0.5.23-requests.log"):
        scan, s = summary_of(name)
        assert s.drafts == pytest.approx(EXPECTED[name]["drafts"])
        assert any("set aside" in n for n in scan.notes)
        assert any(d["standing"] == "set aside" and not d["used"] for d in s.format_details)


def test_k_is_derived_when_printed_nowhere_and_every_salvaged_line_is_reported():
    scan, s = summary_of("vllm-0.20-cut-lines.log")
    assert s.k == 5 and not s.k_candidates
    assert len(scan.salvaged) == 4
    assert all("the only k <= 32" in x.derived for x in scan.salvaged)
    assert {x.missing for x in scan.salvaged} == {"the per-position list and the average rate (line cut after Drafted)"}


def test_a_k_hint_from_the_caller_settles_lines_without_k():
    """The lead wires the launch command's k in: aggregate(scan, k_hint=...) or LogScan.apply_k_hint."""
    lines = [ln for ln in (LOGS / "vllm-0.20-cut-lines.log").read_text().splitlines() if "SpecDecoding" in ln]
    lines = [ln.replace("Mean acceptance length: ", "Mean acceptance lengthX ") for ln in lines]  # no mean: no k
    from dflash_doctor.parse import logscan

    scan = logscan.scan(logscan.Lines(lines, "x.log"))
    assert scan.malformed_count == 4  # (without a mean the 0.10.2 line is no known variant)
    good = (LOGS / "vllm-0.20-cut-lines.log").read_text().splitlines()
    scan = logscan.scan(logscan.Lines(good, "y.log"))
    s = aggregate(scan, k_hint=5, k_hint_source="the launch command")
    assert s.k == 5 and s.drafts == pytest.approx(EXPECTED["vllm-0.20-cut-lines.log"]["drafts"])
    # a hint the printed arithmetic refutes is refused, with a note
    scan = logscan.scan(logscan.Lines(good, "z.log"))
    s = aggregate(scan, k_hint=4, k_hint_source="the launch command")
    assert s.k == 5 and any("k = 4 from the launch command does not fit" in n for n in scan.notes)


def test_a_bench_block_with_only_some_lines_uses_the_k_hint():
    """A pasted bench block with its length and Draft tokens but not Drafts: drafts = Draft tokens / k, k from
    the caller (issue 13.5)."""
    from dflash_doctor.parse import logscan

    block = ["Acceptance length:                       2.50", "Draft tokens:                            3000"]
    scan = logscan.scan(logscan.Lines(block, "paste.txt"))
    s = aggregate(scan, k_hint=3, k_hint_source="the launch command")
    assert s.drafts == pytest.approx(1000) and s.mean_acceptance_length == pytest.approx(2.5)
    assert "Drafts" in scan.salvaged[0].missing and "k = 3 from the launch command" in scan.salvaged[0].derived


def test_sglang_decode_line_with_its_iteration_counter():
    """SGLang with LOG_FORWARD_ITERS prints `Decode batch [N], …` (scheduler metrics reporter)."""
    from dflash_doctor.parse import logscan

    line = (
        "[2026-01-05 10:00:{s:02d} DP1 TP1] Decode batch [{n}], #running-req: 8, #token: 4000, token usage: 0.02, "
        "accept len: 3.00, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0"
    )
    s = aggregate(logscan.scan(logscan.Lines([line.format(s=i, n=40 * i) for i in range(3)], "x.log")))
    assert s.intervals == 3 and s.mean_acceptance_length == pytest.approx(3.0) and s.engines == ("DP1",)


def test_sglang_json_request_log_and_a_forged_meta_info_in_its_text():
    """The JSON form of SGLang's request log (log_json 'request.finished'): only the response's own
    meta_info counts, not a look-alike in the prompt or the generated text."""
    import json as _json

    from dflash_doctor.parse import logscan

    rec = {
        "timestamp": "2026-01-05T10:00:00",
        "event": "request.finished",
        "rid": "r1",
        "obj": {"text": "'spec_verify_ct': 1, 'completion_tokens': 999999"},
        "out": {
            "text": "'meta_info': {'spec_verify_ct': 1}",
            "meta_info": {"completion_tokens": 300, "spec_verify_ct": 100},
        },
    }
    scan = logscan.scan(logscan.Lines(["[2026-01-05 10:00:00] " + _json.dumps(rec)], "x.log"))
    s = aggregate(scan)
    assert s.mean_acceptance_length == pytest.approx(3.0) and s.drafts == 100


def test_llamacpp_old_line_without_a_mean_gives_a_rate_and_uses_the_k_hint():
    from dflash_doctor.parse import logscan

    lines = ["slot print_timing: id  0 | task 7 | draft acceptance rate = 0.57576 (   57 accepted /    99 generated)"]
    scan = logscan.scan(logscan.Lines(lines, "x.log"))
    s = aggregate(scan)
    assert s.mean_acceptance_length != s.mean_acceptance_length and s.draft_acceptance_rate == pytest.approx(57 / 99)
    scan = logscan.scan(logscan.Lines(lines, "y.log"))
    s = aggregate(scan, k_hint=3, k_hint_source="--draft-max")
    assert s.drafts == pytest.approx(33) and s.mean_acceptance_length == pytest.approx(1 + 57 / 33)
    # a draft stops before k below --draft-p-min: 33 is the fewest drafts 99 tokens can be, τ the most it can be
    assert s.standing == "upper-bound"


def test_a_trtllm_word_inside_another_json_is_no_iteration_record():
    from dflash_doctor.parse import logscan

    fake = (
        '{"prompt": "\\"specDecodingStats\\": {\\"numDraftTokens\\": 4, \\"numAcceptedTokens\\": 4, '
        '\\"numRequestsWithDraftTokens\\": 1}"}'
    )
    assert aggregate(logscan.scan(logscan.Lines([fake], "x.log"))) is None


def test_trtllm_bench_k_is_not_guessed_from_rounded_figures(tmp_path):
    """[AL] and [DAR] are printed to two decimals: at AL 1.21, DAR 0.01 every k from 14 to 43 fits, so k is not
    derived (it was: 21, τ 1.294 for a true 1.21 at k 15); at AL 2.62, DAR 0.54 only k 3 fits."""
    from dflash_doctor.parse.formats.trtllm_bench import _k_candidates

    assert _k_candidates(1.21, 0.01) == []
    assert _k_candidates(2.62, 0.54) == [3]
    assert _k_candidates(1.70, 0.05) == [13, 14, 15]  # several: the caller's k decides, else none


def test_old_offline_curve_without_its_mean_drops_the_bonus_slot(tmp_path):
    """The old offline example printed `acceptance at token 0` for the bonus slot (always 1.00); a paste of the
    curve alone reads it as k 4, τ 3.55; a first draft position accepted every time while the next is not is that
    slot: k 3, τ 2.55."""
    from dflash_doctor.parse import logscan

    lines = [f"acceptance at token {i}:{r:.2f}" for i, r in enumerate([1.0, 0.75, 0.5, 0.3])]
    s = aggregate(logscan.scan(logscan.Lines(lines, "x.log")))
    assert s is not None and s.k == 3 and s.mean_acceptance_length == pytest.approx(2.55)
