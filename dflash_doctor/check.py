"""The check interface and the runner that turns checks into findings.

A check reads an EvidenceSet and returns findings. It never prints, exits, touches the network or
reads files: everything it needs arrives as evidence. A check whose evidence is missing is not run
and yields "could-not-check" with the reason the evidence is missing; a check that raises becomes a
"could-not-check" finding carrying the error.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar

from .evidence import EvidenceSet, Finding, Status, kind_of
from .evidence.model_facts import DrafterFacts


class Check(ABC):
    id: ClassVar[str]
    area: ClassVar[str]  # "acceptance" | "drafter" | "pairing" | "engine" | "launch" | "host" | "probe"
    title: ClassVar[str]
    needs: ClassVar[tuple[type, ...]] = ()  # payload types all required; missing -> could-not-check
    wants: ClassVar[tuple[type, ...]] = ()  # payload types the check uses when present
    # Every observation name the check can emit ("family:value"), as pylint declares its messages: the
    # knowledge loader refuses a rule no check declares, and the runner refuses an undeclared emission.
    observations: ClassVar[tuple[str, ...]] = ()
    # A check that reads the drafter depends on knowing what kind of drafter it is: with a drafter whose method
    # no reader recognised (and no launch naming one), it reports "could not check", never a pass. A check
    # whose answer holds whatever the method sets this True.
    method_free: ClassVar[bool] = False

    @abstractmethod
    def run(self, evidence: EvidenceSet) -> Sequence[Finding]: ...

    # Helpers so checks read naturally.
    def finding(self, status: Status, message: str, **kw) -> Finding:
        return Finding(check_id=self.id, status=status, message=message, **kw)


def describe_crash(exc: BaseException) -> str:
    """`Type: message` of what a check or plugin raised, whatever it raised (a message whose own __str__
    raises, an exception that is no Exception)."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: it called sys.exit({exc.code!r})"
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 (a plugin's exception may do anything, even in __str__)
        text = "(its message could not be shown)"
    return f"{type(exc).__name__}: {text}"[:500]


# The message of a check whose needed evidence does not exist for this deployment (EvidenceSet.inapplicable).
DOES_NOT_APPLY = "does not apply: "


def run_checks(
    checks: Iterable[Check], evidence: EvidenceSet, launch_method: Callable[[EvidenceSet], str | None] | None = None
) -> list[Finding]:
    """Run every check; `launch_method` names the speculative method a launch states (a drafter whose config no
    reader knows is still of a known method when the launch says which)."""
    findings: list[Finding] = []
    for check in checks:
        absent = [k for k in check.needs if not evidence.has(k)]
        void = [why for k in absent if (why := evidence.why_inapplicable(k))]
        if void:  # it needs what this deployment does not have: nothing else it waits for matters
            findings.append(Finding(check.id, Status.NOT_APPLICABLE, DOES_NOT_APPLY + "; ".join(dict.fromkeys(void))))
            continue
        if absent:
            reasons = "; ".join(f"{kind_of(k).value}: {evidence.why_missing(k)}" for k in absent)
            findings.append(
                Finding(
                    check.id,
                    Status.COULD_NOT_CHECK,
                    f"could not check: {reasons}",
                    waiting_for=tuple(kind_of(k).value for k in absent),
                )
            )
            continue
        unknown = _method_unknown(check, evidence, launch_method)
        if unknown:
            findings.append(Finding(check.id, Status.COULD_NOT_CHECK, unknown))
            continue
        try:
            result = list(check.run(evidence))
        except BaseException as exc:  # a crashed check is a result: sys.exit(), a BaseException subclass…
            if isinstance(exc, KeyboardInterrupt):  # …but not the user's Ctrl-C
                raise
            findings.append(
                Finding(check.id, Status.COULD_NOT_CHECK, f"could not check: the check crashed ({describe_crash(exc)})")
            )
            continue
        junk = [r for r in result if not isinstance(r, Finding)]
        if junk:  # a plugin returning strings would otherwise crash the ranking and lose the report
            findings.append(
                Finding(
                    check.id,
                    Status.COULD_NOT_CHECK,
                    f"could not check: the check returned {type(junk[0]).__name__} instead of findings",
                )
            )
            continue
        if not result:
            findings.append(Finding(check.id, Status.COULD_NOT_CHECK, "could not check: the check returned no result"))
        undeclared = sorted({o.name for f in result for o in f.observations} - set(check.observations))
        if undeclared:  # a typo or a new name the knowledge cannot know: never let it reach the ranking silently
            findings.append(
                Finding(
                    check.id,
                    Status.COULD_NOT_CHECK,
                    f"could not check: the check emitted undeclared observation(s) {', '.join(undeclared)}",
                )
            )
            continue
        findings.extend(result)
    return findings


def _method_unknown(
    check: Check, evidence: EvidenceSet, launch_method: Callable[[EvidenceSet], str | None] | None
) -> str | None:
    """Why `check` cannot run when the drafter's method is unknown; None when it can."""
    if check.method_free or DrafterFacts not in (*check.needs, *check.wants):
        return None
    d = evidence.get(DrafterFacts)
    if d is None or d.method not in (None, "unknown"):
        return None
    if launch_method is not None and launch_method(evidence):
        return None
    why = d.notes[0] if d.notes else f"config format {d.family}"
    return f"could not check: the drafter's method is unknown ({why}), and this check depends on it"


def declared_observations(checks: Iterable[Check]) -> dict[str, str]:
    """observation name -> the id of a check that declares it."""
    out: dict[str, str] = {}
    for c in checks:
        for name in getattr(c, "observations", ()) or ():
            out.setdefault(name, c.id)
    return out
