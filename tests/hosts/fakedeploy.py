"""A fake spec-decode deployment on disk, for tests, bundles and the SSH benchmark.

Writes (all authored here from the reference facts): a venv whose python is the real interpreter
with a fake installed `vllm` or `sglang` package (dist-info + the small synthetic source files of
tests/engines/synth.py that encode that release's behaviour), an HF
cache with drafter/target configs, model cards and safetensors headers, a vLLM-format log of a
chosen size, and a `vllm` entry script. `start_server` runs that script as a process whose
/proc cmdline carries the speculative config, stdout goes to the log, and /metrics is served.
"""

from __future__ import annotations

import json
import os
import random
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "fixtures" / "models"
SECRET_API_KEY = "sk-live-4b1d9c7e2a8f6e0d3c5b"
SECRET_HF_TOKEN = "hf_QmVyeVNlY3JldFRva2VuRm9yVGVzdHM"


def _qwen3_8b_dflash() -> dict:
    return {
        "architectures": ["DFlashDraftModel"],
        "block_size": 16,
        "model_type": "qwen3",
        "dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]},
        "hidden_size": 4096,
        "head_dim": 128,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 5,
        "num_target_layers": 36,
        "intermediate_size": 12288,
        "vocab_size": 151936,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000,
        "rope_scaling": None,
        "layer_types": ["full_attention"] * 5,
        "use_sliding_window": False,
        "sliding_window": None,
        "torch_dtype": "bfloat16",
    }


def _qwen3_8b() -> dict:
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": 4096,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 12288,
        "vocab_size": 151936,
        "rope_theta": 1000000,
        "max_position_embeddings": 40960,
        "torch_dtype": "bfloat16",
    }


def _eagle3() -> dict:
    return {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": 4096,
        "num_hidden_layers": 1,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 12288,
        "vocab_size": 151936,
        "draft_vocab_size": 32000,
        "rope_theta": 1000000,
        "torch_dtype": "bfloat16",
    }


@dataclass
class Scenario:
    name: str
    engine_version: str  # which synthetic engine release to install (tests/engines/synth.py)
    target: str
    target_config: dict
    drafter: str
    drafter_config: dict
    method: str
    k: int
    curve: tuple[float, ...]  # per-position acceptance rates
    drafter_card: str = "# Drafter\n\nA speculative decoding drafter.\n"
    env: dict = field(default_factory=dict)
    spec_json: str | None = None  # the --speculative-config word(s) exactly; default json.dumps
    drafter_tensors: dict = field(default_factory=dict)
    engine: str = "vllm"  # "vllm" | "sglang"
    engine_changes: dict = field(default_factory=dict)  # synth.VllmBehaviour fields changed (a hand patch …)
    dist_info: bool = True  # False: a source checkout on PYTHONPATH (no dist-info)


def dflash_tensors(hidden: int, layers: int, heads: int, kv: int, head_dim: int, inter: int, taps: int) -> dict:
    """The tensor names and shapes of a DFlash drafter checkpoint (header only; data is never read)."""
    t = {
        "fc.weight": ["BF16", [hidden, taps * hidden]],
        "hidden_norm.weight": ["BF16", [hidden]],
        "norm.weight": ["BF16", [hidden]],
    }
    for i in range(layers):
        p = f"layers.{i}."
        t.update(
            {
                p + "self_attn.q_proj.weight": ["BF16", [heads * head_dim, hidden]],
                p + "self_attn.k_proj.weight": ["BF16", [kv * head_dim, hidden]],
                p + "self_attn.v_proj.weight": ["BF16", [kv * head_dim, hidden]],
                p + "self_attn.o_proj.weight": ["BF16", [hidden, heads * head_dim]],
                p + "mlp.gate_proj.weight": ["BF16", [inter, hidden]],
                p + "mlp.up_proj.weight": ["BF16", [inter, hidden]],
                p + "mlp.down_proj.weight": ["BF16", [hidden, inter]],
                p + "input_layernorm.weight": ["BF16", [hidden]],
                p + "post_attention_layernorm.weight": ["BF16", [hidden]],
            }
        )
    return t


def scenarios() -> dict[str, Scenario]:
    seed_card = (MODELS / "Qwen3.6-27B-DFlash" / "README.md").read_text()
    seed = Scenario(
        "seed",
        "0.20.1",
        "Qwen/Qwen3.6-27B",
        json.loads((MODELS / "Qwen3.6-27B" / "config.json").read_text()),
        "z-lab/Qwen3.6-27B-DFlash",
        json.loads((MODELS / "Qwen3.6-27B-DFlash" / "config.json").read_text()),
        "dflash",
        15,
        (0.166, 0.017) + (0.0,) * 13,
        drafter_card=seed_card,
        drafter_tensors=dflash_tensors(5120, 5, 32, 8, 128, 17408, 5),
    )
    healthy = Scenario(
        "healthy-qwen3-8b",
        "0.26.0",
        "Qwen/Qwen3-8B",
        _qwen3_8b(),
        "z-lab/Qwen3-8B-DFlash-b16",
        _qwen3_8b_dflash(),
        "dflash",
        15,
        tuple(round(0.93 * 0.86**i, 3) for i in range(15)),
        env={"VLLM_USE_V2_MODEL_RUNNER": "1"},
        drafter_card="# Qwen3-8B-DFlash-b16\n\nA DFlash drafter for Qwen3-8B, block size 16.\n",
        drafter_tensors=dflash_tensors(4096, 5, 32, 8, 128, 12288, 5),
    )
    offset = Scenario(
        "layer-offset-pre-40727",
        "0.20.1",
        "Qwen/Qwen3-8B",
        _qwen3_8b(),
        "z-lab/Qwen3-8B-DFlash-b16",
        _qwen3_8b_dflash(),
        "dflash",
        15,
        tuple(round(0.62 * 0.58**i, 3) for i in range(15)),
        drafter_card="# Qwen3-8B-DFlash-b16\n\nA DFlash drafter for Qwen3-8B, block size 16.\n",
        drafter_tensors=dflash_tensors(4096, 5, 32, 8, 128, 12288, 5),
    )
    eagle = Scenario(
        "eagle3-as-eagle",
        "0.26.0",
        "Qwen/Qwen3-8B",
        _qwen3_8b(),
        "RedHatAI/Qwen3-8B-speculator.eagle3",
        _eagle3(),
        "eagle",
        3,
        (0.004, 0.0, 0.0),
        drafter_card="# Qwen3-8B EAGLE-3 speculator\n\nServe with method eagle3.\n",
        drafter_tensors={"d2t": ["I64", [32000]], "fc.weight": ["BF16", [4096, 12288]]},
    )
    extra = issue15_scenarios(seed)
    return {s.name: s for s in (seed, healthy, offset, eagle, *extra)}


def issue15_scenarios(seed: Scenario) -> list[Scenario]:
    """The seed drafter (4 sliding + 1 full layers) on its Qwen3.6 target, served by the installs of
    issue 15's table: each reads right only if the engine's own rules are followed."""
    from dataclasses import replace

    def on(name, version, **kw):
        return replace(seed, name=name, engine_version=version, **kw)

    return [
        on("vllm-0.25-mixed", "0.25.0"),  # refused whatever the runner
        on("vllm-0.25-mixed-v2", "0.25.0", env={"VLLM_USE_V2_MODEL_RUNNER": "1"}),
        on("vllm-0.26-v1", "0.26.0", env={"VLLM_USE_V2_MODEL_RUNNER": "0"}),  # refused at load on V1
        on("vllm-0.29-v1", "0.29.0", env={"VLLM_USE_V2_MODEL_RUNNER": "0"}),  # rejected at config time on V1
        on("vllm-0.20.1-patched", "0.20.1", engine_changes={"runner_map": "patched-line"}),  # +1 by hand
        on("vllm-0.19.1", "0.19.1"),  # no DFlash at all
        on("vllm-0.26-no-dist-info", "0.26.0", dist_info=False),  # a checkout: version from vllm/_version.py
        on("sglang-0.5.22", "0.5.22", engine="sglang", method="dflash", k=15),
        on("sglang-0.5.23", "0.5.23", engine="sglang", method="dflash", k=15),
    ]


# --- the fake engine source -------------------------------------------------------------------


def engine_files(s: Scenario) -> dict[str, str]:
    """The installed package's files (relative to site-packages): a synthetic release (tests/engines/synth.py)."""
    from tests.engines import synth

    if s.engine == "sglang":
        return synth.sglang_files(s.engine_version, dist_info=s.dist_info)
    b = synth.VLLM.get(s.engine_version) or synth.VllmBehaviour(s.engine_version)
    b = synth.VllmBehaviour(**{**b.__dict__, **s.engine_changes, "dist_info": s.dist_info})
    return synth.vllm_files(b)


# --- logs ----------------------------------------------------------------------------------------


def spec_line(t: datetime, curve: tuple[float, ...], drafts: int, pid: int = 1843) -> str:
    k = len(curve)
    rates = [round(min(1.0, max(0.0, r)), 3) for r in curve]
    accepted = int(round(sum(rates) * drafts))
    drafted = drafts * k
    mean = 1 + accepted / drafts
    return (
        f"(APIServer pid={pid}) INFO {t:%m-%d %H:%M:%S} [metrics.py:101] SpecDecoding metrics: "
        f"Mean acceptance length: {mean:.2f}, Accepted throughput: {accepted / 10:.2f} tokens/s, "
        f"Drafted throughput: {drafted / 10:.2f} tokens/s, Accepted: {accepted} tokens, Drafted: {drafted} tokens, "
        f"Per-position acceptance rate: {', '.join(f'{r:.3f}' for r in rates)}, "
        f"Avg Draft acceptance rate: {100 * accepted / drafted:.1f}%"
    )


def write_log(path: Path, s: Scenario, size: int = 400_000, intervals: int = 60, api_key: str = SECRET_API_KEY) -> None:
    """A vLLM-format log: startup lines, then request traffic with one SpecDecoding line per interval.

    `size` bytes in total; the filler between metrics lines grows with it (busy servers log requests).
    """
    rng = random.Random(f"{s.name}-{size}")
    t = datetime(2026, 5, 14, 9, 11, 52)
    api, core = "(APIServer pid=1843)", "(EngineCore_DP0 pid=2011)"
    spec = {"method": s.method, "model": s.drafter, "num_speculative_tokens": s.k}
    head = [
        f"{api} INFO {t:%m-%d %H:%M:%S} [utils.py:253]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version {s.engine_version}",
        f"{api} INFO {t:%m-%d %H:%M:%S} [utils.py:253]   █▄█▀ █     █     █     █  model   {s.target}",
        f"{api} INFO {t:%m-%d %H:%M:%S} [utils.py:189] non-default args: {{'model_tag': '{s.target}', 'host': "
        "'127.0.0.1', "
        f"'port': 8000, 'api_key': ['{api_key}'], 'model': '{s.target}', 'speculative_config': {spec!r}}}",
        f"{api} INFO {t:%m-%d %H:%M:%S} [model.py:547] Resolved architecture: {s.target_config['architectures'][0]}",
        f"{api} INFO {t:%m-%d %H:%M:%S} [model.py:547] Resolved architecture: {s.drafter_config['architectures'][0]}",
        f"{core} INFO {t:%m-%d %H:%M:%S} [core.py:93] Initializing a V1 LLM engine (v{s.engine_version}) with config: "
        f"model='{s.target}', speculative_config=SpeculativeConfig(method='{s.method}', model='{s.drafter}', "
        f"num_spec_tokens={s.k})",
        f"{api} INFO {t:%m-%d %H:%M:%S} [api_server.py:1923] Starting vLLM API server 0 on http://127.0.0.1:8000",
    ]
    head_bytes = sum(len(x) + 1 for x in head)
    per_interval = max(0, (size - head_bytes) // intervals)
    words = ("the", "drafter", "tokens", "request", "context", "Explain", "compute", "integral", "weather", "python")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(head) + "\n")
        filler_pool = []
        for _i in range(64):
            prompt = " ".join(rng.choice(words) for _ in range(rng.randint(20, 120)))
            filler_pool.append(
                f"{api} INFO {{ts}} [logger.py:43] Received request chatcmpl-{rng.getrandbits(64):016x}: "
                f"prompt: '{prompt}', params: SamplingParams(n=1, temperature=0.0, max_tokens=1024)"
            )
        for _n in range(intervals):
            t += timedelta(seconds=10)
            ts = f"{t:%m-%d %H:%M:%S}"
            spec_l = spec_line(t, s.curve, drafts=1800 + rng.randint(0, 400))
            budget = per_interval - len(spec_l) - 1
            chunk = []
            while budget > 0:
                line = filler_pool[rng.randrange(64)].replace("{ts}", ts)
                chunk.append(line)
                budget -= len(line) + 1
            chunk.append(
                f"{api} INFO {ts} [loggers.py:123] Engine 000: Avg prompt throughput: 812.4 tokens/s, "
                "Avg generation throughput: 96.1 tokens/s, Running: 4 reqs, Waiting: 0 reqs"
            )
            chunk.append(spec_l)
            fh.write("\n".join(chunk) + "\n")


def write_sglang_log(path: Path, s: Scenario, intervals: int = 40) -> None:
    """SGLang's `Decode batch` lines (0.5.6+ format: accept len, accept rate), one per interval."""
    t = datetime(2026, 5, 14, 9, 11, 52)
    mean = 1 + sum(s.curve)
    with open(path, "w", encoding="utf-8") as fh:
        for _n in range(intervals):
            t += timedelta(seconds=10)
            fh.write(
                f"[{t:%Y-%m-%d %H:%M:%S}] Decode batch, #running-req: 4, #token: 8812, token usage: 0.05, "
                f"accept len: {mean:.2f}, accept rate: {(mean - 1) / s.k:.2f}, cuda graph: True, "
                "gen throughput (token/s): 96.10, #queue-req: 0\n"
            )


def write_big_log(path: Path, s: Scenario, size: int) -> None:
    """A large log fast: one realistic 4 MiB block (with its metrics lines) repeated to `size` bytes."""
    block = path.with_suffix(".block")
    write_log(block, s, size=4 << 20, intervals=8)
    data = block.read_bytes()
    block.unlink()
    with open(path, "wb") as fh:
        written = 0
        while written < size:
            fh.write(data)
            written += len(data)


# --- the tree -------------------------------------------------------------------------------------


@dataclass
class Deployment:
    root: Path
    scenario: Scenario
    python: Path
    entry: Path
    log: Path
    hf_home: Path
    port: int = 0
    proc: subprocess.Popen | None = None

    def argv(self) -> list[str]:
        s = self.scenario
        if s.engine == "sglang":
            return [
                str(self.python),
                str(self.entry),
                "serve",
                "--model-path",
                s.target,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--api-key",
                SECRET_API_KEY,
                "--speculative-algorithm",
                "DFLASH",
                "--speculative-draft-model-path",
                s.drafter,
                "--speculative-num-draft-tokens",
                str(s.k + 1),
            ]
        spec = (
            s.spec_json
            if s.spec_json is not None
            else json.dumps({"method": s.method, "model": s.drafter, "num_speculative_tokens": s.k})
        )
        words = (
            spec.split(" ")
            if s.spec_json is not None and s.spec_json.startswith("{") and '"' not in s.spec_json
            else [spec]
        )
        return [
            str(self.python),
            str(self.entry),
            "serve",
            s.target,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--api-key",
            SECRET_API_KEY,
            "--speculative-config",
            *words,
        ]

    def env(self) -> dict:
        e = {
            "PATH": f"{self.python.parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.root),
            "HF_HOME": str(self.hf_home),
            "HF_TOKEN": SECRET_HF_TOKEN,
            "VLLM_LOG_STATS_INTERVAL": "10",
            "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
        }
        e.update(self.scenario.env)
        if not self.scenario.dist_info:
            e["PYTHONPATH"] = str(self.root / "src")
        return e


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


def _safetensors_header(tensors: dict) -> bytes:
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = 1
        for d in shape:
            n *= d
        size = n * (8 if dtype == "I64" else 2)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw, offset


def build(root: Path, scenario: Scenario, log_size: int = 400_000, big_log: bool = False) -> Deployment:
    root = Path(root)
    real = Path(os.path.realpath(sys.executable))
    venv = root / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    _write(
        venv / "pyvenv.cfg",
        f"home = {real.parent}\ninclude-system-site-packages = false\nversion = {sys.version.split()[0]}\n",
    )
    py = venv / "bin" / "python3"
    if not py.exists():
        py.symlink_to(real)
    site = venv / "lib" / f"python{ver}" / "site-packages"
    # an install without dist-info is a source checkout on PYTHONPATH (Deployment.env sets it)
    pkg_root = site if scenario.dist_info else root / "src"
    for rel, text in engine_files(scenario).items():
        _write(pkg_root / rel, text.lstrip("\n"))
    hub = root / "hf" / "hub"
    for repo, config, card, tensors in (
        (scenario.target, scenario.target_config, None, {}),
        (scenario.drafter, scenario.drafter_config, scenario.drafter_card, scenario.drafter_tensors),
    ):
        rev = f"{abs(hash(repo)) % (1 << 40):010x}" + "0" * 30
        rdir = hub / f"models--{repo.replace('/', '--')}"
        _write(rdir / "refs" / "main", rev)
        snap = rdir / "snapshots" / rev
        _write(snap / "config.json", json.dumps(config, indent=2))
        if card:
            _write(snap / "README.md", card)
        if tensors:
            head, data_bytes = _safetensors_header(tensors)
            _write(snap / "model.safetensors", head)
            with open(snap / "model.safetensors", "r+b") as fh:
                fh.truncate(len(head) + data_bytes)  # sparse: the right size, no disk used, data never read
    metrics = _metrics_text(scenario) if scenario.engine == "vllm" else ""
    _write(root / "metrics.prom", metrics)
    entry = venv / "bin" / scenario.engine
    _write(entry, f"#!{py}\n" + SERVER_SCRIPT.replace("@METRICS@", str(root / "metrics.prom")))
    entry.chmod(0o755)
    log = root / "logs" / "vllm.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if scenario.engine == "sglang":
        write_sglang_log(log, scenario)
    elif big_log:
        write_big_log(log, scenario, log_size)
    else:
        write_log(log, scenario, size=log_size)
    return Deployment(root, scenario, py, entry, log, root / "hf")


def _metrics_text(s: Scenario) -> str:
    drafts = 120_000
    acc = [int(r * drafts) for r in s.curve]
    lines = [
        "# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.",
        "# TYPE vllm:spec_decode_num_drafts_total counter",
        f'vllm:spec_decode_num_drafts_total{{engine="0",model_name="{s.target}"}} {drafts}.0',
        "# TYPE vllm:spec_decode_num_draft_tokens_total counter",
        f'vllm:spec_decode_num_draft_tokens_total{{engine="0",model_name="{s.target}"}} {drafts * s.k}.0',
        "# TYPE vllm:spec_decode_num_accepted_tokens_total counter",
        f'vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="{s.target}"}} {sum(acc)}.0',
        "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter",
    ]
    lines += [
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="{s.target}",position="{i}"}} {a}.0'
        for i, a in enumerate(acc)
    ]
    lines.append("# TYPE vllm:num_requests_running gauge")
    lines.append(f'vllm:num_requests_running{{engine="0",model_name="{s.target}"}} 4.0')
    lines.append("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5")
    return "\n".join(lines) + "\n"


SERVER_SCRIPT = r"""# A stand-in for `vllm serve` in dflash-doctor tests: serves /metrics, does nothing else.
import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
body = open("@METRICS@", "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/metrics":
            self.send_error(404); return
        self.send_response(200); self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(dep: Deployment) -> Deployment:
    """Start the fake server (stdout/stderr appended to the log). The caller stops it with stop_server."""
    dep.port = dep.port or free_port()
    with open(dep.log, "ab") as out:  # the child keeps its own copy of the descriptor
        dep.proc = subprocess.Popen(
            dep.argv(), stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=dep.env(), cwd=str(dep.root)
        )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if dep.proc.poll() is not None:
            raise RuntimeError(f"fake server exited with {dep.proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", dep.port), timeout=0.2):
                return dep
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("fake server did not listen within 15 s")


def stop_server(dep: Deployment) -> None:
    from tests.sshd import stop_process

    stop_process(dep.proc)
