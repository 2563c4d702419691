"""Is this deployment hit by a known, fixed engine bug? (interpret/known_issues: engine, release, runner,
method, drafter and topology facts against every entry of the database).

Observations, one per implied cause at the strongest match quality (weights in causes.toml):
  known-issue:CAUSE            certain: the release is affected and every condition is known to hold
  known-issue-likely:CAUSE     the release is affected, one condition is unknown
  known-issue-possible:CAUSE   the release, or several conditions, unknown; nothing known rules it out
  known-issue-cited:CAUSE      an entry the engine-support table already decides (no weight here)
  known-issue-clear:CAUSE      the release is named and has the fix of every known entry of that cause for this
                               engine (each ruled out by the release alone): a release bug of that kind has no
                               support left (entries the engine-support table decides are left to it)
A certain or likely match whose entry says the bug leaves (almost) no draft accepted is downgraded one
level when the measured acceptance shows real acceptance: the symptom does not fit.
"""

from __future__ import annotations

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary, StartupFacts
from dflash_doctor.evidence.engine_facts import EngineSupport
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import EngineId, Environment, LaunchConfig, Workload
from dflash_doctor.interpret.known_issues import Match, MatchQuality, default_known_issues, match_deployment
from dflash_doctor.interpret.known_issues.deployment import deployment_from_evidence
from dflash_doctor.knowledge.causes import cause_ids

OBSERVATION = {
    MatchQuality.CERTAIN: "known-issue",
    MatchQuality.LIKELY: "known-issue-likely",
    MatchQuality.POSSIBLE: "known-issue-possible",
}
CITED = "known-issue-cited"
# With the release unknown every entry of the engine is a candidate only: named (the plan lists them as "if you run
# …"), never weighed — a release bug has no support of its own until the release is known.
CANDIDATE = "known-issue-candidate"
# What the engine-support check of a cause needs besides the table row (checks/engine_drafter_swa.py needs the
# drafter config to know whether the drafter has sliding layers at all).
TABLE_NEEDS = {"swa-ignored": DrafterFacts}
CLEAR = "known-issue-clear"
# Symptoms that say the drafter is as good as dead; a τ − 1 of at least this much contradicts them.
DEAD_SYMPTOMS = {"all-zero", "cliff-after-first"}
ALIVE_EXCESS = 0.5
_DOWN = {
    MatchQuality.CERTAIN: MatchQuality.LIKELY,
    MatchQuality.LIKELY: MatchQuality.POSSIBLE,
    MatchQuality.POSSIBLE: MatchQuality.POSSIBLE,
}


def _symptom_conflict(m: Match, evidence: EvidenceSet) -> str | None:
    acc = evidence.get(AcceptanceSummary)
    tau = acc.mean_acceptance_length if acc is not None else None
    if not m.issue.symptoms or not set(m.issue.symptoms) <= DEAD_SYMPTOMS or not isinstance(tau, (int, float)):
        return None
    if tau - 1.0 >= ALIVE_EXCESS:
        return (
            f"the bug leaves almost no draft accepted, but τ is {tau:.2f}: the symptom does not fit, "
            "so the match counts one level weaker"
        )
    return None


def _clear(db, dep, table: bool) -> tuple[Observation, ...]:
    """known-issue-clear:CAUSE for each cause whose every entry for this engine is ruled out by the release alone."""
    from dflash_doctor.interpret.known_issues import RuledOut, explain
    from dflash_doctor.versions import VersionError, parse_version

    try:
        version = parse_version(dep.version) if dep.version else None
    except VersionError:
        version = None
    if version is None:
        return ()
    by_cause: dict[str, list] = {}
    for verdict in explain(db, dep):
        by_cause.setdefault(verdict.issue.cause, []).append(verdict)
    out = []
    for cause, verdicts in sorted(by_cause.items()):
        if table and all(v.issue.covered_by == "engine-support" for v in verdicts):
            continue  # the engine-support check weighs these from the same release
        if all(isinstance(v, RuledOut) and not v.issue.affected.contains(version) for v in verdicts):
            fixed = ", ".join(sorted({f"{v.issue.reference()} (fixed in {v.issue.fixed_in})" for v in verdicts}))
            out.append(
                Observation(
                    f"{CLEAR}:{cause}",
                    f"{dep.engine} {dep.version} is outside every known {cause} bug's releases: {fixed}",
                    tuple(sorted(r for r in {dep.sources.get("version"), dep.sources.get("engine")} if r)),
                )
            )
    return tuple(out)


def _candidates(check, matches, dep, eref):
    lines = [
        f"if you run {dep.engine} {m.issue.affected}"
        + (f" and {'; '.join(u for u in m.unknown[1:])}" if len(m.unknown) > 1 else "")
        + f": {m.issue.title} ({m.issue.reference()}, fixed in {m.issue.fixed_in})"
        for m in matches
    ]
    return check.finding(
        Status.WARN,
        f"release unknown: {len(matches)} known {dep.engine} issue(s) affect some releases — name the release "
        f"(`--engine {dep.engine}==VERSION`) to check them",
        refs=(eref,),
        remedy=f"Give the release: `--engine {dep.engine}==VERSION` (the startup lines name it; `pip show` does too).",
        details=tuple(lines),
    )


class KnownIssues(Check):
    id = "known-issues"
    area = "engine"
    title = "Known engine bugs for this release, runner, method and topology"
    needs = (EngineId,)
    wants = (
        LaunchConfig,
        StartupFacts,
        DrafterFacts,
        TargetFacts,
        Workload,
        Environment,
        AcceptanceSummary,
        EngineSupport,
    )
    observations = tuple(
        f"{family}:{cause}" for family in (*OBSERVATION.values(), CITED, CLEAR, CANDIDATE) for cause in cause_ids()
    )

    def run(self, evidence: EvidenceSet):
        db = default_known_issues()
        dep = deployment_from_evidence(evidence)
        eref = evidence.require_item(EngineId).ref
        if dep.engine not in db.engines:
            return [
                self.finding(
                    Status.COULD_NOT_CHECK,
                    f"could not check: no known-issues data for engine "
                    f"{dep.engine or 'unknown'} (known: {', '.join(sorted(db.engines))})",
                    refs=(eref,),
                )
            ]
        matches = match_deployment(db, dep)
        checked = len(db.for_engine(dep.engine))
        clear = _clear(db, dep, evidence.has(EngineSupport))
        if not matches:
            why = "" if dep.version else " (release unknown)"
            return [
                self.finding(
                    Status.OK,
                    f"none of the {checked} known {dep.engine} issues matches {dep.describe()}{why}",
                    refs=(eref,),
                    observations=clear,
                )
            ]
        table = evidence.has(EngineSupport)
        findings = []
        best: dict[str, tuple[MatchQuality, list[str], set[str]]] = {}
        cited: dict[str, tuple[list[str], set[str]]] = {}
        for m in matches:
            quality = m.quality
            note = _symptom_conflict(m, evidence) if quality != MatchQuality.POSSIBLE else None
            if note:
                quality = _DOWN[quality]
            name = f"{m.issue.reference()}, fixed in {m.issue.fixed_in}"
            refs = set(m.refs) | {eref}
            msg = f"{quality.phrase()}: {m.issue.title} — matches {name}"
            details = [f"{m.issue.link}", f"conditions met: {'; '.join(m.met) or 'none'}"]
            if m.unknown:
                details.append(f"unknown: {'; '.join(m.unknown)}")
            if note:
                details.append(note)
            details.append(f"fixed-in read from the release: {m.issue.verified}")
            status = Status.FAIL if quality == MatchQuality.CERTAIN else Status.WARN
            # the engine-support checks weigh an entry they decide from the same facts; one they cannot run on this
            # evidence (the drafter-SWA row needs the drafter config) is weighed here
            need = TABLE_NEEDS.get(m.issue.cause)
            covered = (
                m.issue.covered_by == "engine-support"
                and table
                and quality != MatchQuality.POSSIBLE
                and (need is None or evidence.has(need))
            )
            text = f"{m.issue.title} ({name}; {quality.value} match)"
            if covered:
                c = cited.setdefault(m.issue.cause, ([], set()))
                c[0].append(text)
                c[1].update(refs)
                details.append("the engine-support check weighs this bug; named here, not counted twice")
            else:
                prev = best.get(m.issue.cause)
                if prev is None or quality.rank < prev[0].rank:
                    best[m.issue.cause] = (quality, [text], refs)
                elif quality == prev[0]:
                    prev[1].append(text)
                    prev[2].update(refs)
            findings.append(
                self.finding(status, msg, refs=tuple(sorted(refs)), remedy=m.issue.remedy(), details=tuple(details))
            )
        obs = [
            Observation(
                f"{OBSERVATION[q] if dep.version else CANDIDATE}:{cause}", "; ".join(texts), tuple(sorted(refs))
            )
            for cause, (q, texts, refs) in sorted(best.items())
        ]
        obs += [
            Observation(f"{CITED}:{cause}", "; ".join(texts), tuple(sorted(refs)))
            for cause, (texts, refs) in sorted(cited.items())
        ]
        obs += [o for o in clear if o.name.split(":", 1)[1] not in best and o.name.split(":", 1)[1] not in cited]
        if not dep.version:
            # with the release unknown every entry of the engine is only a candidate: one finding lists them, each
            # with the releases and conditions it needs ("if you run …"), instead of a warning per entry
            findings = [_candidates(self, matches, dep, eref)]
        # the observations ride on the first finding: one set per check run
        first = findings[0]
        findings[0] = type(first)(
            first.check_id, first.status, first.message, first.refs, first.remedy, first.details, tuple(obs)
        )
        return findings
