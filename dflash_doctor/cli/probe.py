"""`dflash-doctor probe` (clean-room draft-and-verify with ablations) and `dflash-doctor layer-offset`.

torch and transformers are imported inside the commands only, so `--help` stays instant and a
missing probe extra is a one-line error.
"""

from __future__ import annotations

import json
import re
import sys
from typing import List, Optional

import typer

from ..errors import DoctorError, ExitCode, MissingExtra, UsageError
from ..render import Format
from ..textsafe import plain
from .common import FormatOpt, OutputOpt


def _need_torch() -> None:
    for mod in ("torch", "transformers"):
        try:
            __import__(mod)
        except ImportError:
            raise MissingExtra("probe", mod) from None


def _fmt(x, nd=2):
    return "—" if x is None else f"{x:.{nd}f}"


def render_probe_text(r: dict) -> str:
    acc = r["acceptance"]
    lines = [
        f"DFlash probe: {r['drafter']} on {r['target']}",
        f"  device {r['device']} {r['dtype']}, block {r['block_size']}, {r['prompts']['count']} prompts "
        f"(lengths {r['prompts']['min_length']}–{r['prompts']['max_length']}), up to {r['max_new_tokens']} new per prompt",
        f"  decoding: {r['decoding']}",
        f"  end of generation: {r['end_rule']['description']}",
        f"  taps: target_layer_ids {r['taps']['target_layer_ids']} -> HF hidden_states {r['taps']['hf_hidden_state_indices']}",
        "",
        f"  τ (mean acceptance length): {_fmt(acc['mean_acceptance_length'])} over {acc['steps']} steps",
        "  per position: " + " ".join(f"{p:.2f}" for p in acc["per_position"]),
        "  histogram: " + " ".join(f"{k}:{v}" for k, v in acc["histogram"].items()),
        f"  tokens/s: {_fmt(r['tokens_per_second'], 1)} (target greedy: {_fmt(r.get('target_greedy_tokens_per_second'), 1)})",
        "  lossless: " + ("n/a (sampling)" if r["lossless"] is None else "yes, equals the target's greedy output"
                          if r["lossless"] else f"NO — {len(r['mismatches'])} prompt(s) differ"),
    ]
    if r["ablations"]:
        lines += ["", "  ablations:"]
        for a in r["ablations"]:
            extra = f"  ({a['note']})" if a.get("note") else ""
            ll = "" if a.get("lossless") in (None, True) else "  NOT lossless"
            lines.append(f"    {a['name']:<16} τ {_fmt(a['mean_acceptance_length'])}  steps {a['steps']}{ll}{extra}")
    for c in r.get("served_comparison") or []:
        lines.append(f"  served vs probe [{c['status']}]: {c['message']}")
    for n in r.get("notes") or []:
        lines.append(f"  note: {n}")
    return "\n".join(lines) + "\n"


def render_offset_text(r: dict) -> str:
    lines = [f"layer-offset: {r['num_input_ids']} input ids, {r['num_hidden_states']} HF hidden states (0 = embeddings)"]
    for t in r["taps"]:
        lines.append(f"  {t['tensor']}: HF index {t['hf_index']} cosine {t['cosine']:.6f} margin {_fmt(t['margin'], 6)} "
                     + (f"rel.err {t['relative_error']:.2e} (runner-up {t['runner_up']}, {_fmt(t['error_ratio'], 1)}x worse)"
                        if t["relative_error"] > 0 else f"exact match (runner-up {t['runner_up']})")
                     + ("" if t["matched"] else "  NO CLOSE MATCH"))
    if "expected_hf_indices" in r:
        lines.append(f"  drafter target_layer_ids {r['target_layer_ids']} -> expected HF indices {r['expected_hf_indices']}")
        lines.append(f"  offset: {r['offset'] if r['offset'] is not None else 'undetermined'}"
                     + (f" ({r['offset_note']})" if r.get("offset_note") else ""))
        lines += [f"  {x}" for x in r.get("explanation", [])]
    return "\n".join(lines) + "\n"


def _served_comparison(result: dict, logs: list[str]) -> list[dict]:
    from ..check import run_checks
    from ..checks.probe_vs_served import ProbeVsServed
    from ..collect.files import gather_logs
    from ..evidence import EvidenceSet, Source
    from ..probe.evidence import add_probe_evidence

    ev = EvidenceSet()
    gather_logs(ev, logs)
    for what, why in ev.collection_errors:
        print(f"warning: {what}: {why}", file=sys.stderr)
    add_probe_evidence(ev, result, Source("command", "probe"))
    return [f.to_dict() for f in run_checks([ProbeVsServed()], ev)]


class ProbeProgress:
    """Progress of a probe run, local or streamed back from a host: a rich bar per pass
    ("<label>: prompt i/n") on a terminal, plain lines on stderr otherwise."""

    _STEP = re.compile(r"^(?P<label>.+?): prompt (?P<i>\d+)/(?P<n>\d+)")

    def __init__(self, out):
        self.out = out
        self.bar = None
        self.tasks: dict[str, int] = {}

    def __enter__(self):
        import sys

        if sys.stderr.isatty() and not self.out.quiet:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=Console(stderr=True, markup=False), transient=True)
            self.bar.start()
        return self

    def __call__(self, line: str) -> None:
        m = self._STEP.match(line)
        if self.bar is None or m is None:
            self.out.info(line)
            return
        from rich.text import Text

        label = plain(m.group("label"), 60)
        if label not in self.tasks:
            self.tasks[label] = self.bar.add_task(Text(label), total=int(m.group("n")))
        self.bar.update(self.tasks[label], completed=int(m.group("i")))

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def register(app: typer.Typer) -> None:
    @app.command("probe")
    def probe(
        target: str = typer.Option(..., "--target", help="Target checkpoint directory or cached repo id."),
        drafter: str = typer.Option(..., "--drafter", help="DFlash drafter directory (config.json + safetensors)."),
        prompts: str = typer.Option("builtin", "--prompts", help="builtin, or a JSONL file (prompt | messages | input_ids)."),
        max_new_tokens: int = typer.Option(128, "--max-new-tokens", help="Tokens to generate per prompt."),
        block_size: Optional[int] = typer.Option(None, "--block-size", help="Draft block size (default: the drafter's)."),
        device: str = typer.Option("auto", "--device", help="cpu, cuda or auto."),
        dtype: Optional[str] = typer.Option(None, "--dtype", help="float32, float16 or bfloat16 (default: the checkpoint's)."),
        temperature: float = typer.Option(0.0, "--temperature", help="0 = greedy (lossless); > 0 uses the reference's sampling rule."),
        ablate: Optional[str] = typer.Option(None, "--ablate", help="Comma list of offset, swa, context."),
        end_rule: str = typer.Option("reference", "--end-rule", help="reference (full block every step) or budget."),
        limit: Optional[int] = typer.Option(None, "--limit", help="Use only the first N prompts."),
        seed: int = typer.Option(0, "--seed", help="Sampling seed (temperature > 0)."),
        log: List[str] = typer.Option([], "--log", "-l", help="Served log to compare the probe with (repeatable)."),
        host: Optional[str] = typer.Option(None, "--host", help="Run on this host (ssh://user@host[:port] or an ssh_config alias) with its own Python and GPUs."),
        remote_python: str = typer.Option("python3", "--remote-python", help="The host's Python that has torch + transformers."),
        ssh_config: Optional[str] = typer.Option(None, "--ssh-config", help="ssh_config file for --host."),
        accept_new_host_key: bool = typer.Option(False, "--accept-new-host-key", help="Trust an unknown SSH host key on first use."),
        timeout: float = typer.Option(3600.0, "--timeout", help="Seconds the remote probe may run."),
        fmt: Format = FormatOpt,
        output: Optional[str] = OutputOpt,
    ) -> int:
        """Run the drafter in a clean-room DFlash implementation against its target and measure τ."""
        from .output import Output

        out = Output(fmt=fmt, path=output)
        names = _parse_ablate(ablate)
        job = dict(target=target, drafter=drafter, prompts=prompts, max_new_tokens=max_new_tokens,
                   block_size=block_size, device=device, dtype=dtype, temperature=temperature,
                   ablate=names, end_rule=end_rule, limit=limit, seed=seed)
        if host:
            from ..hosts import HostError, open_host
            from ..probe.prompts import portable_rows
            from ..probe.remote import run_remote_probe

            rows = portable_rows(prompts, limit)
            try:
                with open_host(host, ssh_config=ssh_config, accept_new_host_key=accept_new_host_key) as h, \
                        ProbeProgress(out) as progress:
                    out.info(f"running the probe on {h.name} with {remote_python}")
                    result = run_remote_probe(h, {**job, "ablate": list(names), "prompt_rows": rows},
                                              python=remote_python, timeout=timeout, progress=progress)
            except HostError as exc:
                raise DoctorError(exc.message, hint=exc.hint) from None
        else:
            _need_torch()
            from ..probe.runner import run_probe

            with ProbeProgress(out) as progress:
                result = run_probe(progress=progress, **job)
        if log:
            result["served_comparison"] = _served_comparison(result, log)
        out.write(json.dumps(result, indent=2) + "\n" if fmt == Format.JSON else render_probe_text(result))
        if result["lossless"] is False:
            return int(ExitCode.PROBLEMS)
        return int(ExitCode.OK)

    @app.command("layer-offset")
    def layer_offset(
        target: str = typer.Option(..., "--target", help="Target checkpoint directory or cached repo id."),
        dump: str = typer.Option(..., "--dump", help="safetensors dump: input_ids + hidden_states.0, .1, ..."),
        drafter: Optional[str] = typer.Option(None, "--drafter", help="Drafter whose target_layer_ids define the expected taps."),
        device: str = typer.Option("auto", "--device", help="cpu, cuda or auto."),
        dtype: Optional[str] = typer.Option(None, "--dtype", help="Target dtype (default: the checkpoint's)."),
        fmt: Format = FormatOpt,
        output: Optional[str] = OutputOpt,
    ) -> int:
        """Find which HF hidden-state index each captured tensor equals, and the offset against the drafter's taps."""
        from .output import Output

        out = Output(fmt=fmt, path=output)
        _need_torch()
        from ..probe.config import load_drafter_config
        from ..probe.layer_offset import match_dump, read_dump
        from ..probe.target import load_target, resolve_device, resolve_dtype

        cfg = load_drafter_config(drafter) if drafter else None
        ids, taps = read_dump(dump)
        tgt = load_target(target, resolve_device(device), resolve_dtype(dtype))
        if int(ids.max()) >= tgt.vocab_size:
            raise UsageError(f"the dump's input_ids go up to {int(ids.max())}, beyond the target's vocabulary")
        result = match_dump(tgt, ids, taps, cfg.target_layer_ids if cfg else None)
        if fmt == Format.JSON:
            out.write(json.dumps(result, indent=2) + "\n")
        else:
            out.write(render_offset_text(result))
        if cfg is not None and result.get("offset") not in (0,):
            return int(ExitCode.PROBLEMS)
        return int(ExitCode.OK)


def _parse_ablate(text):
    from ..probe.runner import parse_ablate  # no torch at import time

    return parse_ablate(text)
