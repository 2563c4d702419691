"""Hypothesis strategies for hostile and mangled engine evidence.

Valid lines are generated from the formats in shared/reference/engine-logs.md (consistent counts,
so a parser that understands the format must get the numbers right); mutated lines start from a
valid one and break it the ways real logs break: truncation, a number out of range or absurdly
long, a field dropped or doubled, ANSI colour, stray controls, a wrapper prefix.
"""

from __future__ import annotations

import string

from hypothesis import strategies as st

# Text a terminal or a parser may choke on: escapes, bidi, NULs, markup, format characters.
NASTY_CHARS = (
    "\x1b",
    "\x1b[31m",
    "\x1b]8;;http://evil.example\x07",
    "\x1b]52;c;SGVsbG8=\x07",
    "\x9b2J",
    "\x00",
    "\x07",
    "\x08",
    "\r",
    "\u202e",
    "\u2066",
    "\u200f",
    "\ufeff",
    "\ud800",
    "[red]",
    "[/]",
    "[link=http://evil]",
    "%s",
    "%n",
    "{",
    "}",
    "'",
    '"',
    "\\",
    "|",
    "`",
    "<script>",
    "&#x202e;",
    "\N{GREEK SMALL LETTER TAU}",
    "\u0301",
    "\uffff",
)

nasty_text = st.lists(st.one_of(st.sampled_from(NASTY_CHARS), st.text(max_size=12)), max_size=12).map("".join)

NUMBERS = (
    "0",
    "-1",
    "1e308",
    "1e999",
    "-0.0",
    "NaN",
    "inf",
    "1" * 5000,
    str(10**400),
    "4294967296",
    "18446744073709551617",
    "0.000",
    "1.",
    ".5",
    "00001",
    "1,000",
    "",
    "abc",
)

PREFIXES = (
    "",
    "INFO 05-14 09:13:47 [metrics.py:101] ",
    "(APIServer pid=1843) INFO 05-14 09:13:47 [metrics.py:101] ",
    "\x1b[1;36m(APIServer pid=722408)\x1b[0;0m INFO 05-14 09:13:47 [loggers.py:123] ",
    "INFO 07-24 04:00:31 metrics.py:316] ",
    "vllm-1  | INFO 05-12 10:11:12 [metrics.py:96] ",
    "2026-04-19 17:36:42.061 | ",
    "Nov 02 10:00:00 host vllm[123]: ",
    "(EngineCore_DP0 pid=99) INFO 05-14 09:13:47 [metrics.py:101] ",
)


@st.composite
def interval_counts(draw):
    """A consistent interval: k, drafts and non-increasing per-position accepted counts."""
    k = draw(st.integers(1, 16))
    drafts = draw(st.integers(0, 5000))
    counts, cap = [], drafts
    for _ in range(k):
        c = draw(st.integers(0, cap))
        counts.append(c)
        cap = c
    return k, drafts, counts


def vllm_v1_0102(k: int, drafts: int, counts: list[int]) -> str:
    accepted, drafted = sum(counts), drafts * k
    mean = 1 + accepted / drafts if drafts else 1.0
    rates = ", ".join(f"{c / drafts if drafts else 0:.3f}" for c in counts)
    rate = accepted / drafted * 100 if drafted else 0.0
    return (
        f"SpecDecoding metrics: Mean acceptance length: {mean:.2f}, Accepted throughput: {accepted / 10:.2f} "
        f"tokens/s, Drafted throughput: {drafted / 10:.2f} tokens/s, Accepted: {accepted} tokens, Drafted: "
        f"{drafted} tokens, Per-position acceptance rate: {rates}, Avg Draft acceptance rate: {rate:.1f}%"
    )


def vllm_v1_09(k: int, drafts: int, counts: list[int], bonus: bool = True) -> str:
    accepted, drafted = sum(counts), drafts * k
    mean = (1 if bonus else 0) + (accepted / drafts if drafts else 0)
    rates = ", ".join(f"{c / drafts if drafts else 0:.3f}" for c in counts)
    rate = accepted / drafted * 100 if drafted else 0.0
    return (
        f"SpecDecoding metrics: Draft acceptance rate: {rate:.1f}%, Mean acceptance length: {mean:.2f}, "
        f"Accepted: {accepted} tokens, Drafted: {drafted} tokens, Per-position acceptance rate: {rates}"
    )


def vllm_v1_083(k: int, drafts: int, counts: list[int]) -> str:
    accepted, drafted = sum(counts), drafts * k
    rate = accepted / drafted * 100 if drafted else 0.0
    return (
        f"SpecDecoding metrics: Draft acceptance rate: {rate:.1f}%, "
        f"Accepted: {accepted} tokens, Drafted: {drafted} tokens"
    )


def vllm_v0(k: int, drafts: int, counts: list[int]) -> str:
    accepted, drafted = sum(counts), drafts * k
    emitted = drafts + accepted
    rate = accepted / drafted if drafted else 0.0
    eff = emitted / (drafts * (k + 1)) if drafts else 0.0
    return (
        f"Speculative metrics: Draft acceptance rate: {rate:.3f}, System efficiency: {eff:.3f}, Number of "
        f"speculative tokens: {k}, Number of accepted tokens: {accepted}, Number of draft tokens: {drafted}, "
        f"Number of emitted tokens: {emitted}."
    )


def sglang(k: int, drafts: int, counts: list[int], comma: bool = True) -> str:
    mean = 1 + (sum(counts) / drafts if drafts else 0)
    sep = "," if comma else "."
    rate = f" accept rate: {(mean - 1) / k:.2f}," if comma else ""
    return (
        f"[2025-10-22 10:27:57 TP0] Decode batch{sep} #running-req: 1, #token: 108, token usage: 0.00, "
        f"accept len: {mean:.2f},{rate} cuda graph: True, gen throughput (token/s): 0.39, #queue-req: 0"
    )


FORMATS = {
    "vllm-v1-0.10.2": vllm_v1_0102,
    "vllm-v1-0.9": vllm_v1_09,
    "vllm-v1-0.8.3": vllm_v1_083,
    "vllm-v0": vllm_v0,
    "sglang": sglang,
}


@st.composite
def valid_line(draw, formats=tuple(FORMATS)):
    fmt = draw(st.sampled_from(formats))
    k, drafts, counts = draw(interval_counts())
    return fmt, (k, drafts, counts), draw(st.sampled_from(PREFIXES)) + FORMATS[fmt](k, drafts, counts)


@st.composite
def mutated_line(draw):
    """A valid line broken in one to four ways."""
    _, _, line = draw(valid_line())
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(("number", "truncate", "delete", "insert", "duplicate", "nospace", "colour")))
        if not line:
            break
        i = draw(st.integers(0, len(line)))
        if op == "number":
            digits = [j for j, c in enumerate(line) if c.isdigit()]
            if digits:
                j = draw(st.sampled_from(digits))
                end = j
                while end < len(line) and (line[end].isdigit() or line[end] == "."):
                    end += 1
                line = line[:j] + draw(st.sampled_from(NUMBERS)) + line[end:]
        elif op == "truncate":
            line = line[:i]
        elif op == "delete":
            j = draw(st.integers(i, min(len(line), i + 40)))
            line = line[:i] + line[j:]
        elif op == "insert":
            line = line[:i] + draw(nasty_text) + line[i:]
        elif op == "duplicate":
            j = draw(st.integers(i, min(len(line), i + 60)))
            line = line[:j] + line[i:j] + line[j:]
        elif op == "nospace":
            line = line.replace(", ", ",").replace(" tokens/s", "tokens/s")
        elif op == "colour":
            line = line[:i] + "\x1b[0;0m" + line[i:]
    return line


# A Python-literal value as vLLM's `non-default args` repr holds them, plus hostile shapes.
py_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=30),
    st.binary(max_size=8),
    st.complex_numbers(max_magnitude=1e6),
)
py_value = st.recursive(
    py_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.frozensets(st.integers(0, 5), max_size=3).map(set),
        st.dictionaries(st.text(max_size=12), inner, max_size=4),
    ),
    max_leaves=20,
)

ARG_KEYS = (
    "model",
    "model_tag",
    "host",
    "port",
    "api_key",
    "hf_token",
    "speculative_config",
    "max_model_len",
    "tensor_parallel_size",
    "served_model_name",
    "tokenizer",
    "revision",
    "chat_template",
)
SPEC_KEYS = ("method", "model", "num_speculative_tokens", "draft_tensor_parallel_size", "max_model_len")


@st.composite
def non_default_args(draw):
    """A non-default args dict, repr'd the way vLLM logs it (or mangled)."""
    spec = draw(
        st.dictionaries(
            st.sampled_from(SPEC_KEYS),
            st.one_of(py_value, st.sampled_from(("dflash", "eagle3", "mtp", 15, -1, 10**30))),
            max_size=5,
        )
    )
    args = draw(st.dictionaries(st.one_of(st.sampled_from(ARG_KEYS), st.text(max_size=10)), py_value, max_size=8))
    if draw(st.booleans()):
        args["speculative_config"] = spec
    text = repr(args)
    how = draw(st.sampled_from(("as-is", "truncate", "nest", "unhashable", "junk")))
    if how == "truncate" and text:
        text = text[: draw(st.integers(0, len(text)))]
    elif how == "nest":
        depth = draw(st.integers(50, 3000))
        text = "{'a': " + "[" * depth + "]" * depth + "}"
    elif how == "unhashable":
        text = draw(st.sampled_from(("{[1]: 2}", "{{}: 1}", "{'a': {[]: 1}}", "{'a': {1, []}}", "{(1, [2]): 3}")))
    elif how == "junk":
        text = "{" + draw(st.text(alphabet=string.printable, max_size=60)) + "}"
    return text


# JSON values for config.json fuzzing.
json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=10), inner, max_size=5)),
    max_leaves=25,
)


@st.composite
def hostile_fields_line(draw):
    """The vLLM >= 0.10.2 line with each number drawn from valid values or hostile spellings."""

    def num(valid):
        return draw(st.one_of(st.just(valid), st.sampled_from(NUMBERS), st.integers(-(10**20), 10**20).map(str)))

    k, drafts, counts = draw(interval_counts())
    accepted, drafted = sum(counts), drafts * k
    rates = ", ".join(num(f"{c / drafts if drafts else 0:.3f}") for c in counts)
    return (
        f"SpecDecoding metrics: Mean acceptance length: {num(f'{1 + (accepted / drafts if drafts else 0):.2f}')}, "
        f"Accepted throughput: {num('1.00')} tokens/s, Drafted throughput: {num('2.00')} tokens/s, "
        f"Accepted: {num(str(accepted))} tokens, Drafted: {num(str(drafted))} tokens, "
        f"Per-position acceptance rate: {rates}, Avg Draft acceptance rate: {num('1.0')}%"
    )
