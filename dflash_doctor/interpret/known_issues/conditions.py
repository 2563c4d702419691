"""The deployment facts a known issue can be conditioned on, and the deployment they describe.

Each fact has a name, a type and a sentence that says what it means and where the doctor reads it.
An entry's `conditions` name these facts; a fact that is absent from a Deployment is *unknown*,
which is different from False (a launch command that lacks --enforce-eager says CUDA graphs are on;
no launch command says nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...models.launch_view import METHOD_ALIASES


@dataclass(frozen=True)
class FactSpec:
    name: str
    type: str  # "bool" | "str" | "int" | "text"
    description: str
    # How a condition on this fact is written and tested:
    #   bool: `name = true|false`            equal
    #   str:  `name = "x"` or `["x", "y"]`   the fact is one of them
    #   int:  `name = N`                     the fact is >= N  (e.g. min_k = 2)
    #   text: `name = "sub"` or a list       the fact (lower-case text) contains one of them
    values: tuple[str, ...] = ()  # allowed values of a str fact
    label: str = ""  # short words for the fact in findings ("the drafter ships its own lm_head")
    label_false: str = ""  # words for the fact being false, when "not …" reads badly

    def words(self, value: bool = True) -> str:
        if not value:
            return self.label_false or f"not {self.label or self.name.replace('_', ' ')}"
        return self.label or self.name.replace("_", " ")


FACTS: dict[str, FactSpec] = {
    f.name: f
    for f in (
        FactSpec(
            "pd_disaggregation",
            "bool",
            "prefill/decode disaggregation: vLLM --kv-transfer-config with a KV connector, "
            "SGLang --disaggregation-mode prefill|decode, TensorRT-LLM disaggregated serving",
            label="P/D disaggregation",
        ),
        FactSpec(
            "dp_attention", "bool", "SGLang --enable-dp-attention (data-parallel attention)", label="DP attention"
        ),
        FactSpec(
            "data_parallel",
            "bool",
            "data-parallel size > 1 (--data-parallel-size / --dp-size)",
            label="data parallel > 1",
        ),
        FactSpec(
            "context_parallel",
            "bool",
            "prefill/decode context parallelism > 1 (--prefill-context-parallel-size, --decode-context-parallel-size)",
            label="context parallel > 1",
        ),
        FactSpec(
            "cuda_graphs",
            "bool",
            "graph capture on (CUDA/ACL graphs): false with --enforce-eager or --disable-cuda-graph",
            label="CUDA/ACL graphs on",
            label_false="eager mode (no CUDA/ACL graphs)",
        ),
        FactSpec("temperature_positive", "bool", "requests sample at temperature > 0", label="temperature > 0"),
        FactSpec(
            "drafter_ships_lm_head",
            "bool",
            "the drafter checkpoint has its own lm_head weight",
            label="the drafter ships its own lm_head",
        ),
        FactSpec(
            "drafter_ships_embed_tokens",
            "bool",
            "the drafter checkpoint has its own embed_tokens weight",
            label="the drafter ships its own embed_tokens",
        ),
        FactSpec(
            "vocab_padded",
            "bool",
            "drafter and target vocab sizes differ (e.g. 152064 vs 152576) while the drafter "
            "has the full vocabulary (no reduced draft vocab)",
            label="drafter and target vocab sizes differ (padding)",
        ),
        FactSpec(
            "draft_vocab_reduced",
            "bool",
            "the drafter drafts over a reduced vocabulary (draft_vocab_size < vocab_size, mapped back with d2t)",
            label="the drafter has a reduced draft vocabulary",
        ),
        FactSpec(
            "drafter_speculators_format",
            "bool",
            "the drafter config is in vLLM speculators format (eagle_aux_hidden_state_layer_ids, ids already shifted)",
            label="the drafter is in speculators format",
            label_false="the drafter is not in speculators format",
        ),
        FactSpec(
            "drafter_swa",
            "str",
            "sliding-window layers in the drafter: none, uniform (every layer sliding) or mixed",
            values=("none", "uniform", "mixed"),
            label="the drafter's sliding-window layers are",
        ),
        FactSpec(
            "mtp_quantized",
            "bool",
            "the MTP head is stored quantized (the target's quantization config does not exclude the MTP/NextN layers)",
            label="the MTP head is quantized",
        ),
        FactSpec(
            "target_rotated_quant",
            "bool",
            "the target uses rotation-based quantization (QuaRot/SpinQuant/Hadamard)",
            label="the target uses rotation-based quantization",
        ),
        FactSpec(
            "target_multimodal",
            "bool",
            "the target is a *ForConditionalGeneration wrapper around a language model",
            label="the target is a *ForConditionalGeneration model",
        ),
        FactSpec(
            "target_family",
            "text",
            "target model type, architecture and name, lower-case (matched by substring)",
            label="the target is",
        ),
        FactSpec(
            "k",
            "int",
            "draft tokens per step (num_speculative_tokens); a condition gives the smallest k affected",
            label="k",
        ),
        FactSpec(
            "launch_text",
            "text",
            "the launch command and its speculative config (matched by substring)",
            label="the launch mentions",
        ),
        FactSpec(
            "rejection_sample_method",
            "str",
            "vLLM speculative_config.rejection_sample_method",
            values=("strict", "standard", "probabilistic", "synthetic"),
            label="rejection_sample_method is",
        ),
    )
}

# Launch method spellings are normalised by models.launch_view.METHOD_ALIASES; these are the method
# names entries may use ("draft" is a separate draft model, "p-eagle" parallel-drafting EAGLE).
METHODS = ("dflash", "dflash2", "eagle", "eagle3", "mtp", "medusa", "draft", "ngram", "p-eagle", "dspark", "suffix")

ENGINES = ("vllm", "sglang", "vllm-ascend", "tensorrt-llm")
ENGINE_ALIASES = {
    "vllm": "vllm",
    "sglang": "sglang",
    "vllm-ascend": "vllm-ascend",
    "vllm_ascend": "vllm-ascend",
    "tensorrt-llm": "tensorrt-llm",
    "tensorrt_llm": "tensorrt-llm",
    "trtllm": "tensorrt-llm",
    "trt-llm": "tensorrt-llm",
}
RUNNERS = ("v1", "v2")


def normalise_engine(name: str | None) -> str | None:
    if not name:
        return None
    key = name.strip().lower()
    return ENGINE_ALIASES.get(key, key)


# Method names as a launch, a log or the drafter readers write them, in this database's words (METHODS).
_METHOD_WORDS = {"peagle": "p-eagle", "p_eagle": "p-eagle", "eagle-3": "eagle3", "draft_model": "draft"}


def normalise_method(name: str | None) -> str | None:
    """A launch's, a log's or a drafter reader's method name (`eagle-3`, `deepseek_mtp`, the readers'
    `peagle`) as the issues name it (`eagle3`, `mtp`, `p-eagle`)."""
    if not name:
        return None

    key = name.strip().lower()
    key = METHOD_ALIASES.get(key, key)
    return _METHOD_WORDS.get(key, key)


@dataclass(frozen=True)
class Deployment:
    """What is known about the deployment to match known issues against. Absent = unknown."""

    engine: str | None
    version: str | None = None
    method: str | None = None
    runner: str | None = None  # "v1" | "v2"; None = unknown
    runner_source: str | None = None  # "VLLM_USE_V2_MODEL_RUNNER=1", "release default", …
    facts: Mapping[str, Any] = field(default_factory=dict)
    # where each fact came from (evidence ref or flag), cited in findings
    sources: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        bits = [f"{self.engine or 'engine unknown'}=={self.version or '?'}"]
        if self.method:
            bits.append(f"method {self.method}")
        if self.runner:
            bits.append(f"{self.runner} runner")
        return ", ".join(bits)


def parse_fact_value(name: str, text: str) -> Any:
    """A fact given on the command line (`--fact pd_disaggregation=true`), typed by its spec."""
    spec = FACTS.get(name)
    if spec is None:
        raise ValueError(f"unknown fact {name!r} (known: {', '.join(sorted(FACTS))})")
    t = text.strip()
    if spec.type == "bool":
        low = t.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"fact {name} takes true or false, not {text!r}")
    if spec.type == "int":
        try:
            return int(t)
        except ValueError:
            raise ValueError(f"fact {name} takes an integer, not {text!r}") from None
    if spec.type == "str":
        if spec.values and t.lower() not in spec.values:
            raise ValueError(f"fact {name} takes one of {', '.join(spec.values)}, not {text!r}")
        return t.lower()
    return t.lower()
