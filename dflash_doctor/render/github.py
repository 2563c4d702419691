"""GitHub Actions output for the gate: workflow-command annotations and a step-summary section.

Annotation text is escaped as the runner expects (%, CR, LF; and ':' ',' in properties), so a
measured figure or a file name can never inject another workflow command.
"""

from ..redact import redact_text
from ..services.gate import GateResult, Outcome
from ..textsafe import plain
from .gate_text import render_gate_markdown

LEVEL = {Outcome.FAIL: "error", Outcome.NO_DATA: "warning", Outcome.PASS: "notice"}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotations(result: GateResult) -> str:
    lines = []
    for r in result.results:
        if r.outcome == Outcome.PASS and r.name == "min-drafts":
            continue  # the sample size is context, not a result worth a notice of its own
        title = escape_property(f"dflash-doctor gate: {r.name}")
        msg = escape_data(redact_text(plain(r.message)))
        lines.append(f"::{LEVEL[r.outcome]} title={title}::{msg}")
    if result.report is not None and result.outcome == Outcome.FAIL and result.report.causes:
        c = result.report.causes[0]
        lines.append(
            f"::notice title={escape_property('dflash-doctor: most likely cause')}::"
            + escape_data(
                redact_text(plain(f"{c.id} (confidence {c.confidence:.2f}): {c.title}. Next step: {c.next_step}"))
            )
        )
    return "\n".join(lines) + ("\n" if lines else "")


def step_summary(result: GateResult) -> str:
    # Each field is redacted as it is escaped (md -> plain); the whole once more, as every output is.
    return redact_text(render_gate_markdown(result))
