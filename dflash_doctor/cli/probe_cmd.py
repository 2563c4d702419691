"""`dflash-doctor probe` (clean-room draft-and-verify with ablations) and `dflash-doctor layer-offset`.

torch and transformers are imported inside the commands only, so `--help` stays instant and a
missing probe extra is a one-line error.
"""

from __future__ import annotations

import contextlib

import typer

from ..collect.inputs import FileInputs, require_inputs
from ..errors import DoctorError, MissingExtra, UsageError
from ..hosts import HostError
from ..hosts.connect import open_host
from ..probe.config import load_drafter_config
from ..probe.layer_offset import DUMP_HINT, match_dump, read_dump
from ..probe.prompts import portable_rows
from ..probe.remote import run_remote_probe
from ..probe.runner import (
    parse_ablate,  # no torch at import time
    run_probe,
)
from ..probe.runs import LayerOffsetRun, ProbeRun
from ..probe.saved_result import SavedProbe, probe_pair_mismatch
from ..render.style import Format
from ..services.doctor import compare_with_served, served_evidence
from .common import AllowSSHExecOpt, OutputOpt, TextOrJson, TextOrJsonOpt, examples, number
from .output import Output
from .progress import ProbeProgress


def _need_torch() -> None:
    for mod in ("torch", "transformers"):
        try:
            __import__(mod)
        except ImportError:
            raise MissingExtra("probe", mod) from None


def register(app: typer.Typer) -> None:
    @app.command(
        "probe",
        epilog=examples(
            "dflash-doctor probe --target Qwen/Qwen3-8B --drafter z-lab/Qwen3-8B-DFlash-b16 --ablate swa,offset",
            "dflash-doctor probe --target T --drafter D --log served.log     # served vs probe",
            "dflash-doctor probe --target T --drafter D --format json -o probe.json",
            "dflash-doctor probe --target T --drafter D --host ssh://ops@gpu-7 --remote-python /opt/venv/bin/python",
        ),
    )
    def probe(
        target: str = typer.Option(
            ..., "--target", metavar="DIR|REPO_ID", help="Target checkpoint directory or cached repo id."
        ),
        drafter: str = typer.Option(
            ..., "--drafter", metavar="DIR|REPO_ID", help="DFlash drafter (config.json + safetensors)."
        ),
        prompts: str = typer.Option(
            "builtin",
            "--prompts",
            metavar="builtin|FILE.jsonl",
            help="Prompts: the built-in set, or JSONL lines (prompt | messages | input_ids).",
        ),
        max_new_tokens: int = typer.Option(
            128,
            "--max-new-tokens",
            metavar="N",
            help="Tokens to generate per prompt.",
            parser=number("--max-new-tokens", 1, 1 << 20, integer=True),
        ),
        block_size: int | None = typer.Option(
            None,
            "--block-size",
            metavar="B",
            help="Draft block size (default: the drafter's).",
            parser=number("--block-size", 1, 4096, integer=True),
        ),
        device: str = typer.Option("auto", "--device", metavar="cpu|cuda|auto", help="Where to run."),
        dtype: str | None = typer.Option(
            None, "--dtype", metavar="DTYPE", help="float32, float16 or bfloat16 (default: the checkpoint's)."
        ),
        temperature: float = typer.Option(
            0.0,
            "--temperature",
            metavar="T",
            help="0 = greedy (lossless); > 0 uses the reference's sampling rule.",
            parser=number("--temperature", 0, 100),
        ),
        ablate: str | None = typer.Option(
            None, "--ablate", metavar="offset,swa,context", help="Ablations to run (comma list)."
        ),
        end_rule: str = typer.Option(
            "reference", "--end-rule", metavar="reference|budget", help="reference (full block every step) or budget."
        ),
        limit: int | None = typer.Option(
            None,
            "--limit",
            metavar="N",
            help="Use only the first N prompts.",
            parser=number("--limit", 1, 10**9, integer=True),
        ),
        seed: int = typer.Option(
            0,
            "--seed",
            metavar="N",
            help="Sampling seed (temperature > 0).",
            parser=number("--seed", 0, 2**63 - 1, integer=True),
        ),
        log: list[str] = typer.Option(
            [], "--log", "-l", metavar="LOG", help="Served log to compare the probe with (repeatable)."
        ),
        host: str | None = typer.Option(
            None,
            "--host",
            metavar="ssh://USER@HOST[:PORT]",
            help="Run on this host (or an ssh_config alias) with its own Python and GPUs.",
        ),
        remote_python: str = typer.Option(
            "python3", "--remote-python", metavar="PYTHON", help="The host's Python that has torch + transformers."
        ),
        ssh_config: str | None = typer.Option(None, "--ssh-config", metavar="FILE", help="ssh_config file for --host."),
        accept_new_host_key: bool = typer.Option(
            False, "--accept-new-host-key", help="Trust an unknown SSH host key on first use."
        ),
        allow_ssh_exec: bool = AllowSSHExecOpt,
        timeout: float = typer.Option(
            3600.0,
            "--timeout",
            metavar="SECONDS",
            help="Time the remote probe may run.",
            parser=number("--timeout", 0, 7 * 86400, above=True),
        ),
        force_probe_pair: bool = typer.Option(
            False, "--force-probe-pair", help="Compare with --log even when the log serves another pair."
        ),
        fmt: TextOrJson = TextOrJsonOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """Run the drafter in a clean-room DFlash loop; measure τ.

        At temperature 0 the output must equal the target's own greedy decoding (lossless). Exit 1 when it
        does not or the served τ fails against the probe, 3 when the served log gave nothing to compare,
        0 otherwise."""

        out = Output(fmt=Format(fmt.value), path=output)
        served = None
        if log:  # a served log that is not there, or of another pair, is a mistake to say before a long probe
            for w in require_inputs(FileInputs(logs=log)):
                out.warn(w)
            served, warnings = served_evidence(log)
            for w in warnings:
                out.warn(w)
            why = probe_pair_mismatch(
                served, SavedProbe("probe", {"drafter": drafter, "target": target}), what="this probe"
            )
            if why and not force_probe_pair:
                raise UsageError(
                    why.replace("the deployment serves", "--log serves"),
                    hint="probe the served pair, or pass --force-probe-pair to compare anyway",
                )
        names = _parse_ablate(ablate)
        job = dict(
            target=target,
            drafter=drafter,
            prompts=prompts,
            max_new_tokens=max_new_tokens,
            block_size=block_size,
            device=device,
            dtype=dtype,
            temperature=temperature,
            ablate=names,
            end_rule=end_rule,
            limit=limit,
            seed=seed,
        )
        if host:
            rows = portable_rows(prompts, limit)
            try:
                with (
                    open_host(
                        host,
                        ssh_config=ssh_config,
                        accept_new_host_key=accept_new_host_key,
                        allow_ssh_exec=allow_ssh_exec,
                    ) as h,
                    ProbeProgress(out) as progress,
                ):
                    out.info(f"running the probe on {h.name} with {remote_python}")
                    result = run_remote_probe(
                        h,
                        {**job, "ablate": list(names), "prompt_rows": rows},
                        python=remote_python,
                        timeout=timeout,
                        progress=progress,
                    )
            except HostError as exc:
                raise DoctorError(exc.message, hint=exc.hint) from None
        else:
            _need_torch()

            with ProbeProgress(out) as progress:
                result = run_probe(progress=progress, **job)
        if served is not None:
            result["served_comparison"] = compare_with_served(result, served)
        run = ProbeRun(result)
        out.show(run)
        return run.exit_code

    @app.command(
        "layer-offset",
        epilog=examples(
            "dflash-doctor layer-offset --target Qwen/Qwen3-8B --dump taps.safetensors --drafter ./drafter"
        ),
    )
    def layer_offset(
        target: str = typer.Option(
            ..., "--target", metavar="DIR|REPO_ID", help="Target checkpoint directory or cached repo id."
        ),
        dump: str = typer.Option(
            ...,
            "--dump",
            metavar="FILE.safetensors",
            help="A dump of input_ids + hidden_states.0, .1, etc. captured from the engine.",
        ),
        drafter: str | None = typer.Option(
            None, "--drafter", metavar="DIR", help="Drafter whose target_layer_ids define the expected taps."
        ),
        device: str = typer.Option("auto", "--device", metavar="cpu|cuda|auto", help="Where to run."),
        dtype: str | None = typer.Option(
            None, "--dtype", metavar="DTYPE", help="Target dtype (default: the checkpoint's)."
        ),
        fmt: TextOrJson = TextOrJsonOpt,
        output: str | None = OutputOpt,
    ) -> int:
        """Which hidden state each captured tensor is.

        And the offset against the drafter's taps.

        Exit 0 when the taps match the drafter's target_layer_ids, 1 when they are offset, 3 when the offset
        cannot be determined."""

        out = Output(fmt=Format(fmt.value), path=output)
        _need_torch()

        from ..probe.target import load_target, resolve_device, resolve_dtype  # (imports torch)

        with _hinted(DRAFTER_HINT):
            cfg = load_drafter_config(drafter) if drafter else None
        with _hinted(DUMP_HINT):
            ids, taps = read_dump(dump)
        tgt = load_target(target, resolve_device(device), resolve_dtype(dtype))
        if int(ids.max()) >= tgt.vocab_size:
            raise UsageError(
                f"the dump's input_ids go up to {int(ids.max())}, beyond the target's vocabulary",
                hint="the dump was captured from another model: give --target the checkpoint the engine served",
            )
        result = match_dump(tgt, ids, taps, cfg.target_layer_ids if cfg else None)
        run = LayerOffsetRun(result, drafter_given=cfg is not None)
        out.show(run)
        return run.exit_code


DRAFTER_HINT = (
    "--drafter is the drafter's checkpoint directory: its config.json names target_layer_ids "
    "(or dflash_config / eagle_aux_hidden_state_layer_ids); leave --drafter out to see the taps alone"
)


@contextlib.contextmanager
def _hinted(hint: str):
    """A usage error from inside without a hint of its own gets `hint` (every layer-offset error says what to do)."""
    try:
        yield
    except UsageError as exc:
        if exc.hint:
            raise
        raise UsageError(exc.message, hint=hint) from None


def _parse_ablate(text):
    return parse_ablate(text)
