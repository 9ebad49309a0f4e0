"""JUnit XML for CI test reports (Jenkins, GitLab, Azure, GitHub test reporters).

After kube-bench's mapping: one ``<testsuite>`` per subject (a job, a node), one
``<testcase>`` per finding (classname = requirement, name = rule and item); ``fail``
becomes ``<failure>`` (message = the finding, text = the remediation), ``error``
becomes ``<error>``, ``warn`` and ``skip`` become ``<skipped>`` with the reason. A ``fail``
or ``warn`` under an active waiver is ``<skipped message="waived: ...">``: the run is
conformant, so the CI test report must not be red (an expired waiver changes nothing).
An ``error`` is never waived (``waivers._WAIVABLE``). Each suite's ``<system-out>`` holds
the evidence (observed, expected, source) of its failing and erroring findings only, as
JSON lines: repeating every passing finding made an 11-node report 1.4 MB.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO
from xml.etree import ElementTree as ET

from validator.renderers._waived import waiver_text
from validator.report.model import Finding, Report, Status

if TYPE_CHECKING:
    from validator.report.model import JSONValue


def _evidence(f: Finding) -> dict[str, JSONValue]:
    keys = ("rule", "item", "status", "observed", "expected", "source", "location", "waiver")
    d = f.to_dict()
    return {k: d[k] for k in keys if d.get(k) is not None}


class JUnitRenderer:
    def __init__(self, **_: object) -> None:
        pass

    def render(self, report: Report, stream: TextIO) -> None:
        root = ET.Element(
            "testsuites", name=f"spec-check {report.command} (spec v{report.spec_version})"
        )
        from validator.renderers.scope import verdict_text

        verdict = verdict_text(report)
        totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        subjects: dict[str, list[Finding]] = {}
        for f in report.findings:
            subjects.setdefault(f.subject, []).append(f)
        for subject, findings in subjects.items():
            counts = {
                "tests": len(findings),
                "failures": sum(f.status is Status.FAIL and not f.waived for f in findings),
                "errors": sum(f.status is Status.ERROR for f in findings),
                "skipped": sum(
                    f.status in (Status.WARN, Status.SKIP) or (f.status is Status.FAIL and f.waived)
                    for f in findings
                ),
            }
            suite = ET.SubElement(
                root,
                "testsuite",
                name=subject,
                timestamp=report.generated_at,
                attrib={k: str(v) for k, v in counts.items()},
            )
            for k in totals:
                totals[k] += counts[k]
            # what the run's verdict covers, first in the suite as the JUnit schema orders it
            props = ET.SubElement(suite, "properties")
            ET.SubElement(props, "property", name="spec-check.verdict", value=verdict)
            for f in findings:
                name = f.rule + (f" [{f.item}]" if f.item else "")
                case = ET.SubElement(suite, "testcase", classname=f.requirement, name=name)
                if f.location is not None:
                    case.set("file", f.location.file)
                    if f.location.line:
                        case.set("line", str(f.location.line))
                where = ""
                if f.location is not None:
                    where = (
                        f"{f.location.file}:{f.location.line}: "
                        if f.location.line
                        else f"{f.location.file}: "
                    )
                if f.status in (Status.FAIL, Status.WARN) and f.waived:
                    ET.SubElement(case, "skipped", message=f"{waiver_text(f)}: {where}{f.message}")
                elif f.status is Status.FAIL:
                    el = ET.SubElement(case, "failure", message=where + f.message, type=f.level)
                    el.text = (
                        f"expected: {f.expected}\nobserved: {f.observed}\nfix: {f.remediation}"
                    )
                elif f.status is Status.ERROR:
                    el = ET.SubElement(case, "error", message=where + f.message, type="error")
                    el.text = f.remediation
                elif f.status is Status.WARN:
                    ET.SubElement(case, "skipped", message=f"warning: {where}{f.message}")
                elif f.status is Status.SKIP:
                    ET.SubElement(case, "skipped", message=f.message)
            bad = [f for f in findings if f.status in (Status.FAIL, Status.ERROR)]
            if bad:
                out = ET.SubElement(suite, "system-out")
                out.text = "\n".join(
                    json.dumps(_evidence(f), default=str, ensure_ascii=False) for f in bad
                )
        for k, v in totals.items():
            root.set(k, str(v))
        ET.indent(root)
        stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        stream.write(ET.tostring(root, encoding="unicode"))
        stream.write("\n")
