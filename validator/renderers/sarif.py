"""SARIF 2.1.0 for code scanning (GitHub, GitLab, Azure DevOps).

Mapping, after ansible-lint's SarifFormatter: every rule of the report becomes a
``reportingDescriptor`` (summary as short description, why as full description,
remediation as help, the requirement ID as a tag and property); only the rules of the
scopes present in the run are listed (a lint run does not describe node rules). Every
``fail``, ``warn`` and ``error`` finding becomes a ``result`` with its file and line as a
physical location (the URI percent-encoded, so a path with spaces stays valid). ``pass``
and ``skip`` are not results (code scanning would show them as open alerts). A finding
without a file is located at the job's subject where that is a path.

A node or cluster finding names its item (GPU, port, measured pair ``a->b``) in the
message and in ``properties.item``: without it two GPUs' failures read the same.
``partialFingerprints`` carry a stable hash of rule, subject and item, so code scanning
recognises the same alert across runs. A finding under an active waiver carries an
external, accepted ``suppression`` with the waiver's justification: code scanning then
shows it as dismissed rather than open, matching the (conformant) verdict. An expired
waiver adds no suppression. Validated against the official OASIS schema in tests/jobs/.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO
from urllib.parse import quote

from validator.renderers._paths import finding_path
from validator.renderers.scope import scope_of, verdict_text
from validator.report.model import Finding, Level, Report, Status, finding_id, finding_ids

if TYPE_CHECKING:
    from validator.report.model import JSONValue

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/spec-check/spec-check"
_LEVEL = {Status.FAIL: "error", Status.ERROR: "error"}


def fingerprint(f: Finding) -> str:
    """A stable identity for code-scanning dedup: the finding's ID (rule, subject and item,
    hashed: ``model.finding_id``), the same in the JSON result, diff and OSCAL."""
    return finding_id(f.rule, f.subject, f.item)


def _uri(path: str) -> str:
    """A path as a URI reference: spaces and other unsafe characters percent-encoded."""
    return quote(path, safe="/:@!$&'()*+,;=-._~")


def _fixes(f: Finding) -> list[dict[str, JSONValue]]:
    """SARIF 2.1.0 fix objects (section 3.55): each applicable edit as an artifactChange whose
    replacement deletes whole lines (a region of startLine..endLine, its columns left to
    their defaults: the lines without their last newline) and inserts the new lines."""
    out: list[dict[str, JSONValue]] = []
    for fx in f.fixes or ():
        rep = fx.get("replace")
        if fx.get("needs") or not rep or rep["end"] < rep["start"]:
            continue
        value = fx["value"]
        shown = fx["target"] if value is True and fx["kind"] == "flag" else f"{fx['target']} = {json.dumps(value)}"
        loc: dict[str, JSONValue] = {"uri": _uri(fx["file"])}
        if not fx["file"].startswith("/"):
            loc["uriBaseId"] = "%SRCROOT%"
        text = rep["text"]
        out.append({
            "description": {"text": f"set {shown}: {fx['why']}"},
            "artifactChanges": [{
                "artifactLocation": loc,
                "replacements": [{
                    "deletedRegion": {"startLine": rep["start"], "endLine": rep["end"]},
                    "insertedContent": {"text": text[:-1] if text.endswith("\n") else text},
                }],
            }],
        })
    return out


def _level(f: Finding) -> str:
    if f.status is Status.WARN:
        return "warning"
    return _LEVEL.get(f.status, "note")


class SarifRenderer:
    def __init__(self, **_: object) -> None:
        pass

    def render(self, report: Report, stream: TextIO) -> None:
        from validator.values.numbers import dumps

        stream.write(dumps(self.document(report), indent=2, ensure_ascii=False))
        stream.write("\n")

    def document(self, report: Report) -> dict[str, JSONValue]:
        rules: list[dict[str, JSONValue]] = []
        index: dict[str, int] = {}
        scope = {r.id: r.scope for r in report.rules}
        kinds = {s.kind for s in report.subjects} | {
            scope[f.rule] for f in report.findings if f.rule in scope
        }
        for r in report.rules:
            if kinds and r.scope not in kinds:
                continue
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
                    "defaultConfiguration": {"level": "error" if r.level == Level.MUST else "warning"},
                    "properties": {
                        "requirement": r.requirement,
                        "level": r.level,
                        "scope": r.scope,
                        "tags": [r.requirement, r.scope, r.level],
                    },
                }
            )
        results = []
        for f, fid in zip(report.findings, finding_ids(report.findings), strict=True):
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
            if f.item and f.item not in text:
                text = f"{f.item}: {text}"
            if f.expected and f.status is not Status.ERROR:
                text += f" (expected: {f.expected})"
            result: dict[str, JSONValue] = {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": _level(f),
                "message": {"text": text},
                "properties": {
                    "requirement": f.requirement,
                    "status": f.status.value,
                    "subject": f.subject,
                    "item": f.item,
                    "observed": f.observed,
                    "expected": f.expected,
                },
                "partialFingerprints": {"specCheckFinding/v1": fid},
            }
            if report.command == "lint":  # a lint subject is a job: its entry point
                result["properties"]["job"] = f.subject
            if f.waived:
                w = f.waiver or {}
                result["suppressions"] = [
                    {
                        "kind": "external",
                        "status": "accepted",
                        "justification": str(w.get("justification", "")),
                        "properties": {
                            "waiver": w.get("id"),
                            "approver": w.get("approver"),
                            "expires": w.get("expires"),
                        },
                    }
                ]
            path, line = finding_path(f)
            if path:
                phys: dict[str, JSONValue] = {"artifactLocation": {"uri": _uri(path)}}
                if not path.startswith("/"):
                    phys["artifactLocation"]["uriBaseId"] = "%SRCROOT%"
                if line:
                    phys["region"] = {"startLine": line}
                result["locations"] = [{"physicalLocation": phys}]
            fixes = _fixes(f)
            if fixes:
                result["fixes"] = fixes
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
                        "verdict": verdict_text(report),
                        "coverage": scope_of(report).to_dict(),
                        "spec_version": report.spec_version,
                        "rule_pack": dict(report.rule_pack),
                    },
                    "results": results,
                }
            ],
        }

