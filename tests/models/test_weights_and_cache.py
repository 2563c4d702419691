"""Safetensors headers read safely; repo ids resolved offline in an HF cache; the Host-based reader."""

from __future__ import annotations

import errno
import json
import struct

import pytest

from dflash_doctor.errors import DoctorError, ExitCode
from dflash_doctor.hosts.interface import CommandResult, Host
from dflash_doctor.models.facts import drafter_facts
from dflash_doctor.models.file_access import HostFiles, LocalFiles
from dflash_doctor.models.safetensors_header import read_shard, read_weights
from dflash_doctor.settings import Settings

from .helpers import hf_cache_repo, safetensors_bytes

TINY = {
    "architectures": ["DFlashDraftModel"],
    "hidden_size": 8,
    "num_hidden_layers": 1,
    "block_size": 4,
    "num_target_layers": 4,
    "vocab_size": 100,
    "dflash_config": {"mask_token_id": 99, "target_layer_ids": [1, 2]},
}
TENSORS = {"fc.weight": ("F32", [8, 16]), "layers.0.mlp.up_proj.weight": ("F32", [16, 8])}


def shard(tmp_path, content: bytes, name="model.safetensors"):
    p = tmp_path / name
    p.write_bytes(content)
    return read_shard(LocalFiles(), str(p))


def test_complete_shard_reads_names_shapes_and_is_not_truncated(tmp_path):
    facts, tensors = shard(tmp_path, safetensors_bytes(TENSORS))
    assert not facts.truncated and facts.error is None and tensors["fc.weight"].shape == (8, 16)


def test_short_data_section_is_a_truncated_download(tmp_path):
    facts, tensors = shard(tmp_path, safetensors_bytes(TENSORS, cut=100))
    assert facts.truncated and not facts.header_only and "truncated download" in facts.error
    assert tensors  # the header itself was still read


def test_header_only_file_is_reported_as_truncated_not_a_crash(tmp_path):
    facts, tensors = shard(tmp_path, safetensors_bytes(TENSORS, data=False))
    assert facts.truncated and facts.header_only and "header only" in facts.error and len(tensors) == 2


def test_header_claiming_10_gb_is_refused_without_reading_it(tmp_path):
    facts, tensors = shard(tmp_path, struct.pack("<Q", 10 * 10**9) + b"{}")
    assert "claims 10,000,000,000 bytes" in facts.error and tensors == {}


def test_header_longer_than_the_file_is_truncation(tmp_path):
    facts, _ = shard(tmp_path, struct.pack("<Q", 5000) + b'{"a":')
    assert facts.truncated and "truncated" in facts.error


def test_non_json_header_is_named(tmp_path):
    facts, _ = shard(tmp_path, struct.pack("<Q", 12) + b"hello world!")
    assert "not JSON" in facts.error


def test_json_header_that_is_not_an_object_is_named(tmp_path):
    facts, _ = shard(tmp_path, struct.pack("<Q", 9) + b"[1, 2, 3]")
    assert "not an object" in facts.error


def test_file_shorter_than_the_length_prefix(tmp_path):
    facts, _ = shard(tmp_path, b"\x01\x02")
    assert facts.truncated and "shorter than the 8-byte" in facts.error


def test_malformed_tensor_entries_are_skipped_and_named(tmp_path):
    js = json.dumps(
        {
            "good": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
            "bad": {"dtype": "F32", "shape": "huge", "data_offsets": [0, 4]},
        }
    ).encode()
    facts, tensors = shard(tmp_path, struct.pack("<Q", len(js)) + js + b"\0" * 4)
    assert list(tensors) == ["good"] and "malformed" in facts.error


def test_sharded_checkpoint_names_the_truncated_and_missing_shards(fixtures_dir, tmp_path):
    w = drafter_facts(str(fixtures_dir / "models" / "tiny-dflash-truncated")).weights
    assert w.index_file == "model.safetensors.index.json"
    assert w.truncated == ("model-00002-of-00002.safetensors",)
    names = ["model.safetensors.index.json", "a.safetensors"]
    (tmp_path / names[0]).write_text(json.dumps({"weight_map": {"x": "a.safetensors", "y": "b.safetensors"}}))
    (tmp_path / "a.safetensors").write_bytes(safetensors_bytes({"x": ("F32", [2])}))
    w = read_weights(LocalFiles(), str(tmp_path), names)
    assert any("b.safetensors is listed" in p for p in w.problems)


def test_pickle_weights_are_never_opened(tmp_path):
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04 pickle that would run code")
    w = read_weights(LocalFiles(), str(tmp_path), ["pytorch_model.bin"])
    assert w.format == "pickle" and w.tensors == {} and "never unpickled" in w.problems[0]


# --- the Hugging Face cache --------------------------------------------------------------------


def test_repo_id_resolves_offline_through_hf_hub_cache(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    hf_cache_repo(
        cache,
        "z-lab/Tiny-DFlash",
        {
            "config.json": json.dumps(TINY).encode(),
            "model.safetensors": safetensors_bytes(TENSORS),
            "README.md": b"This drafter is a preview.",
        },
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    d = drafter_facts("z-lab/Tiny-DFlash", LocalFiles(Settings.from_env({"HF_HUB_CACHE": str(cache)}).hf_cache))
    assert d.target_layer_ids == (1, 2) and "fc.weight" in d.weights.tensors and not d.weights.problems
    assert [c.kind for c in d.card] == ["preview"]


def test_hf_home_is_honoured_when_hf_hub_cache_is_unset(tmp_path, monkeypatch):
    hf_cache_repo(tmp_path / "home" / "hub", "org/m", {"config.json": json.dumps(TINY).encode()})
    settings = Settings.from_env({"HF_HOME": str(tmp_path / "home")})
    assert drafter_facts("org/m", LocalFiles(settings.hf_cache), with_weights=False).block_size == 4


def test_repo_not_in_cache_says_how_to_fetch_it(tmp_path, monkeypatch):
    with pytest.raises(DoctorError) as exc:
        drafter_facts("z-lab/Qwen3-8B-DFlash-b16", LocalFiles(str(tmp_path / "empty")))
    assert exc.value.exit_code == ExitCode.NOT_CHECKED
    assert "not in the local Hugging Face cache" in exc.value.message
    assert "hf download z-lab/Qwen3-8B-DFlash-b16" in exc.value.hint


def test_symlink_loop_in_the_cache_is_named_not_called_missing(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    snap = hf_cache_repo(cache, "org/loop", {})
    blob = snap.parent.parent / "blobs" / "deadbeef"
    (snap / "config.json").symlink_to("../../blobs/deadbeef")
    blob.symlink_to(snap / "config.json")
    with pytest.raises(DoctorError) as exc:
        drafter_facts("org/loop", LocalFiles(str(cache)))
    assert "symlink loop" in exc.value.message


# --- reading through a Host ----------------------------------------------------------------------


class RecordedHost(Host):
    """A host whose files are a dict; paths in `denied` raise PermissionError like an unreadable file."""

    name = "ssh://gpu-box"

    def __init__(self, files: dict[str, bytes], denied: set[str] = frozenset()):
        self.files, self.denied = files, denied

    def run(self, argv, timeout=30.0, max_bytes=16 << 20, stdin=None):
        path = argv[-1]
        if path in self.denied:
            return CommandResult(tuple(argv), 1, b"", b"stat: cannot stat: Permission denied")
        if path not in self.files:
            return CommandResult(tuple(argv), 1, b"", b"stat: cannot stat: No such file or directory")
        return CommandResult(tuple(argv), 0, str(len(self.files[path])).encode(), b"")

    def read_file(self, path, max_bytes=16 << 20, timeout=30.0):
        if path in self.denied:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        if path not in self.files:
            raise FileNotFoundError(errno.ENOENT, "No such file", path)
        return self.files[path][:max_bytes]

    def list_dir(self, path, timeout=30.0):
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix) :].split("/")[0] for p in self.files if p.startswith(prefix)}
        if not names:
            raise FileNotFoundError(errno.ENOENT, "No such directory", path)
        return sorted(names)


def test_the_same_reader_works_through_a_host():
    host = RecordedHost(
        {
            "/models/d/config.json": json.dumps(TINY).encode(),
            "/models/d/model.safetensors": safetensors_bytes(TENSORS, cut=8),
        }
    )
    d = drafter_facts("/models/d", HostFiles(host))
    assert d.target_layer_ids == (1, 2) and d.weights.truncated == ("model.safetensors",)


def test_unreadable_files_are_reported_not_raised_as_tracebacks():
    host = RecordedHost(
        {"/m/config.json": b"{}", "/m/model.safetensors": b""}, denied={"/m/config.json", "/m/model.safetensors"}
    )
    with pytest.raises(DoctorError, match="permission denied"):
        drafter_facts("/m", HostFiles(host))
    host.denied = {"/m/model.safetensors"}
    host.files["/m/config.json"] = json.dumps(TINY).encode()
    d = drafter_facts("/m", HostFiles(host))
    assert any("permission denied" in p for p in d.weights.problems)


def test_host_files_over_the_real_local_host_agree_with_local_files(fixtures_dir):
    from dflash_doctor.hosts.local import LocalHost
    from dflash_doctor.models.file_access import files_for

    path = str(fixtures_dir / "models" / "tiny-dflash-truncated")
    via_host = drafter_facts(path, HostFiles(LocalHost()))
    direct = drafter_facts(path, files_for(None))
    assert via_host.weights.truncated == direct.weights.truncated == ("model-00002-of-00002.safetensors",)
    assert via_host.layers == direct.layers
