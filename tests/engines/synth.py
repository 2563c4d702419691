"""Small synthetic engine installs, one per behaviour the source analysis must tell apart.

Written here from scratch (no engine code is copied): each file holds only the few constructs the
probes read — a runner function that turns dflash_config.target_layer_ids into capture layers, a
target model whose layer loop captures hidden states, a DFlash drafter module that does or does not
read layer_types, the runner-selection rules — in the shapes the real releases use, plus decoys the
probes must not be fooled by (a +1 on a length, a comment that says +1). `build_vllm` / `build_sglang`
write a site directory (`<root>/vllm/…`, `<root>/vllm-X.dist-info/METADATA`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# --- vLLM ------------------------------------------------------------------------------------------

RUNNER = {
    # what the V1 runner does with dflash_config.target_layer_ids
    "raw": """
    def _get_eagle3_aux_layers_from_config(self):
        hf_config = self.speculative_config.draft_model_config.hf_config
        layer_ids = getattr(hf_config, "eagle_aux_hidden_state_layer_ids", None)
        if not layer_ids:
            dflash_config = getattr(hf_config, "dflash_config", None)
            if dflash_config and isinstance(dflash_config, dict):
                layer_ids = dflash_config.get("target_layer_ids")
        # +1 would be needed here (this comment must not count)
        if layer_ids and isinstance(layer_ids, (list, tuple)):
            return tuple(layer_ids)
        return None
""",
    "plus-one": """
    def _get_eagle3_aux_layers_from_config(self):
        hf_config = self.speculative_config.draft_model_config.hf_config
        layer_ids = getattr(hf_config, "eagle_aux_hidden_state_layer_ids", None)
        if not layer_ids:
            dflash_config = getattr(hf_config, "dflash_config", None)
            eagle_config = getattr(hf_config, "eagle_config", None)
            if dflash_config and isinstance(dflash_config, dict):
                layer_ids = [
                    i + 1 for i in (dflash_config.get("target_layer_ids") or [])
                ]
            if eagle_config and isinstance(eagle_config, dict):
                layer_ids = eagle_config.get("eagle_aux_hidden_state_layer_ids")
        if layer_ids and isinstance(layer_ids, (list, tuple)):
            return tuple(layer_ids)
        return None
""",
    # a hand patch of the raw release: the +1 on its own line, after the read
    "patched-line": """
    def _get_eagle3_aux_layers_from_config(self):
        hf_config = self.speculative_config.draft_model_config.hf_config
        layer_ids = getattr(hf_config, "eagle_aux_hidden_state_layer_ids", None)
        if not layer_ids:
            dflash_config = getattr(hf_config, "dflash_config", None)
            if dflash_config and isinstance(dflash_config, dict):
                layer_ids = dflash_config.get("target_layer_ids")
                layer_ids = [i + 1 for i in layer_ids or []]
        if layer_ids and isinstance(layer_ids, (list, tuple)):
            return tuple(layer_ids)
        return None
""",
    # the same fix written as a loop that accumulates
    "patched-loop": """
    def _get_eagle3_aux_layers_from_config(self):
        hf_config = self.speculative_config.draft_model_config.hf_config
        layer_ids = getattr(hf_config, "eagle_aux_hidden_state_layer_ids", None)
        if not layer_ids:
            dflash_config = getattr(hf_config, "dflash_config", None) or {}
            raw = dflash_config.get("target_layer_ids") or []
            shifted = []
            for layer_id in raw:
                shifted.append(layer_id + 1)
            layer_ids = shifted
        if layer_ids and isinstance(layer_ids, (list, tuple)):
            return tuple(layer_ids)
        return None
""",
    # a +1 only on one path: the probe cannot say which one runs
    "conditional": """
    def _get_eagle3_aux_layers_from_config(self):
        hf_config = self.speculative_config.draft_model_config.hf_config
        layer_ids = hf_config.dflash_config.get("target_layer_ids")
        if self.shift_taps:
            layer_ids = [i + 1 for i in layer_ids]
        return tuple(layer_ids)
""",
    # handed to a helper the probe cannot see into
    "opaque": """
    def _get_eagle3_aux_layers_from_config(self):
        hf_config = self.speculative_config.draft_model_config.hf_config
        return tuple(convert_layer_ids(hf_config.dflash_config["target_layer_ids"]))
""",
}

V2_UTILS = {
    "eagle-only": """
def get_eagle3_aux_layers_from_config(spec_config):
    hf_config = spec_config.draft_model_config.hf_config
    if not hasattr(hf_config, "eagle_aux_hidden_state_layer_ids"):
        return None
    return tuple(hf_config.eagle_aux_hidden_state_layer_ids)
""",
    "plus-one": """
def get_eagle3_aux_layers_from_config(spec_config):
    hf_config = spec_config.draft_model_config.hf_config
    layer_ids = getattr(hf_config, "eagle_aux_hidden_state_layer_ids", None)
    if not layer_ids:
        dflash_config = getattr(hf_config, "dflash_config", None)
        if dflash_config and isinstance(dflash_config, dict):
            layer_ids = [i + 1 for i in (dflash_config.get("target_layer_ids") or [])]
    if layer_ids and isinstance(layer_ids, (list, tuple)):
        return tuple(layer_ids)
    return None
""",
}

DFLASH_MODEL = {
    # no sliding-window code at all; a decoy +1 on a length
    "ignored": """
class DFlashQwen3Model:
    def __init__(self, config):
        drafter_config = config.dflash_config
        num_features_to_use = len(drafter_config["target_layer_ids"]) + 1
        self.fc_in = num_features_to_use * config.hidden_size
        self.layers = [DFlashAttention(config, i) for i in range(config.num_hidden_layers)]


class DFlashAttention:
    def __init__(self, config, layer_idx):
        self.attn = Attention(config.num_attention_heads, prefix=f"layers.{layer_idx}")
""",
    # per-layer windows, but a mixed drafter is refused whatever the runner
    "uniform-only": """
def _resolve_layer_attention(config, layer_idx):
    layer_types = getattr(config, "layer_types", None)
    if layer_types is not None:
        num_sliding = sum(lt == "sliding_attention" for lt in layer_types)
        any_sliding = num_sliding > 0
        all_sliding = num_sliding == len(layer_types)
        if any_sliding and not all_sliding:
            raise NotImplementedError(
                "mixed sliding/full drafter layers are not supported yet; see "
                "https://github.com/vllm-project/vllm/issues/40898"
            )
        if layer_types[layer_idx] == "sliding_attention":
            return config.sliding_window
    return None


class DFlashAttention:
    def __init__(self, config, layer_idx):
        window = _resolve_layer_attention(config, layer_idx)
        self.attn = Attention(config.num_attention_heads, per_layer_sliding_window=window)
""",
    # per-layer windows; a mixed drafter is refused unless the V2 runner is in use; causal per layer
    "v2-runner": """
def _layer_causal(config, layer_idx):
    layer_types = getattr(config, "layer_types", None)
    return bool(layer_types) and layer_types[layer_idx] == "sliding_attention"


def _resolve_layer_attention(config, layer_idx):
    layer_types = getattr(config, "layer_types", None)
    if layer_types is not None:
        num_sliding = sum(lt == "sliding_attention" for lt in layer_types)
        if 0 < num_sliding < len(layer_types) and not get_current_vllm_config().use_v2_model_runner:
            raise NotImplementedError(
                "mixed sliding/full drafters need the V2 model runner; "
                "relaunch with VLLM_USE_V2_MODEL_RUNNER=1."
            )
        if layer_types[layer_idx] == "sliding_attention":
            return config.sliding_window, _layer_causal(config, layer_idx)
    return None, False


class DFlashAttention:
    def __init__(self, config, layer_idx):
        window, causal = _resolve_layer_attention(config, layer_idx)
        self.attn = Attention(config.num_attention_heads, per_layer_sliding_window=window)
""",
}

# a patched install (like the unmerged z-lab branch): per-layer windows, nothing refused
DFLASH_MODEL["honoured"] = DFLASH_MODEL["v2-runner"].replace(
    """
        if 0 < num_sliding < len(layer_types) and not get_current_vllm_config().use_v2_model_runner:
            raise NotImplementedError(
                "mixed sliding/full drafters need the V2 model runner; "
                "relaunch with VLLM_USE_V2_MODEL_RUNNER=1."
            )""",
    "",
)

ENVS = {
    "v1": """
import os
environment_variables = {
    "VLLM_USE_V2_MODEL_RUNNER": lambda: bool(int(os.getenv("VLLM_USE_V2_MODEL_RUNNER", "0"))),
}
""",
    "engine": """
import os


def maybe_convert_bool(value):
    if value is None:
        return None
    return bool(int(value))


environment_variables = {
    "VLLM_USE_V2_MODEL_RUNNER": lambda: maybe_convert_bool(os.getenv("VLLM_USE_V2_MODEL_RUNNER", None)),
}
""",
}


def _config(runner: str, v2_methods: tuple[str, ...], mixed_forces_v2: bool, v1_rejects_mixed: bool) -> str:
    methods = ", ".join(repr(m) for m in v2_methods)
    if runner == "v1":  # 0.20/0.21 shape: the variable alone, checked when set
        return f"""
from vllm import envs


class VllmConfig:
    def __post_init__(self):
        if envs.VLLM_USE_V2_MODEL_RUNNER:
            self._validate_v2_model_runner()

    def _validate_v2_model_runner(self):
        unsupported = []
        if self.speculative_config is not None and self.speculative_config.method not in ({methods}):
            unsupported.append(f"speculative method '{{self.speculative_config.method}}'")
        if unsupported:
            raise ValueError(
                "VLLM_USE_V2_MODEL_RUNNER does not yet support: " + ", ".join(unsupported)
            )
"""
    forced = (
        """
        if self._dflash_needs_multi_kv_group():
            return True
"""
        if mixed_forces_v2
        else ""
    )
    default_model = (
        """
        if not self._is_default_v2_model_runner_model():
            return False
"""
        if runner == "engine-default-model"
        else ""
    )
    v1_check = (
        """
    def _get_v1_model_runner_unsupported_features(self):
        unsupported = []
        if self._dflash_needs_multi_kv_group():
            unsupported.append("mixed sliding/full dflash drafts")
        if unsupported:
            raise ValueError(f"Model Runner V1 does not support: {', '.join(unsupported)}")

    def _validate_v1_model_runner(self):
        self._get_v1_model_runner_unsupported_features()
"""
        if v1_rejects_mixed
        else ""
    )
    return f"""
from vllm import envs

DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES = frozenset({{"Qwen3ForCausalLM"}})


class VllmConfig:
    def __post_init__(self):
        if self.use_v2_model_runner:
            self._validate_v2_model_runner()

    @property
    def use_v2_model_runner(self):
        use_v2_model_runner = envs.VLLM_USE_V2_MODEL_RUNNER
        if use_v2_model_runner is not None:
            return use_v2_model_runner
{forced}{default_model}
        unsupported = self._get_v2_model_runner_unsupported_features()
        if unsupported:
            return False
        return True

    def _dflash_needs_multi_kv_group(self):
        layer_types = getattr(self.speculative_config.draft_model_config.hf_config, "layer_types", None) or []
        num_sliding = sum(lt == "sliding_attention" for lt in layer_types)
        return 0 < num_sliding < len(layer_types)

    def _get_v2_model_runner_unsupported_features(self):
        unsupported = []
        speculative_config = self.speculative_config
        if speculative_config is not None:
            if speculative_config.method in ("ngram", "ngram_gpu"):
                unsupported.append("ngram speculative decoding")
            elif speculative_config.method not in ({methods}):
                unsupported.append(f"speculative method '{{speculative_config.method}}'")
        return unsupported

    def _validate_v2_model_runner(self):
        unsupported = self._get_v2_model_runner_unsupported_features()
        if unsupported:
            raise ValueError(
                "VLLM_USE_V2_MODEL_RUNNER does not yet support: " + ", ".join(unsupported)
            )
{v1_check}"""


INTERFACES = """
class EagleModelMixin:
    aux_hidden_state_layers = ()

    def _set_aux_hidden_state_layers(self, layers):
        self.aux_hidden_state_layers = layers

    def _maybe_add_hidden_state(self, aux_hidden_states, layer_idx, hidden_states, residual):
        if layer_idx in self.aux_hidden_state_layers:
            aux_hidden_states.append(hidden_states + residual)
        return aux_hidden_states
"""

VLLM_QWEN3 = """
from .interfaces import EagleModelMixin


class Qwen3Model(EagleModelMixin):
    def forward(self, positions, hidden_states):
        residual = None
        aux_hidden_states = self._maybe_add_hidden_state([], 0, hidden_states, residual)
        for idx, layer in enumerate(self.layers):
            hidden_states, residual = layer(positions, hidden_states, residual)
            self._maybe_add_hidden_state(aux_hidden_states, idx + 1, hidden_states, residual)
        return hidden_states, aux_hidden_states


class Qwen3ForCausalLM:
    def __init__(self, config):
        self.model = Qwen3Model(config)

    def set_aux_hidden_state_layers(self, layers):
        self.model.aux_hidden_state_layers = layers
"""

VLLM_QWEN3_5 = """
from .qwen3 import Qwen3Model


class Qwen3_5Model(Qwen3Model):
    def forward(self, positions, hidden_states):
        residual = None
        aux_hidden_states = []
        for layer_idx, layer in enumerate(self.layers):
            if layer_idx in self.aux_hidden_state_layers:
                aux_hidden_states.append(hidden_states + residual)
            hidden_states, residual = layer(positions, hidden_states, residual)
        return hidden_states, aux_hidden_states


class Qwen3_5ForConditionalGeneration:
    def __init__(self, config):
        self.language_model = Qwen3_5Model(config)

    def set_aux_hidden_state_layers(self, layers):
        self.language_model.aux_hidden_state_layers = layers
"""


@dataclass(frozen=True)
class VllmBehaviour:
    version: str
    dflash: bool = True
    runner_map: str = "plus-one"  # key of RUNNER
    v2_utils: str = "plus-one"  # key of V2_UTILS
    swa: str = "v2-runner"  # key of DFLASH_MODEL
    envs: str = "engine"  # key of ENVS
    runner: str = "engine-default-model"  # "v1" | "engine-default-model" | "engine-v2"
    v2_methods: tuple[str, ...] = ("eagle", "eagle3", "mtp", "dflash")
    mixed_forces_v2: bool = False
    v1_rejects_mixed: bool = False
    dist_info: bool = True
    dflash2: bool = False


VLLM = {
    "0.19.1": VllmBehaviour(
        "0.19.1", dflash=False, envs="v1", runner="v1", v2_methods=("eagle", "eagle3", "mtp"), v2_utils="eagle-only"
    ),
    "0.20.1": VllmBehaviour(
        "0.20.1",
        runner_map="raw",
        v2_utils="eagle-only",
        swa="ignored",
        envs="v1",
        runner="v1",
        v2_methods=("eagle", "eagle3", "mtp"),
    ),
    "0.21.0": VllmBehaviour(
        "0.21.0",
        runner_map="raw",
        v2_utils="eagle-only",
        swa="ignored",
        envs="v1",
        runner="v1",
        v2_methods=("eagle", "eagle3", "mtp"),
    ),
    "0.22.0": VllmBehaviour("0.22.0", v2_utils="eagle-only", swa="ignored", v2_methods=("eagle", "eagle3", "mtp")),
    "0.24.0": VllmBehaviour("0.24.0", swa="ignored"),
    "0.25.0": VllmBehaviour("0.25.0", swa="uniform-only"),
    "0.26.0": VllmBehaviour("0.26.0", mixed_forces_v2=True),
    "0.29.0": VllmBehaviour("0.29.0", runner="engine-v2", v1_rejects_mixed=True, dflash2=True),
}


def vllm_files(b: VllmBehaviour) -> dict[str, str]:
    files = {
        "vllm/__init__.py": "",
        "vllm/_version.py": f"__version__ = version = {b.version!r}\n__version_tuple__ = version_tuple = "
        f"{tuple(int(x) for x in b.version.split('.'))!r}\n",
        "vllm/version.py": "from ._version import __version__, __version_tuple__\n",
        "vllm/envs.py": ENVS[b.envs],
        "vllm/config/__init__.py": "",
        "vllm/config/vllm.py": _config(b.runner, b.v2_methods, b.mixed_forces_v2, b.v1_rejects_mixed),
        "vllm/model_executor/__init__.py": "",
        "vllm/model_executor/models/__init__.py": "",
        "vllm/model_executor/models/interfaces.py": INTERFACES,
        "vllm/model_executor/models/qwen3.py": VLLM_QWEN3,
        "vllm/model_executor/models/qwen3_5.py": VLLM_QWEN3_5,
        "vllm/v1/__init__.py": "",
        "vllm/v1/worker/__init__.py": "",
        "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py": V2_UTILS[b.v2_utils],
    }
    methods = '"ngram", "eagle", "eagle3", "mtp"' + (', "dflash"' if b.dflash else "")
    files["vllm/config/speculative.py"] = f"from typing import Literal\n\nSpeculativeMethod = Literal[{methods}]\n"
    registry = [
        '    "Qwen3ForCausalLM": ("qwen3", "Qwen3ForCausalLM"),',
        '    "Qwen3_5ForConditionalGeneration": ("qwen3_5", "Qwen3_5ForConditionalGeneration"),',
    ]
    spec = ['    "EagleLlamaForCausalLM": ("llama_eagle", "EagleLlamaForCausalLM"),']
    if b.dflash:
        spec.append('    "DFlashDraftModel": ("qwen3_dflash", "DFlashQwen3ForCausalLM"),')
        files["vllm/model_executor/models/qwen3_dflash.py"] = DFLASH_MODEL[b.swa]
        files["vllm/v1/spec_decode/dflash.py"] = "class DFlashProposer:\n    block_size = 16\n"
        if b.dflash2:
            spec.append('    "DFlash2DraftModel": ("qwen3_dflash2", "DFlash2Qwen3ForCausalLM"),')
            files["vllm/model_executor/models/qwen3_dflash2.py"] = DFLASH_MODEL[b.swa]
    files["vllm/model_executor/models/registry.py"] = (
        "_TEXT_GENERATION_MODELS = {\n"
        + "\n".join(registry)
        + "\n}\n\n_SPECULATIVE_DECODING_MODELS = {\n"
        + "\n".join(spec)
        + "\n}\n"
    )
    files["vllm/v1/worker/gpu_model_runner.py"] = "class GPUModelRunner:\n" + (
        RUNNER[b.runner_map] if b.dflash else "    pass\n"
    )
    if b.dist_info:
        files[f"vllm-{b.version}.dist-info/METADATA"] = f"Metadata-Version: 2.1\nName: vllm\nVersion: {b.version}\n"
    return files


# --- SGLang ----------------------------------------------------------------------------------------

SG_QWEN2 = """
class Qwen2DecoderLayer:
    def forward(self, positions, hidden_states, forward_batch, capture_output=None):
        hidden_states = self.attn_boundary.prepare(hidden_states, forward_batch, capture=capture_output)
        hidden_states = self.self_attn(positions=positions, hidden_states=hidden_states)
        return self.mlp(hidden_states)


class Qwen2Model:
    def __init__(self, config):
        self.layers = [Qwen2DecoderLayer() for _ in range(config.num_hidden_layers)]
        self.layers_to_capture = []

    def forward(self, positions, hidden_states, forward_batch):
        aux_hidden_states = AuxHiddenStateList()
        for i in range(self.start_layer, self.end_layer):
            hidden_states = self.layers[i](
                positions,
                hidden_states,
                forward_batch,
                capture_output=aux_hidden_states.capture if i in self.layers_to_capture else None,
            )
        return hidden_states, aux_hidden_states
"""

SG_QWEN3 = {
    "plus-one": """
from sglang.srt.models.qwen2 import Qwen2Model


class Qwen3Model(Qwen2Model):
    pass


class Qwen3ForCausalLM:
    def __init__(self, config):
        self.model = Qwen3Model(config)

    def set_dflash_layers_to_capture(self, layer_ids):
        if layer_ids is None:
            raise ValueError("DFLASH requires explicit layer_ids")
        # SGLang captures before layer i: the output of layer k is captured before layer k + 1
        self.model.layers_to_capture = [val + 1 for val in layer_ids]


EntryClass = Qwen3ForCausalLM
""",
    "raw": """
from sglang.srt.models.qwen2 import Qwen2Model


class Qwen3Model(Qwen2Model):
    pass


class Qwen3ForCausalLM:
    def __init__(self, config):
        self.model = Qwen3Model(config)

    def set_dflash_layers_to_capture(self, layer_ids):
        self.model.layers_to_capture = list(layer_ids)


EntryClass = Qwen3ForCausalLM
""",
}

# the Qwen3.5/3.6 target: the VL class adds 1 and hands the ids to its language model, which marks the layers
SG_QWEN3_VL = """
from sglang.srt.models.qwen3 import Qwen3Model


class Qwen3LLMModel(Qwen3Model):
    pass


class Qwen3VLForConditionalGeneration:
    def __init__(self, config, quant_config=None, prefix="", language_model_cls=Qwen3LLMModel):
        self.model = language_model_cls(config=config)

    def set_dflash_layers_to_capture(self, layer_ids):
        self.capture_aux_hidden_states = True
        self.model.set_dflash_layers_to_capture([val + 1 for val in layer_ids])


EntryClass = Qwen3VLForConditionalGeneration
"""

SG_QWEN3_5 = """
from sglang.srt.models.qwen3_vl import Qwen3VLForConditionalGeneration


class Qwen3_5AttentionDecoderLayer:
    def forward(self, positions, hidden_states, residual, forward_batch, captured_last_layer_outputs=None):
        hidden_states, residual = self.layer_communicator.prepare_attn_and_capture_last_layer_outputs(
            hidden_states, residual, forward_batch, captured_last_layer_outputs=captured_last_layer_outputs)
        hidden_states = self.self_attention(positions, hidden_states)
        return self.mlp(hidden_states), residual


class Qwen3_5ForCausalLM:
    def __init__(self, config):
        self.layers = [Qwen3_5AttentionDecoderLayer() for _ in range(config.num_hidden_layers)]
        self.layers_to_capture = []

    def set_dflash_layers_to_capture(self, layers_to_capture):
        self.layers_to_capture = layers_to_capture
        for layer_id in self.layers_to_capture:
            setattr(self.layers[layer_id], "_is_layer_to_capture", True)

    def forward(self, positions, hidden_states, forward_batch):
        residual = None
        aux_hidden_states = []
        for layer_idx in range(self.start_layer, self.end_layer):
            layer = self.layers[layer_idx]
            hidden_states, residual = layer(
                positions=positions,
                hidden_states=hidden_states,
                residual=residual,
                forward_batch=forward_batch,
                captured_last_layer_outputs=(
                    aux_hidden_states if getattr(layer, "_is_layer_to_capture", False) else None
                ),
            )
        return hidden_states, aux_hidden_states


class Qwen3_5ForConditionalGeneration(Qwen3VLForConditionalGeneration):
    def __init__(self, config, quant_config=None, prefix="", language_model_cls=Qwen3_5ForCausalLM):
        super().__init__(config, quant_config, prefix, language_model_cls)


EntryClass = [Qwen3_5ForConditionalGeneration]
"""

SG_DFLASH = {
    "honoured": """
from sglang.srt.speculative.dflash_utils import get_dflash_layer_types


def _get_dflash_layer_attention_params(config, layer_id):
    layer_types = get_dflash_layer_types(config)
    if layer_types is None:
        return -1, AttentionType.ENCODER_ONLY
    if layer_types[layer_id] == "sliding_attention":
        return config.sliding_window - 1, AttentionType.DECODER
    return -1, AttentionType.ENCODER_ONLY


class DFlashAttention:
    def __init__(self, config, layer_id):
        self.sliding_window_size, self.attn_type = _get_dflash_layer_attention_params(config, layer_id)
        self.attn = RadixAttention(sliding_window_size=self.sliding_window_size, attn_type=self.attn_type)


class DFlashDraftModel:
    pass


EntryClass = [DFlashDraftModel]
""",
    "ignored": """
class DFlashAttention:
    def __init__(self, config, layer_id):
        self.attn = RadixAttention(attn_type=AttentionType.ENCODER_ONLY)


class DFlashDraftModel:
    pass


EntryClass = DFlashDraftModel
""",
}

SG_UTILS = """
def get_dflash_layer_types(config):
    return getattr(config, "layer_types", None)


class DFlashDraftConfig:
    def resolve_target_layer_ids(self, target_num_layers):
        resolved = list(self.target_layer_ids)
        return resolved


def parse_dflash_draft_config(draft_hf_config):
    layer_ids = draft_hf_config.dflash_config.get("target_layer_ids")
    parsed = [int(x) for x in layer_ids]
    return DFlashDraftConfig(target_layer_ids=parsed)
"""


def sglang_files(
    version: str, dflash: bool = True, qwen3: str = "plus-one", swa: str = "honoured", dist_info: bool = True
) -> dict[str, str]:
    files = {
        "sglang/__init__.py": "",
        "sglang/version.py": f'__version__ = "{version}"\n',
        "sglang/srt/__init__.py": "",
        "sglang/srt/models/__init__.py": "",
        "sglang/srt/models/qwen2.py": SG_QWEN2,
        "sglang/srt/models/qwen3.py": SG_QWEN3[qwen3],
        "sglang/srt/models/qwen3_vl.py": SG_QWEN3_VL,
        "sglang/srt/models/qwen3_5.py": SG_QWEN3_5,
        "sglang/srt/speculative/spec_info.py": "from enum import Enum, auto\n\n\nclass SpeculativeAlgorithm(Enum):\n"
        + ("    DFLASH = auto()\n" if dflash else "")
        + "    EAGLE = auto()\n    NONE = auto()\n",
    }
    if dflash:
        files["sglang/srt/models/dflash.py"] = SG_DFLASH[swa]
        files["sglang/srt/speculative/dflash_utils.py"] = SG_UTILS
    if dist_info:
        files[f"sglang-{version}.dist-info/METADATA"] = f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n"
    return files


def write(root: Path, files: dict[str, str]) -> Path:
    root = Path(root)
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text.lstrip("\n"))
    return root


def build_vllm(root: Path, version: str = "0.26.0", **changes) -> Path:
    b = VLLM[version] if version in VLLM else VllmBehaviour(version)
    if changes:
        b = VllmBehaviour(**{**b.__dict__, **changes})
    return write(root, vllm_files(b))


def build_sglang(root: Path, version: str = "0.5.22", **kw) -> Path:
    return write(root, sglang_files(version, **kw))
