"""JUnit XML for a gate result: one testcase per threshold, properties carrying the measured figures.

Written with xml.etree (escaping is the library's job). Outcomes map to JUnit as: pass -> a plain
testcase, fail -> <failure>, no data -> <skipped> (CI shows it as neither green nor red).
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET

from ..evidence import now_iso
from ..redact import redact_text
from ..services.gate import GateResult, Outcome
from ..textsafe import plain

SUITE = "dflash-doctor gate"


def _text(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        return ",".join(_text(x) for x in v)
    return redact_text(plain("" if v is None else v))


def _props(parent: ET.Element, items: dict) -> None:
    props = ET.SubElement(parent, "properties")
    for k, v in items.items():
        ET.SubElement(props, "property", name=str(k), value=_text(v))


def render_junit(result: GateResult) -> str:
    fails = sum(r.outcome == Outcome.FAIL for r in result.results)
    skipped = sum(r.outcome == Outcome.NO_DATA for r in result.results)
    counts = {
        "tests": str(len(result.results)),
        "failures": str(fails),
        "errors": "0",
        "skipped": str(skipped),
        "time": "0",
    }
    root = ET.Element("testsuites", {"name": SUITE, **counts})
    suite = ET.SubElement(
        root, "testsuite", {"name": SUITE, "timestamp": now_iso(), "hostname": _text(socket.gethostname()), **counts}
    )
    suite_props = {"outcome": result.outcome.value, "source": result.source}
    suite_props.update({k: v for k, v in result.measured.items() if v is not None})
    if result.report is not None:
        suite_props["verdict"] = result.report.verdict.value
        if result.report.causes:
            suite_props["top_cause"] = result.report.causes[0].id
    _props(suite, suite_props)
    for r in result.results:
        case = ET.SubElement(suite, "testcase", classname="dflash_doctor.services.gate", name=r.name, time="0")
        _props(case, {"measured": r.measured, "threshold": r.threshold, **r.properties})
        if r.outcome == Outcome.FAIL:
            el = ET.SubElement(case, "failure", message=_text(r.message), type="threshold")
            el.text = _text(r.message)
        elif r.outcome == Outcome.NO_DATA:
            ET.SubElement(case, "skipped", message=_text(r.message))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
