"""Property tests for checkpoint inspection: config.json, safetensors headers, shard indexes and
model cards. Whatever the bytes, the readers return facts or a one-line error (UsageError /
ShardFacts.error) — never an exception — and never read more than their caps."""

from __future__ import annotations

import json
import posixpath
import struct

from hypothesis import given
from hypothesis import strategies as st

from dflash_doctor.errors import DoctorError
from dflash_doctor.evidence.serialise import to_jsonable
from dflash_doctor.models import facts as facts_mod
from dflash_doctor.models.facts import drafter_facts, read_card, target_facts
from dflash_doctor.models.readers.fields import LIMITS
from dflash_doctor.models.safetensors_header import MAX_HEADER_BYTES, read_shard, read_weights
from tests.hardening import tally
from tests.hardening.strategies import json_value, nasty_text


class MemFiles:
    """An in-memory FileAccess that records how many bytes each read asked for."""

    name = "mem"

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.asked: list[int] = []

    def read(self, path, max_bytes):
        self.asked.append(max_bytes)
        if path not in self.files:
            raise FileNotFoundError(2, "No such file", path)
        return self.files[path][:max_bytes]

    def size(self, path):
        if path not in self.files:
            raise FileNotFoundError(2, "No such file", path)
        return len(self.files[path])

    def list_dir(self, path):
        if path != "/ckpt":
            raise NotADirectoryError(20, "Not a directory", path)
        return sorted(posixpath.basename(p) for p in self.files)

    def is_dir(self, path):
        return path == "/ckpt"

    def exists(self, path):
        return path == "/ckpt" or path in self.files


CONFIG_KEYS = sorted(
    set(LIMITS)
    | {
        "architectures",
        "model_type",
        "dflash_config",
        "target_layer_ids",
        "eagle_aux_hidden_state_layer_ids",
        "layer_types",
        "use_sliding_window",
        "rope_theta",
        "rope_parameters",
        "rope_scaling",
        "partial_rotary_factor",
        "text_config",
        "speculators_model_type",
        "use_swa",
        "causal",
        "is_causal",
        "torch_dtype",
        "dtype",
        "quantization_config",
        "num_nextn_predict_layers",
        "medusa_num_heads",
    }
)
ARCHS = ["DFlashDraftModel", "DFlash2DraftModel", "Eagle3LlamaForCausalLM", "Qwen3ForCausalLM", "MedusaModel"]
hostile_number = st.one_of(
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 1e308, True, False, None, "15", [], {}]),
)
field_value = st.one_of(
    hostile_number,
    json_value,
    st.lists(st.one_of(st.integers(-5, 100), hostile_number), max_size=40),
    st.lists(st.sampled_from(["sliding_attention", "full_attention", "linear_attention", "x"]), max_size=64),
    nasty_text,
)


@st.composite
def config_dict(draw):
    cfg = draw(st.dictionaries(st.sampled_from(CONFIG_KEYS), field_value, max_size=14))
    if draw(st.booleans()):
        cfg["architectures"] = draw(st.lists(st.one_of(st.sampled_from(ARCHS), nasty_text), max_size=3))
    if draw(st.booleans()):
        cfg["dflash_config"] = draw(st.dictionaries(st.sampled_from(CONFIG_KEYS), field_value, max_size=6))
    if draw(st.booleans()):
        cfg["text_config"] = draw(st.dictionaries(st.sampled_from(CONFIG_KEYS), field_value, max_size=6))
    return cfg


def _config_bytes(draw_obj) -> bytes:
    return json.dumps(draw_obj).encode()


def _check_facts(fn, files):
    try:
        facts = fn("/ckpt", files)
    except DoctorError as exc:  # a one-line, user-facing refusal is the allowed failure
        assert exc.message and "\n" not in exc.message
        return None
    json.dumps(to_jsonable(facts), allow_nan=False)
    for key in ("num_hidden_layers", "hidden_size", "vocab_size", "block_size", "num_target_layers"):
        v = getattr(facts, key, None)
        assert v is None or (isinstance(v, int) and 0 <= v <= LIMITS[key]), (key, v)
    return facts


@given(config_dict())
def test_drafter_config_of_any_shape_gives_facts_or_one_line_error(cfg):
    tally.example("config-json:drafter")
    files = MemFiles({"/ckpt/config.json": _config_bytes(cfg)})
    facts = _check_facts(drafter_facts, files)
    if facts is not None:
        assert all(0 <= la.index < (facts.num_hidden_layers or 0) for la in facts.layers)
        assert facts.block_size is None or facts.block_size >= 2


@given(config_dict())
def test_target_config_of_any_shape_gives_facts_or_one_line_error(cfg):
    tally.example("config-json:target")
    _check_facts(target_facts, MemFiles({"/ckpt/config.json": _config_bytes(cfg)}))


@given(
    st.one_of(
        st.binary(max_size=300),
        json_value.map(lambda v: json.dumps(v).encode()),
        st.sampled_from(
            [
                b"",
                b"{",
                b"\xff\xfe{}",
                b"[]" * 1000,
                b"{" * 100000 + b"}" * 100000,
                b'{"a": ' + b"9" * 5000 + b"}",
                b'{"num_hidden_layers": 1e400}',
                b"NaN",
                b'{"hidden_size": NaN, "rope_theta": Infinity}',
                b'"\\ud800"',
            ]
        ),
    )
)
def test_config_bytes_of_any_kind_are_refused_in_one_line(raw):
    tally.example("config-json:bytes")
    files = MemFiles({"/ckpt/config.json": raw})
    _check_facts(drafter_facts, files)
    _check_facts(target_facts, files)


@given(config_dict())
def test_oversized_config_is_refused_without_reading_it_whole(cfg):
    tally.example("config-json:oversized")
    raw = _config_bytes(cfg) + b" " * (facts_mod.MAX_CONFIG_BYTES + 10)
    files = MemFiles({"/ckpt/config.json": raw})
    assert _check_facts(drafter_facts, files) is None
    assert max(files.asked) <= facts_mod.MAX_CONFIG_BYTES + 1


HOSTILE_JSON = [
    b'{"a": ' + b"9" * 5000 + b"}",
    b"[" * 100000 + b"]" * 100000,
    b'{"w": {"dtype": "F32", "shape": [1e400], "data_offsets": [0, 1e400]}}',
    b'{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, ' + b"9" * 30 + b"]}}",
    b'{"\\ud800": {}}',
    b"NaN",
    b"{}" + b" " * 100,
]
tensor_meta = st.one_of(
    st.fixed_dictionaries(
        {
            "dtype": st.sampled_from(["BF16", "F32", "I8", "???", ""]),
            "shape": st.lists(st.integers(-3, 1 << 41), max_size=4),
            "data_offsets": st.lists(st.integers(-3, 1 << 51), min_size=0, max_size=3),
        }
    ),
    json_value,
)


@st.composite
def safetensors_blob(draw):
    header = draw(
        st.dictionaries(
            st.one_of(st.sampled_from(["__metadata__", "fc.weight", "layers.0.x"]), st.text(max_size=20)),
            tensor_meta,
            max_size=6,
        )
    )
    body = json.dumps(header).encode()
    how = draw(
        st.sampled_from(
            ("exact", "lying-length", "huge-length", "short", "garbage", "not-json", "padded", "hostile-json")
        )
    )
    if how == "hostile-json":
        body = draw(st.sampled_from(HOSTILE_JSON))
    n = len(body)
    if how == "lying-length":
        n = draw(st.integers(0, 2 * n + 16))
    elif how == "huge-length":
        n = draw(st.sampled_from([MAX_HEADER_BYTES + 1, 2**63 - 1, 2**64 - 1, 2**40]))
    elif how == "not-json":
        body = draw(st.binary(max_size=64))
        n = len(body)
    elif how == "garbage":
        return draw(st.binary(max_size=64))
    blob = struct.pack("<Q", n) + body
    if how == "short":
        blob = blob[: draw(st.integers(0, len(blob)))]
    elif how == "padded":
        blob += b"\0" * draw(st.integers(0, 256))
    return blob


@given(safetensors_blob())
def test_safetensors_header_of_any_shape_is_facts_or_error_and_capped(blob):
    tally.example("safetensors-header")
    files = MemFiles({"/ckpt/model.safetensors": blob})
    shard, tensors = read_shard(files, "/ckpt/model.safetensors")
    assert max(files.asked) <= 8 + MAX_HEADER_BYTES, "read more than the header cap"
    assert shard.tensors == len(tensors) >= 0
    json.dumps(to_jsonable(shard), allow_nan=False)
    if shard.header_bytes is not None and shard.header_bytes > MAX_HEADER_BYTES:
        assert shard.error and not tensors
    for t in tensors.values():
        assert all(isinstance(d, int) and d >= 0 for d in t.shape)


@given(
    st.one_of(
        json_value,
        st.fixed_dictionaries(
            {
                "weight_map": st.dictionaries(
                    st.text(max_size=10),
                    st.one_of(
                        st.sampled_from(
                            [
                                "model-00001-of-00002.safetensors",
                                "../../etc/passwd",
                                "/etc/shadow",
                                "..",
                                ".",
                                "",
                                "a/b.safetensors",
                            ]
                        ),
                        json_value,
                    ),
                    max_size=5,
                )
            }
        ),
    )
)
def test_shard_index_never_names_a_file_outside_the_checkpoint(index):
    tally.example("safetensors-index")
    files = MemFiles(
        {
            "/ckpt/model.safetensors.index.json": json.dumps(index).encode(),
            "/ckpt/model-00001-of-00002.safetensors": struct.pack("<Q", 2) + b"{}",
        }
    )
    opened: list[str] = []
    real_read = files.read

    def read(path, max_bytes):
        opened.append(path)
        return real_read(path, max_bytes)

    files.read = read
    wf = read_weights(files, "/ckpt", files.list_dir("/ckpt"))
    json.dumps(to_jsonable(wf), allow_nan=False)
    assert all(posixpath.dirname(p) == "/ckpt" for p in opened), opened


@given(
    st.lists(
        st.one_of(
            nasty_text,
            st.sampled_from(
                [
                    "**still under training**",
                    "## Preview release",
                    "non-thinking mode only",
                    "\x1b]8;;http://x\x07training",
                ]
            ),
        ),
        max_size=30,
    )
)
def test_model_card_warnings_are_plain_single_lines(lines):
    tally.example("model-card")
    for w in read_card("\n".join(lines)):
        assert "\x1b" not in w.line and "\n" not in w.line and "\u202e" not in w.line
        assert len(w.line) <= 200
