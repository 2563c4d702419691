"""The fix plan: what to do first, what it fixes and what it buys — built over the ranking's causes.

The ranking says how likely each cause is; a user needs to know what to *do*. pip-audit answers with one
fix version per package; this answers with one plan per deployment:

- **Remedies per cause**, from data the project already has: an engine upgrade to the release that fixes
  it (the known-issues database's `fixed_in` for an entry matching this deployment, and the first row of
  models/engine_support.toml whose behaviour is the fixed one), otherwise the cause's own fix (a launch
  change, a different drafter, …).
- **Remedies that fix several causes merge**: one upgrade to the highest release any of them needs
  ("upgrade vLLM 0.20.1 → 0.26.0 or later: fixes swa-ignored and layer-offset"), with the τ expected once
  all of them are fixed.
- **Causes ordered by what fixing them buys**: confidence × (τ if fixed − τ now); a cause whose τ if fixed
  is unknown counts the whole gap to the pair's reference (an upper bound, or 1 without a reference).
  Steps are ordered by the sum over the causes they fix, and causes follow their step.
- **A cause a deeper one explains** is shown under it, not planned for: a cause that only the acceptance
  figures point at (no fact for it), when a more likely cause backed by a fact would buy at least as much.
- **One next command** that settles what is still open, with the names the evidence already holds
  (drafter, target, engine release, host); placeholders only for facts nobody has. The cheapest input that
  would change the plan comes first (a config file before an SSH run before a GPU probe). Nothing is proposed
  to settle a cause the engine's own installed source already settled, nor to separate causes one step fixes
  when that step is to be taken anyway: then the next step is the plan's first step, and a check afterwards
  of the τ it should reach. A healthy verdict proposes nothing.

Works from `Cause` objects and the evidence only, so it survives changes to how the causes are scored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..evidence import Cause, EvidenceSet
from ..evidence.acceptance import AcceptanceSummary
from ..evidence.model_facts import DrafterFacts
from ..evidence.serialise import to_jsonable
from ..interpret.baselines import pair_context
from ..interpret.known_issues import default_known_issues, match_deployment
from ..interpret.known_issues.deployment import deployment_from_evidence
from ..interpret.method import family, infer_method
from ..knowledge.causes import Knowledge
from ..models.engine_support import load_table
from ..names import Names, names_of
from ..textsafe import Placeholder, command
from ..versions import VersionError, parse_version

# Causes below this confidence are listed, not planned for (unless nothing reaches it: then the top one).
PLAN_FLOOR = 0.15
# A step whose causes are all less likely than this is conditional: "if these are the causes".
LIKELY = 0.5
# A cause at least this likely is settled: it needs its fix, not more evidence.
SETTLED = 0.9
# With the release unknown, a known issue is worth a conditional step only when its cause is ranked at least this.
RANKED_FLOOR = 0.1

ENGINE_NAMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "vllm-ascend": "vllm-ascend",
    "tensorrt-llm": "TensorRT-LLM",
    "llama.cpp": "llama.cpp",
}

# The evidence kind a missing-evidence line names, and what it costs to get (files < host < GPU).
COST = {
    "engine": 1,
    "engine-support": 1,
    "drafter": 1,
    "target": 1,
    "launch": 1,
    "workload": 1,
    "acceptance": 1,
    "metrics": 1,
    "engine-source": 2,
    "host": 2,
    "process": 2,
    "environment": 2,
    "probe": 3,
}


@dataclass(frozen=True)
class PlanCause:
    """A cause as the plan sees it: what fixing it buys, and which step fixes (or which cause explains) it."""

    id: str
    title: str
    confidence: float
    expected_tau: float | None
    gain: float | None  # τ if fixed − τ now
    gap_share: float | None  # of the gap to the pair's reference, the share fixing it alone closes
    value: float  # confidence × what fixing it buys: the ordering key
    step: int | None = None  # 1-based index of the step that fixes it
    explained_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "confidence": round(self.confidence, 3),
            "expected_tau_if_fixed": _r(self.expected_tau),
            "gain": _r(self.gain),
            "gap_share": _r(self.gap_share),
            "step": self.step,
            "explained_by": self.explained_by,
        }


@dataclass(frozen=True)
class Step:
    kind: str  # "upgrade-engine" | "engine" | "launch" | "drafter" | "target" | "workload" | "change"
    action: str  # one imperative line
    fixes: tuple[str, ...]  # cause ids, most valuable first
    settles: tuple[str, ...] = ()  # causes it explains away
    expected_tau: float | None = None
    conditional: bool = False  # its causes are all less likely than LIKELY
    details: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()  # where the release came from (known issue, support-table row)
    value: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "action": self.action,
            "fixes": list(self.fixes),
            "settles": list(self.settles),
            "expected_tau": _r(self.expected_tau),
            "conditional": self.conditional,
            "details": list(self.details),
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class FixPlan:
    tau_now: float | None
    reference_tau: float | None
    reference: str | None  # what the reference is
    causes: tuple[PlanCause, ...]  # ordered by what fixing them buys; explained ones after their explainer
    steps: tuple[Step, ...]
    next_command: str | None = None
    next_why: str | None = None
    names: Names = field(default_factory=Names)
    # (lowest τ, its workload, highest τ, its workload) of the pair when the workload is unknown
    reference_range: tuple | None = None

    def cause(self, cid: str) -> PlanCause | None:
        return next((c for c in self.causes if c.id == cid), None)

    def position(self, cid: str) -> int | None:
        """1-based position of a cause in the plan's order, counting only causes not explained by another."""
        n = 0
        for c in self.causes:
            if c.explained_by is None:
                n += 1
                if c.id == cid:
                    return n
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tau_now": _r(self.tau_now),
            "reference_tau": _r(self.reference_tau),
            "reference": self.reference,
            "reference_range": list(self.reference_range) if self.reference_range else None,
            "order": [c.to_dict() for c in self.causes],
            "steps": [s.to_dict() for s in self.steps],
            "next_command": self.next_command,
            "next_why": self.next_why,
            "names": to_jsonable(self.names),
        }


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


# ---------------------------------------------------------------------------------------------------
# names

_CODE = re.compile(r"`([^`\n]*)`")
_EMPTIED = "\x00"  # a code span fill() emptied (never in text: plain() escapes NUL)


def fill(text: str, names: Names) -> str:
    """Put the evidence's names into the commands (code spans) of a next step, fix or note.

    `--engine NAME==VERSION` becomes the release the evidence names, or goes away when the installed
    engine source was read (the source decides, not a release table); DRAFTER/D/PATH after a drafter
    flag, TARGET/T after a target flag, likewise. What nobody knows stays a placeholder."""
    if not text or "`" not in text:
        return text

    def one(m: re.Match) -> str:
        cmd = m.group(1)
        # Each name goes in as one shell word (a model name read from a log may hold `$(…)`, quotes, spaces).
        if names.engine_source_read:
            cmd = re.sub(r"\s*--engine\s+NAME==VERSION", "", cmd)
            if not cmd.strip():
                return _EMPTIED
        elif names.engine_spec:
            cmd = cmd.replace("NAME==VERSION", command(names.engine_spec))
        elif names.engine:
            cmd = cmd.replace("NAME==VERSION", command(names.engine) + "==VERSION")
        if names.drafter:
            drafter = command(names.drafter)
            cmd = re.sub(r"(--drafter\s+)(?:DRAFTER|PATH|DIR|D)\b", lambda x: x.group(1) + drafter, cmd)
            cmd = re.sub(r"(inspect-model\s+)DRAFTER\b", lambda x: x.group(1) + drafter, cmd)
        if names.target:
            target = command(names.target)
            cmd = re.sub(r"(--target\s+)(?:TARGET|PATH|DIR|T)\b", lambda x: x.group(1) + target, cmd)
        # a probe needs the pair: name it when the evidence does
        if re.match(r"dflash-doctor probe\b", cmd) and names.target and names.drafter and "--target" not in cmd:
            pair = command("--target", names.target, "--drafter", names.drafter)
            cmd = cmd.replace("dflash-doctor probe", f"dflash-doctor probe {pair}", 1)
        return f"`{cmd}`"

    out = _CODE.sub(one, text)
    # a hint that only asked for the release, once the source decided: drop it (and its parenthesis)
    return re.sub(r"\s*\(" + _EMPTIED + r"[^()]*\)|\s*" + _EMPTIED, "", out)


# ---------------------------------------------------------------------------------------------------
# remedies


@dataclass(frozen=True)
class _Remedy:
    key: tuple
    kind: str
    action: str
    version: Any = None  # a known_issues Version for an upgrade
    details: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


def _engine_upgrades(
    evidence: EvidenceSet, names: Names, cause_ids: Iterable[str], knowledge: Knowledge
) -> dict[str, _Remedy]:
    """cause id -> the upgrade that fixes it on this deployment's engine, from the known issues and the table
    (a cause's table_fix in causes.toml)."""

    if not names.engine:
        return {}
    wanted = set(cause_ids)
    try:
        current = parse_version(names.engine_version) if names.engine_version else None
    except VersionError:
        current = None
    found: dict[str, tuple[Any, list[str], list[str]]] = {}

    def put(cid: str, version, detail: str | None, source: str) -> None:
        if current is not None and version.key <= current.key:
            return
        v, details, sources = found.get(cid, (version, [], []))
        if version.key > v.key:
            v = version
        if detail and detail not in details:
            details.append(detail)
        sources.append(source)
        found[cid] = (v, details, sources)

    try:
        db = default_known_issues()
        matches = match_deployment(db, deployment_from_evidence(evidence))
    except Exception:  # the plan is advice: a damaged database must not cost the report
        matches = []
    for m in matches:
        if m.issue.cause in wanted:
            # what the fix asks beyond the upgrade itself ("… and run the V2 model runner (…)")
            rest = re.sub(r"^Upgrade (?:\S+ )?to [\w.+ -]+? or later(?:[;,]| and)?\s*", "", m.issue.fix or "").strip()
            extra = (rest[:1].upper() + rest[1:]) if rest else None
            put(
                m.issue.cause,
                m.issue.fixed_in,
                extra,
                f"{m.issue.reference()} (known issue {m.issue.id}, fixed in {m.issue.fixed_in})",
            )
    if current is not None:
        for cid, (v, source) in _table_upgrades(evidence, names, current, wanted, knowledge).items():
            put(cid, v, None, source)
    pretty = ENGINE_NAMES.get(names.engine, names.engine)
    out = {}
    for cid, (v, details, sources) in found.items():
        frm = f" {names.engine_version}" if names.engine_version else ""
        out[cid] = _Remedy(
            key=("upgrade-engine", names.engine),
            kind="upgrade-engine",
            # with the release unknown, the known issues are candidates: "if you run a release before X"
            action=f"upgrade {pretty}{frm} → {v} or later"
            if current is not None
            else f"if you run {pretty} before {v}: upgrade to {v} or later",
            version=v,
            details=tuple(details),
            sources=tuple(dict.fromkeys(sources)),
        )
    return out


def _table_upgrades(evidence: EvidenceSet, names: Names, current, wanted: set[str], knowledge: Knowledge) -> dict:
    """cause id -> (the first release of the engine whose engine_support.toml row has the cause's table_fix,
    where that was read)."""

    d = evidence.get(DrafterFacts)
    swa = None
    if d is not None and d.layers:
        sliding = sum(1 for x in d.layers if x.attention == "sliding")
        swa = "none" if not sliding else ("uniform" if sliding == len(d.layers) else "mixed")
    rows = sorted((r for r in load_table() if r.engine == names.engine), key=lambda r: parse_version(r.min).key)
    method = infer_method(evidence).known
    out = {}
    for cid, spec in knowledge.causes.items():
        if cid not in wanted or spec.table_fix is None:
            continue
        if spec.table_fix.methods and method is not None and family(method) not in spec.table_fix.methods:
            continue  # the row's behaviour is another method's: an upgrade does not fix it for this one
        for r in rows:
            v = parse_version(r.min)
            if v.key > current.key and spec.table_fix.fixes(r, swa):
                out[cid] = (v, f"models/engine_support.toml: {names.engine} {r.min}–{r.max}")
                break
    return out


def _plannable(causes: Sequence[Cause], explained: dict[str, str], knowledge) -> list[Cause]:
    """Causes the plan gives a step: not explained by another, not contradicted (evidence says its fix would not
    help), likely enough (or the top one when none is)."""
    open_ = [c for c in causes if c.id not in explained and not _contradicted(c, knowledge)]
    return [c for c in open_ if c.confidence >= PLAN_FLOOR] or open_[:1]


def _release_only_step(rem: _Remedy) -> Step:
    """The release's known issues are advice even when no ranked cause is theirs: the version drives the plan."""
    return Step(
        kind="upgrade-engine",
        action=rem.action,
        fixes=(),
        conditional=True,
        details=rem.details,
        sources=rem.sources,
    )


def _contradicted(c: Cause, knowledge) -> str | None:
    """Why the cause's own fix would not help, when evidence cited against it says so (a rule with
    contradicts_fix): the plan then does not advise that fix."""
    for x in c.evidence_against:
        for rule in knowledge.rules_for(x.observation):
            if rule.cause == c.id and rule.contradicts_fix:
                return x.text
    return None


def _if_you_run(m) -> str:
    """The conditions of a known-issue match that are not known to hold, as "if you run …" words."""
    unknown = [u for u in m.unknown if u]
    return "if " + "; ".join(unknown) if unknown else ""


def _release_upgrade(evidence: EvidenceSet, names: Names, ranked: set[str]) -> _Remedy | None:
    """One upgrade past the known issues that may affect this deployment's engine, with each issue and the conditions
    still unknown ("if method is one of dflash", "if the release is in …"): every issue of a named release (the
    version drives the plan), and with the release unknown the candidates whose cause the ranking holds."""
    if not names.engine:
        return None
    try:
        matches = match_deployment(default_known_issues(), deployment_from_evidence(evidence))
        current = parse_version(names.engine_version) if names.engine_version else None
    except (VersionError, Exception):  # the plan is advice: a damaged database must not cost the report
        return None
    matches = [
        m
        for m in matches
        if (current is not None and m.issue.fixed_in.key > current.key) or (current is None and m.issue.cause in ranked)
    ]
    if not matches:
        return None
    top = max((m.issue.fixed_in for m in matches), key=lambda v: v.key)
    pretty = ENGINE_NAMES.get(names.engine, names.engine)
    frm = f" {names.engine_version}" if names.engine_version else ""
    details = tuple(
        f"{m.issue.reference()}: {m.issue.title} ({m.quality.value}; fixed in {m.issue.fixed_in}"
        + (f"; {_if_you_run(m)}" if _if_you_run(m) else "")
        + ")"
        for m in matches
    )
    action = (
        f"upgrade {pretty}{frm} → {top} or later ({len(matches)} known issue(s) of this release)"
        if current is not None
        else f"if you run {pretty} before {top}: upgrade to {top} or later ({len(matches)} known issue(s) of those)"
    )
    return _Remedy(
        key=("upgrade-engine", names.engine),
        kind="upgrade-engine",
        action=action,
        version=top,
        details=details,
        sources=tuple(dict.fromkeys(f"{m.issue.reference()} (known issue {m.issue.id})" for m in matches)),
    )


def _own_remedy(c: Cause, knowledge: Knowledge) -> _Remedy:
    spec = knowledge.causes.get(c.id)
    kind = spec.remedy if spec is not None else "change"
    action = c.fix.strip().rstrip(".") if c.fix else f"fix {c.id}"
    return _Remedy(key=(kind, action), kind=kind, action=action)


def _merge(rems: list[_Remedy], names: Names) -> _Remedy:
    if rems[0].kind != "upgrade-engine":
        return rems[0]
    best = max(rems, key=lambda r: r.version.key)
    details = tuple(
        dict.fromkeys(
            d
            for r in sorted(rems, key=lambda r: r.version.key, reverse=True)
            for d in r.details
            if str(best.version) in d or r is best
        )
    )
    sources = tuple(dict.fromkeys(s for r in rems for s in r.sources))
    return _Remedy(best.key, best.kind, best.action, best.version, details, sources)


# ---------------------------------------------------------------------------------------------------
# the plan


def _reference(evidence: EvidenceSet) -> tuple[float | None, str | None, tuple | None]:
    """(τ the plan computes with, what it is, the range by workload when the workload is unknown). With several
    published workloads and none named, the plan computes with the lowest (a fix is not credited with a workload
    nobody stated) but the report shows the whole range, never the lowest as what to expect."""
    try:
        ctx = pair_context(evidence, evidence.baselines)
    except Exception:  # advice only
        return None, None, None
    if ctx.baseline is None:
        return None, None, None
    b = ctx.baseline
    tau = b.tau_at_k(ctx.dataset, ctx.k)
    ds, _, exact = b.tau_for(ctx.dataset)
    whose = "your reference" if b.trust == "yours" else f"{b.trust} reference"
    what = f"{b.id}, {whose}" + (f" on {ds}" if exact and ds != "any" else "") + f" at k = {ctx.k or b.k}"
    if not exact and len(b.tau) > 1:
        by = sorted((b.tau_at_k(name, ctx.k), name) for name in b.tau)
        return tau, what, (by[0][0], by[0][1], by[-1][0], by[-1][1])
    return tau, what, None


def _has_fact(c: Cause, knowledge) -> bool:
    return any(not knowledge.is_circumstantial(x.observation) for x in c.evidence_for)


def _explained(causes: Sequence[Cause], knowledge, gain) -> dict[str, str]:
    """A cause only the acceptance figures point at is explained by a likelier, fact-backed cause that buys as much:
    {explained cause: the cause that explains it}."""
    explained: dict[str, str] = {}
    for c in causes:
        if _has_fact(c, knowledge):
            continue
        for d in causes:
            if d is c or d.confidence <= c.confidence or not _has_fact(d, knowledge) or d.id in explained:
                continue
            gc, gd = gain(c), gain(d)
            if gd is not None and (gc is None or gd >= gc - 1e-9):
                explained[c.id] = d.id
                break
    return explained


def build_plan(
    causes: Sequence[Cause],
    evidence: EvidenceSet,
    knowledge: Knowledge,
    invocation: Sequence[str] | None = None,
    healthy: bool = False,
) -> FixPlan:
    acc = evidence.get(AcceptanceSummary)
    tau_now = acc.mean_acceptance_length if acc is not None else None
    ref_tau, ref_what, ref_range = _reference(evidence)
    names = names_of(evidence)
    gap = (ref_tau - tau_now) if ref_tau is not None and tau_now is not None and ref_tau > tau_now else None

    def gain(c: Cause) -> float | None:
        if c.expected_tau_if_fixed is None or tau_now is None:
            return None
        return max(0.0, c.expected_tau_if_fixed - tau_now)

    def value(c: Cause) -> float:
        g = gain(c)
        return c.confidence * (g if g is not None else (gap if gap is not None else 1.0))

    explained = _explained(causes, knowledge, gain)
    planned = _plannable(causes, explained, knowledge)
    # the plan never predicts less than τ now: above the lowest workload's figure, the most published caps it
    cap = ref_tau
    if cap is not None and tau_now is not None and cap <= tau_now:
        cap = ref_range[2] if ref_range and ref_range[2] > tau_now else None

    upgrades = _engine_upgrades(evidence, names, [c.id for c in planned], knowledge)
    release_step = _release_upgrade(evidence, names, {c.id for c in causes if c.confidence >= RANKED_FLOOR})
    if release_step is not None and "engine-bug" not in upgrades:
        # an engine bug on a release with known drafter-path bugs: the first A/B is the release past them
        upgrades["engine-bug"] = release_step
    groups: dict[tuple, list[tuple[Cause, _Remedy]]] = {}
    for c in planned:
        r = upgrades.get(c.id) or _own_remedy(c, knowledge)
        groups.setdefault(r.key, []).append((c, r))
    steps_raw = []
    for members in groups.values():
        members.sort(key=lambda cr: -value(cr[0]))
        rem = _merge([r for _, r in members], names)
        fixed = [c for c, _ in members]
        steps_raw.append((sum(value(c) for c in fixed), rem, fixed))
    steps_raw.sort(key=lambda s: -s[0])

    steps: list[Step] = []
    step_of: dict[str, int] = {}
    for i, (val, rem, fixed) in enumerate(steps_raw, 1):
        for c in fixed:
            step_of[c.id] = i
        settles = tuple(e for e, by in explained.items() if by in {c.id for c in fixed})
        steps.append(
            Step(
                kind=rem.kind,
                action=rem.action,
                fixes=tuple(c.id for c in fixed),
                settles=settles,
                expected_tau=_combined_tau(fixed, tau_now, cap),
                conditional=max(c.confidence for c in fixed) < LIKELY,
                details=tuple(fill(d, names) for d in rem.details),
                sources=rem.sources,
                value=val,
            )
        )

    if release_step is not None and not any(st.kind == "upgrade-engine" for st in steps):
        steps.append(_release_only_step(release_step))

    def plan_cause(c: Cause) -> PlanCause:
        g = gain(c)
        return PlanCause(
            id=c.id,
            title=c.title,
            confidence=c.confidence,
            expected_tau=c.expected_tau_if_fixed,
            gain=g,
            gap_share=(min(1.0, g / gap) if g is not None and gap else None),
            value=value(c),
            step=step_of.get(c.id),
            explained_by=explained.get(c.id),
        )

    ordered: list[Cause] = []
    for _, _, fixed in steps_raw:
        ordered += fixed
    ordered += sorted(
        (c for c in causes if c.id not in explained and c.id not in step_of),
        key=lambda c: (-value(c), -c.confidence, c.id),
    )
    out: list[PlanCause] = []
    for c in ordered:
        out.append(plan_cause(c))
        out += [plan_cause(e) for e in causes if explained.get(e.id) == c.id]
    cmd, why = (
        (None, None) if healthy else _next_command(causes, planned, names, invocation, knowledge, evidence, step_of)
    )
    if not healthy and cmd is None and why is None and steps:
        cmd, why = _recheck(steps[0], invocation, evidence)
    return FixPlan(
        tau_now=tau_now,
        reference_tau=ref_tau,
        reference=ref_what,
        reference_range=ref_range,
        causes=tuple(out),
        steps=tuple(steps),
        next_command=cmd,
        next_why=why,
        names=names,
    )


def _combined_tau(fixed: Sequence[Cause], tau_now: float | None, ref: float | None) -> float | None:
    """τ with every cause of a step fixed: the largest single estimate times the speed-ups of the others (their
    effects multiply), never above the pair's reference."""
    known = [(c, t) for c in fixed if (t := c.expected_tau_if_fixed) is not None]
    if not known or tau_now is None or tau_now <= 0:
        return None
    top, tau = max(known, key=lambda ct: ct[1])
    for c, t in known:
        if c is not top:
            tau *= max(1.0, t / tau_now)
    return min(tau, ref) if ref is not None else tau


def _missing_kinds(c: Cause) -> list[str]:
    return [m.split(":", 1)[0].strip() for m in c.missing_evidence if ":" in m]


def _source_settled(c: Cause, evidence: EvidenceSet) -> bool:
    """The engine's own installed source speaks for the cause: more evidence will not settle it further."""
    kinds = {e.ref: e.kind.value for e in evidence}
    return any(kinds.get(r) == "engine-source" for con in c.evidence_for if con.weight > 0 for r in con.refs)


def _next_command(
    causes: Sequence[Cause],
    planned: Sequence[Cause],
    names: Names,
    invocation: Sequence[str] | None,
    knowledge: Knowledge,
    evidence: EvidenceSet | None = None,
    step_of: dict[str, int] | None = None,
) -> tuple[str | None, str | None]:
    """The one command that would change the plan, cheapest evidence first; (None, None) when none would.
    (`causes`: every ranked cause, for callers' symmetry with build_plan; the plan's own are `planned`.)"""
    step_of = step_of or {}
    # what is still open: a planned cause not yet near-certain (one at ≥ 0.9 needs its fix, not more evidence),
    # and not settled by the engine's own source
    open_causes = [
        c for c in planned if c.confidence < SETTLED and not (evidence is not None and _source_settled(c, evidence))
    ]
    # a step that fixes a likely or settled cause is taken anyway: an SSH run or a GPU probe to separate the
    # causes it fixes would not change the plan (a file or a flag, which costs nothing, still may sharpen it)
    taken = {step_of[c.id] for c in planned if c.id in step_of and (c.confidence >= LIKELY or c not in open_causes)}
    if not open_causes:
        return None, None
    score: dict[str, float] = {}
    why: dict[str, list[str]] = {}
    for c in open_causes:
        for k in _missing_kinds(c):
            if COST.get(k, 2) > 1 and step_of.get(c.id) in taken:
                continue
            score[k] = score.get(k, 0.0) + (0.25 + c.confidence * (1 - c.confidence)) / COST.get(k, 2)
            why.setdefault(k, []).append(c.id)
    for kind in sorted(score, key=lambda k: (COST.get(k, 2), -score[k], k)):  # cheap evidence first
        ablations = sorted({a for c in open_causes if (a := _ablation(c, knowledge))})
        cmd = _command_for(kind, names, invocation, ablations)
        if cmd:
            return cmd, f"{_KIND_WORDS.get(kind, kind)} decides {', '.join(why[kind])}"
    top = next((c for c in open_causes if step_of.get(c.id) not in taken), None)
    if top is None:
        return None, None
    for m in _CODE.finditer(fill(top.next_step, names)):
        if m.group(1).startswith("dflash-doctor "):
            return m.group(1), f"settles {top.id}"
    return None, None


def _recheck(step: Step, invocation: Sequence[str] | None, evidence: EvidenceSet) -> tuple[str | None, str]:
    """Nothing left to learn before acting: do step 1, then look again — the τ it should bring is the test."""
    expect = f" (τ should reach ≈ {step.expected_tau:.2f})" if step.expected_tau is not None else ""
    words = list(invocation or ())
    if evidence.label.endswith(" (bundle)"):  # a bundle is a snapshot: look at the host it was collected on
        origin = evidence.label.removesuffix(" (bundle)")
        return command("dflash-doctor", "check", "host", origin), f"after step 1, check the host again{expect}"
    if words[1:3] == ["check", "host"] or words[1:2] == ["diagnose"]:
        what = "check the host again" if words[1] == "check" else "diagnose the new log"
        return command(*_without_view_flags(words)), f"after step 1, {what}{expect}"
    return None, f"after step 1, check again{expect}"


# flags that only change how a report looks; a command proposed to run again leaves them out
_VIEW_FLAGS = {"-v", "-vv", "-vvv", "--verbose", "--details"}
_VIEW_OPTIONS = {"--format", "-f", "--output", "-o"}


def _without_view_flags(words: Sequence[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w in _VIEW_FLAGS:
            pass
        elif w in _VIEW_OPTIONS:
            skip = True
        elif not any(w.startswith(o + "=") for o in _VIEW_OPTIONS):
            out.append(w)
    return out


_KIND_WORDS = {
    "drafter": "the drafter config",
    "target": "the target config",
    "engine": "the engine release",
    "engine-support": "the engine release",
    "engine-source": "the installed engine source",
    "probe": "a probe run on a GPU",
    "launch": "the launch command",
    "workload": "the workload",
    "acceptance": "acceptance numbers",
}


def _rerun(invocation: Sequence[str] | None, *extra: str) -> str | None:
    if not invocation or len(invocation) < 2 or invocation[1] != "diagnose":
        return None
    return command(*_without_view_flags(invocation), *extra)


def _ablation(c: Cause, knowledge: Knowledge) -> str | None:
    spec = knowledge.causes.get(c.id)
    return spec.ablation if spec is not None else None


def _command_for(kind: str, names: Names, invocation: Sequence[str] | None, ablate: Sequence[str]) -> str | None:
    d, t = names.drafter, names.target
    model = Placeholder("DIR|REPO_ID")
    if kind == "drafter":
        if not d:
            return _rerun(invocation, "--drafter", model) or command(
                "dflash-doctor", "inspect-model", Placeholder("DRAFTER")
            )
        return _rerun(invocation, "--drafter", d) or command(
            "dflash-doctor",
            "inspect-model",
            d,
            *(["--target", t] if t else []),
            *(["--engine", names.engine_spec] if names.engine_spec and not names.engine_source_read else []),
        )
    if kind == "target":
        return _rerun(invocation, "--target", t or model)
    if kind in ("engine", "engine-support"):
        spec = command(names.engine_spec) if names.engine_spec else command(names.engine or "NAME") + "==VERSION"
        return _rerun(invocation, "--engine", Placeholder(spec))  # (quoted already)
    if kind == "launch":
        return _rerun(invocation, "--launch", "@serve-command.txt")
    if kind == "workload":
        return _rerun(invocation, "--temperature", Placeholder("T"), "--dataset", Placeholder("NAME"))
    if kind == "engine-source":
        return command("dflash-doctor", "check", "host", names.host or Placeholder("ssh://USER@HOST[:PORT]"))
    if kind == "probe":
        words: list[str] = ["dflash-doctor", "probe", "--target", t or Placeholder("TARGET")]
        words += ["--drafter", d or Placeholder("DRAFTER")]
        if ablate:
            words += ["--ablate", ",".join(ablate)]
        for log in names.logs[:1]:
            words += ["--log", log]
        if names.host and names.host.startswith("ssh://"):
            words += ["--host", names.host]
        return command(*words)
    return None
