"""SARIF 2.1.0 for code scanning (GitHub, GitLab, Azure DevOps).

Mapping, after ansible-lint's SarifFormatter: every rule of the report becomes a
``reportingDescriptor`` (summary as short description, why as full description,
remediation as help, the requirement ID as a tag and property); every ``fail``,
``warn`` and ``error`` finding becomes a ``result`` with its file and line as a physical
location. ``pass`` and ``skip`` are not results (code scanning would show them as open
alerts). A finding without a file is located at the job's subject where that is a path.
Validated against the official OASIS schema in tests/jobs/.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from validator.model import Finding, Report, Status
from validator.renderers._paths import finding_path

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/spec-check/spec-check"
_LEVEL = {Status.FAIL: "error", Status.ERROR: "error"}


def _level(f: Finding) -> str:
    if f.status is Status.WARN:
        return "warning"
    return _LEVEL.get(f.status, "note")


class SarifRenderer:
    def __init__(self, **_: Any) -> None:
        pass

    def render(self, report: Report, stream: TextIO) -> None:
        json.dump(self.document(report), stream, indent=2, ensure_ascii=False)
        stream.write("\n")

    def document(self, report: Report) -> dict[str, Any]:
        rules: list[dict[str, Any]] = []
        index: dict[str, int] = {}
        for r in report.rules:
            index[r.id] = len(rules)
            rules.append(
                {
                    "id": r.id,
                    "name": r.name,
                    "shortDescription": {"text": r.summary},
                    "fullDescription": {"text": r.why or r.summary},
                    "help": {
                        "text": r.remediation or r.summary,
                        "markdown": f"**{r.requirement}** ({r.level}): {r.summary}\n\n{r.why}\n\n"
                        f"**Fix:** {r.remediation}",
                    },
                    "defaultConfiguration": {"level": "error" if r.level == "MUST" else "warning"},
                    "properties": {
                        "requirement": r.requirement,
                        "level": r.level,
                        "scope": r.scope,
                        "tags": [r.requirement, r.scope, r.level],
                    },
                }
            )
        results = []
        for f in report.findings:
            if f.status not in (Status.FAIL, Status.WARN, Status.ERROR):
                continue
            if f.rule not in index:
                index[f.rule] = len(rules)
                rules.append(
                    {
                        "id": f.rule,
                        "shortDescription": {"text": f.message[:200] or f.rule},
                        "properties": {"requirement": f.requirement, "tags": [f.requirement]},
                    }
                )
            text = f.message or f.expected
            if f.expected and f.status is not Status.ERROR:
                text += f" (expected: {f.expected})"
            result: dict[str, Any] = {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": _level(f),
                "message": {"text": text},
                "properties": {
                    "requirement": f.requirement,
                    "status": f.status.value,
                    "subject": f.subject,
                    "observed": f.observed,
                    "expected": f.expected,
                },
            }
            path, line = finding_path(f)
            if path:
                phys: dict[str, Any] = {"artifactLocation": {"uri": path}}
                if not path.startswith("/"):
                    phys["artifactLocation"]["uriBaseId"] = "%SRCROOT%"
                if line:
                    phys["region"] = {"startLine": line}
                result["locations"] = [{"physicalLocation": phys}]
            results.append(result)
        return {
            "$schema": SCHEMA_URI,
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {
                        "driver": {
                            "name": "spec-check",
                            "version": report.tool_version,
                            "semanticVersion": report.tool_version,
                            "informationUri": INFO_URI,
                            "rules": rules,
                        }
                    },
                    "automationDetails": {"id": f"spec-check/{report.command}/"},
                    "invocations": [
                        {"executionSuccessful": True, "endTimeUtc": report.generated_at}
                    ],
                    "properties": {
                        "spec_version": report.spec_version,
                        "rule_pack": dict(report.rule_pack),
                    },
                    "results": results,
                }
            ],
        }
