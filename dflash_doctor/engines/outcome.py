"""One outcome per deployment: what this engine install does with this drafter, launched this way.

    honoured   the drafter runs and its sliding-window layers keep their windows
    ignored    the drafter runs with every layer as full attention (the window, and the causal mask
               sliding layers need, silently dropped)
    refused    the engine cannot serve this drafter with this launch: it fails at config or load time
               (the engine's own error text, and the launch that works)
    absent     the release has no such method / drafter architecture at all
    not-applicable  the drafter has no sliding-window layers (nothing to honour or ignore)

Refused and absent are facts about the launch, not causes of low acceptance: a server that cannot
start with this drafter produced no acceptance numbers with it.

The runner (vLLM V1 or V2) is decided the way the engine decides it, read from its source: an
explicit VLLM_USE_V2_MODEL_RUNNER (including 0) first, parsed as the release parses it; unset, the
release's own rules in order (e.g. 0.26–0.28 force V2 for a mixed sliding/full drafter; 0.29+ make V2
the default). A rule that depends on something not known (is the target a "default V2" model?)
keeps both runners open; the outcome is still decided when both runners give the same one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..evidence.engine_facts import EngineAnalysis
from ..models.engine_support import first_release
from .answers import CERTAIN, LIKELY, UNDECIDED, Answer, Cite

HONOURED, IGNORED, REFUSED, ABSENT, NOT_APPLICABLE = "honoured", "ignored", "refused", "absent", "not-applicable"
ENV = "VLLM_USE_V2_MODEL_RUNNER"


@dataclass(frozen=True)
class Deployment:
    """What the outcome depends on besides the engine's source (any field may be unknown: None)."""

    drafter_architectures: tuple[str, ...] = ()
    drafter_method: str | None = None  # "dflash" | "dflash2" | "eagle3" | … (from the drafter config)
    swa_mix: str | None = None  # "none" | "all" | "mixed" (the drafter's layer_types), None: unknown
    target_architectures: tuple[str, ...] = ()
    target_hybrid: bool | None = None  # linear-attention (GatedDeltaNet) layers in the target
    env: dict[str, str] = field(default_factory=dict)  # the serving process's environment (relevant part)
    env_known: bool = False  # True when env is the process's real environment (unset means unset)


@dataclass(frozen=True)
class Outcome:
    value: str  # HONOURED | IGNORED | REFUSED | ABSENT | NOT_APPLICABLE | UNDECIDED
    certainty: str
    sentence: str
    runner: str | None = None  # "V1" | "V2" (vLLM)
    runner_why: str = ""
    error: str | None = None  # the engine's own error text (refused / absent)
    works: str | None = None  # the launch that works (refused / absent)
    layer_map: Answer | None = None  # the target_layer_ids mapping on the runner in use
    cites: tuple[Cite, ...] = ()

    @property
    def decided(self) -> bool:
        return self.value != UNDECIDED

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "certainty": self.certainty,
            "sentence": self.sentence,
            "runner": self.runner,
            "runner_why": self.runner_why,
            "error": self.error,
            "works": self.works,
            "layer_map": self.layer_map.to_dict() if self.layer_map else None,
            "cites": [c.describe() for c in self.cites],
        }


def decide(a: EngineAnalysis, dep: Deployment) -> Outcome:
    who = f"{a.engine} {a.version.value or '(version unknown)'}"
    if not a.dflash.decided:
        return Outcome(
            UNDECIDED, UNDECIDED, f"could not decide whether {who} has DFlash: {a.dflash.why}", cites=a.dflash.cites
        )
    if not a.dflash.value:
        what = "--speculative-algorithm DFLASH" if a.engine == "sglang" else "speculative method 'dflash'"
        return Outcome(
            ABSENT,
            a.dflash.certainty,
            f"{who} has no DFlash: {what} does not exist in this release",
            error=f"no {what} in {who}",
            works=_upgrade(a.engine, "dflash"),
            cites=a.dflash.cites,
        )
    arch = next((x for x in dep.drafter_architectures if "DFlash" in x or "Dflash" in x), None)
    if arch and arch not in a.dflash.value:
        return Outcome(
            ABSENT,
            a.dflash.certainty,
            f"{who} has DFlash ({', '.join(a.dflash.value)}) but no {arch}: "
            "the drafter's architecture is not registered",
            error=f"{arch} is not a registered draft model in {who}",
            works=_upgrade(a.engine, arch),
            cites=a.dflash.cites,
        )
    if a.engine != "vllm" or a.runner is None:
        return _on_runner(a, dep, None, "", arch)
    runners, why, refused, assumed = _runners(a, dep, arch)
    if refused is not None:
        return refused
    outs = [_on_runner(a, dep, r, why, arch) for r in runners]
    if assumed:
        outs = [_assuming(o, assumed) for o in outs]
    if len(outs) == 1:
        return outs[0]
    if len({o.value for o in outs}) == 1 and all(o.decided for o in outs):
        o = outs[0]
        lm = o.layer_map if len({(x.layer_map.value if x.layer_map else None) for x in outs}) == 1 else None
        return Outcome(
            o.value,
            LIKELY if o.certainty == CERTAIN else o.certainty,
            o.sentence.replace(f" on the {o.runner} runner", "") + f" (on either runner: {why})",
            None,
            why,
            o.error,
            o.works,
            lm,
            o.cites,
        )
    return Outcome(
        UNDECIDED,
        UNDECIDED,
        f"could not decide: {who} picks the runner by a rule this probe cannot "
        f"evaluate here ({why}), and the runners differ: " + "; ".join(f"{o.runner}: {o.value}" for o in outs),
        None,
        why,
        cites=outs[0].cites,
    )


def _assuming(o: Outcome, assumed: list[str]) -> Outcome:
    if o.certainty != CERTAIN:
        return o
    note = "; assuming " + " and ".join(assumed)
    return Outcome(
        o.value, LIKELY, o.sentence + note, o.runner, o.runner_why + note, o.error, o.works, o.layer_map, o.cites
    )


def _runners(a: EngineAnalysis, dep: Deployment, arch: str | None) -> tuple[list[str], str, Outcome | None, list[str]]:
    """(possible runners, why, a refusal already decided by the runner choice, assumptions made)."""
    rr = a.runner
    assert rr is not None  # (decide asks only when the runner rules were read)
    who = f"vllm {a.version.value or ''}".strip()
    raw = dep.env.get(ENV) if dep.env else None
    if raw is not None and rr.env_parse.value == "int":
        try:
            explicit = bool(int(raw.strip()))
        except ValueError:
            err = f"invalid literal for int() with base 10: {raw!r}"
            return (
                [],
                "",
                Outcome(
                    REFUSED,
                    CERTAIN,
                    f"{who} cannot start: {ENV}={raw!r} is parsed with int()",
                    error=err,
                    works=f"set {ENV}=1 or {ENV}=0 (or unset it)",
                    cites=rr.env_parse.cites,
                ),
                [],
            )
        runner = "V2" if explicit else "V1"
        why = f"{ENV}={raw.strip()} (explicit)"
        if runner == "V2" and rr.v2_dflash.value is False:
            return (
                [],
                why,
                Outcome(
                    REFUSED,
                    CERTAIN,
                    f"{who} refuses {ENV}=1 with method 'dflash' at config time: its V2 runner does not run DFlash",
                    "V2",
                    why,
                    error=rr.v2_error,
                    works=f"unset {ENV} (or set it to 0): this release runs DFlash on the V1 runner",
                    cites=rr.v2_dflash.cites,
                ),
                [],
            )
        return [runner], why, None, []
    assumed: list[str] = []
    if raw is None and not dep.env_known:
        note = f"{ENV} not collected"
        assumed.append(f"{ENV} is unset (the server's environment was not read)")
    else:
        note = f"{ENV} unset"
    if rr.unset.value == "v1":
        return ["V1"], f"{note}: this release then uses the V1 runner", None, assumed
    if rr.unset.value != "engine" or not rr.rules.decided:
        return ["V1", "V2"], f"{note}; the default rule was not read", None, assumed
    possible: list[str] = []
    reasons: list[str] = []
    for cond, runner in rr.rules.value:
        if cond == "explicit":
            continue
        holds, why = _condition(cond, a, dep, arch)
        if holds == "assumed-off":
            assumed.append(why)
            continue
        if holds is True:
            possible.append(runner.upper())
            reasons.append(why)
            break
        if holds is None:
            possible.append(runner.upper())
            reasons.append(f"unless {why}")
    runners = list(dict.fromkeys(possible)) or ["V1"]
    return runners, f"{note}; " + ", ".join(r for r in reasons if r), None, assumed


def _condition(cond: str, a: EngineAnalysis, dep: Deployment, arch: str | None) -> tuple[bool | None | str, str]:
    rr = a.runner
    assert rr is not None  # (a condition of the runner rules: they were read)
    neg = cond.startswith("not ")
    name = cond[4:] if neg else cond
    val: bool | None
    if name == "mixed-dflash":
        val = None if dep.swa_mix is None else dep.swa_mix == "mixed"
        why = "the drafter mixes sliding and full layers (the engine forces V2)"
    elif name == "dflash2":
        val = arch == "DFlash2DraftModel" if arch else None
        why = "a DFlash2 drafter (the engine forces V2)"
    elif name == "v2-unsupported":
        # the speculative method is the one feature we know; others (LoRA, pipeline parallelism…) are launch flags
        if rr.v2_dflash.value is False:
            return True, "the V2 runner does not support method 'dflash' here"
        # the other features it lists are launch options (LoRA, pipeline parallelism, …): off in a plain launch
        return "assumed-off", "no launch option the V2 runner does not support (it would fall back to V1)"
    elif name == "default-v2-model":
        archs = set(dep.target_architectures)
        if archs & set(rr.default_v2_archs):
            val = True
        elif dep.target_hybrid:
            val = False
        else:
            val = None
        why = "the target is not a default-V2 model" if neg else "the target is a default-V2 model"
        if val is not None and neg:
            return (not val), why
        return val, why
    elif name == "otherwise":
        return True, "the release's default"
    elif name in ("no-triton", "rocm", "diffusion", "dspark") or name.startswith("other"):
        return False, ""  # platform or unrelated features, assumed off for a GPU DFlash launch
    else:
        return None, name
    if val is None:
        return None, why
    return ((not val) if neg else val), why


def _on_runner(a: EngineAnalysis, dep: Deployment, runner: str | None, why: str, arch: str | None) -> Outcome:
    who = f"{a.engine} {a.version.value or '(version unknown)'}"
    on = f" on the {runner} runner" if runner else ""
    lm = a.layer_map.get(runner or "worker") if runner else a.layer_map.get("worker")
    rules = a.swa_for(arch)
    rr = a.runner
    mixed = dep.swa_mix == "mixed"
    if runner == "V1" and rr is not None and rr.v1_rejects_mixed.value and mixed:
        return Outcome(
            REFUSED,
            CERTAIN,
            f"{who} rejects a mixed sliding/full DFlash drafter on the V1 runner at config time ({why})",
            runner,
            why,
            rr.v1_error,
            f"unset {ENV} or set it to 1: the V2 runner serves mixed drafters",
            lm,
            rr.v1_rejects_mixed.cites,
        )
    if rules is None:
        return Outcome(
            UNDECIDED,
            UNDECIDED,
            f"could not decide: the DFlash drafter module of {who} was not read",
            runner,
            why,
            layer_map=lm,
        )
    if dep.swa_mix is None:
        return Outcome(
            UNDECIDED,
            UNDECIDED,
            "could not decide: whether the drafter has sliding-window layers is unknown",
            runner,
            why,
            layer_map=lm,
            cites=rules.mixed.cites,
        )
    if mixed and rules.mixed.value == "refused":
        return Outcome(
            REFUSED,
            rules.mixed.certainty,
            f"{who} refuses any mixed sliding/full DFlash drafter when it loads it, whatever the runner",
            runner,
            why,
            rules.error,
            "no launch of this release serves it: " + _upgrade(a.engine, "mixed"),
            lm,
            rules.mixed.cites,
        )
    if mixed and rules.mixed.value == "refused-unless-v2" and runner == "V1":
        return Outcome(
            REFUSED,
            rules.mixed.certainty,
            f"{who} refuses a mixed sliding/full DFlash drafter on the V1 runner when it loads it ({why})",
            runner,
            why,
            rules.error,
            f"unset {ENV} or set it to 1: the V2 runner serves mixed drafters",
            lm,
            rules.mixed.cites,
        )
    if not rules.mixed.decided or (mixed and rules.mixed.value not in ("allowed", "refused-unless-v2")):
        return Outcome(
            UNDECIDED,
            UNDECIDED,
            f"could not decide what {who} does with a mixed drafter: {rules.mixed.why}",
            runner,
            why,
            layer_map=lm,
            cites=rules.mixed.cites,
        )
    if dep.swa_mix == "none":
        return Outcome(
            NOT_APPLICABLE,
            CERTAIN,
            f"the drafter has no sliding-window layers; {who} serves it{on}",
            runner,
            why,
            layer_map=lm,
        )
    read = rules.reads_layer_types
    if not read.decided:
        return Outcome(
            UNDECIDED,
            UNDECIDED,
            f"could not decide whether {who} honours sliding windows: {read.why}",
            runner,
            why,
            layer_map=lm,
            cites=read.cites,
        )
    if read.value:
        causal = f"; {rules.causal.why}" if rules.causal else ""
        return Outcome(
            HONOURED,
            read.certainty,
            f"{who} honours the drafter's sliding windows per layer{on}{causal}",
            runner,
            why,
            layer_map=lm,
            cites=read.cites + rules.mixed.cites[:1],
        )
    return Outcome(
        IGNORED,
        read.certainty,
        f"{who} runs every drafter layer as full attention{on}: the sliding "
        "windows (and their causal mask) are silently ignored",
        runner,
        why,
        layer_map=lm,
        cites=read.cites,
    )


def _upgrade(engine: str, what: str) -> str:
    """The release that serves it, from the support table (the prior; the source of other releases is not here)."""
    rel = first_release(engine, what)
    if rel is None:
        return "use a release that supports it"
    return f"upgrade to {engine} >= {rel} (per the engine-support table)"
