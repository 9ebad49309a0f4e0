"""OSCAL assessment results (NIST OSCAL 1.0.6 JSON), for GRC tools.

A compliance lead loads spec-check's evidence into the tools that track controls; those
read OSCAL. The mapping:

* **reviewed controls** = the requirements this result judged (the spec's IDs are the
  control IDs of ``spec export --format oscal-catalog``), and only those;
* **subjects** = the nodes, jobs and cluster the result names, as inventory items of the
  result's local definitions (their facts digest and collection time as properties);
* an **observation** per finding (pass, fail, warn, error, skip): the rule, the observed
  and expected values and where they were read, collected at the subject's collection
  time, method ``TEST``;
* a **finding** per requirement judged: ``not-satisfied`` when an unwaived fail (or a MUST
  error) remains, ``satisfied`` otherwise; a requirement whose rules all skipped is
  ``not-satisfied`` with the property ``judged=false`` and says it was not judged (OSCAL
  has no third state, and "not judged" is never a pass);
* a **risk** per waiver, status ``deviation-approved`` while active (``deviation-requested``
  once expired), with its justification, approver and expiry.

UUIDs are version 5, derived from the result's own content (command, time, subjects, and
each finding's stable ID), so rendering one result twice gives the same document. Validated against
NIST's published JSON schema (usnistgov/OSCAL v1.0.6, in tests/fixtures/oscal/) and loaded
by compliance-trestle in tests/reports/test_oscal.py.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, TextIO

from validator.report.model import Finding, Level, Report, Status, finding_ids
from validator.report.oscal_catalog import NS, OSCAL_VERSION, text, uid

if TYPE_CHECKING:
    from validator.report.model import JSONValue


def prop(name: str, value: object, *, remarks: str | None = None) -> dict[str, JSONValue]:
    """An OSCAL property in spec-check's namespace; OSCAL values are non-empty text with no
    leading or trailing space."""
    shown = " ".join(str(value).split()) or "none"
    out: dict[str, JSONValue] = {"name": name, "ns": NS, "value": shown}
    if remarks:
        out["remarks"] = remarks
    return out


def _evidence(f: Finding) -> str:
    where = (f"{f.location.file}:{f.location.line}" if f.location and f.location.line
             else f.location.file if f.location else f.source or "the facts")
    parts = [f"observed {f.observed if f.observed is not None else 'nothing'}"]
    if f.expected:
        parts.append(f"expected {f.expected}")
    parts.append(f"read from {where}")
    return text("; ".join(parts))


def _waiver_risk(f: Finding, key: str, observation: str) -> dict[str, JSONValue]:
    w = f.waiver or {}
    active = bool(w.get("active"))
    lines = [f"justification: {w.get('justification') or 'none given'}",
             f"approver: {w.get('approver') or 'not named'}",
             f"expires: {w.get('expires') or 'not set'}"]
    return {
        "uuid": uid(key, "risk", w.get("id") or f.rule),
        "title": text(f"Waiver {w.get('id') or ''} of {f.rule} on {f.subject}"),
        "description": text(f"{f.rule} ({f.requirement}) {f.status.value} on {f.subject} is waived: "
                             + "; ".join(lines)),
        "statement": text(f.message or f.rule),
        "status": "deviation-approved" if active else "deviation-requested",
        "props": [prop("waiver-id", w.get("id") or "unnamed"), prop("active", str(active).lower())],
        "related-observations": [{"observation-uuid": observation}],
    }


def assessment_results(report: Report) -> dict[str, JSONValue]:
    key = "|".join((report.command, report.generated_at, str(report.rule_pack.get("digest")),
                    ",".join(s.name for s in report.subjects)))
    times = sorted(s.collected_at for s in report.subjects if s.collected_at)
    start = times[0] if times else report.generated_at
    subject_uuid = {s.name: uid(key, "subject", s.name) for s in report.subjects}
    for f in report.findings:  # a subject only the findings name (an old result)
        subject_uuid.setdefault(f.subject, uid(key, "subject", f.subject))
    kinds = {s.name: s for s in report.subjects}
    items = []
    for name, u in subject_uuid.items():
        s = kinds.get(name)
        props = [prop("kind", s.kind if s else "unknown")]
        if s and s.facts_digest:
            props.append(prop("facts-digest", s.facts_digest))
        if s and s.collected_at:
            props.append(prop("collected", s.collected_at))
        # the spec-check that probed a node and the machine's identity it read (result/4)
        for key, v in (("probe-version", s and s.probe_version), ("machine-id", s and s.machine_id),
                       ("board-serial", s and s.board_serial)):
            if v:
                props.append(prop(key, v))
        items.append({"uuid": u, "description": text(f"{s.kind if s else 'subject'} {name}"), "props": props})
    collected = {s.name: s.collected_at or report.generated_at for s in report.subjects}

    observations = []
    by_requirement: dict[str, list[tuple[Finding, str]]] = defaultdict(list)
    risks = []
    for f, fid in zip(report.findings, finding_ids(report.findings), strict=True):
        o = uid(key, "observation", fid)
        props = [prop("finding-id", fid), prop("rule", f.rule), prop("requirement", f.requirement),
                 prop("level", f.level), prop("status", f.status.value)]
        if f.item:
            props.append(prop("item", f.item))
        observations.append({
            "uuid": o,
            "title": text(f"{f.rule} on {f.subject}" + (f" ({f.item})" if f.item else "")),
            "description": text(f.message or f.expected or f.rule),
            "props": props,
            "methods": ["TEST"],
            "subjects": [{"subject-uuid": subject_uuid[f.subject], "type": "inventory-item"}],
            "collected": collected.get(f.subject, report.generated_at),
            "relevant-evidence": [{"description": _evidence(f)}],
            **({"remarks": text(f"what to do: {f.remediation}")} if f.remediation else {}),
        })
        by_requirement[f.requirement].append((f, o))
        if f.waiver:
            risks.append(_waiver_risk(f, key, o))

    docs = {q.id: q for q in report.requirements}
    order = [q.id for q in report.requirements] + sorted(set(by_requirement) - set(docs))
    reviewed = [r for r in order if r in by_requirement]
    findings = []
    for req in reviewed:
        pairs = by_requirement[req]
        judged = any(f.status is not Status.SKIP for f, _ in pairs)
        against = [f for f, _ in pairs if f.against_verdict]
        state = "not-satisfied" if against or not judged else "satisfied"
        doc = docs.get(req)
        counts: dict[str, int] = defaultdict(int)
        for f, _ in pairs:
            counts[f.status.value] += 1
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        if not judged:
            why = "not judged: every rule of it was skipped here (" + text(pairs[0][0].message) + ")"
        elif against:
            why = "; ".join(sorted({text(f"{f.rule} {f.status.value} on {f.subject}") for f in against})[:20])
        else:
            why = "every judged rule held (or is waived)"
        findings.append({
            "uuid": uid(key, "finding", req),
            "title": text(f"{req}: {doc.title if doc else req}"),
            "description": text(f"{summary}. {why}"),
            "props": [prop("judged", str(judged).lower()),
                      prop("level", doc.level if doc else pairs[0][0].level)],
            "target": {"type": "objective-id", "target-id": req,
                       "status": {"state": state, **({"reason": "not-judged"} if not judged else {})}},
            "related-observations": [{"observation-uuid": o} for _, o in pairs],
        })
    must_not_judged = [r for r in reviewed
                       if not any(f.status is not Status.SKIP for f, _ in by_requirement[r])
                       and (docs[r].level if r in docs else Level.MUST) == Level.MUST]
    conformant = report.summary.conformant and not must_not_judged
    result: dict[str, JSONValue] = {
        "uuid": uid(key, "result"),
        "title": text(f"spec-check {report.command} against spec v{report.spec_version}"),
        "description": text(
            f"{len(report.subjects)} subject(s) judged by rule pack {report.rule_pack.get('id')} "
            f"({report.rule_pack.get('digest')}); {len(reviewed)} of {len(docs) or len(reviewed)} requirements "
            f"reviewed; verdict {'CONFORMANT' if conformant else 'NOT CONFORMANT'} for the reviewed controls"
            + (f"; MUST requirements not judged: {', '.join(must_not_judged)}" if must_not_judged else "")),
        "start": start,
        "end": report.generated_at,
        "props": [prop("conformant", str(conformant).lower()), prop("command", report.command)],
        "local-definitions": {"inventory-items": items} if items else {},
        "reviewed-controls": {"control-selections": [
            {"include-controls": [{"control-id": r} for r in reviewed]} if reviewed else {"include-all": {}}]},
    }
    if not result["local-definitions"]:
        del result["local-definitions"]
    if observations:
        result["observations"] = observations
    if risks:
        result["risks"] = risks
    if findings:
        result["findings"] = findings
    plan = uid(key, "plan")
    return {"assessment-results": {
        "uuid": uid(key, "document"),
        "metadata": {
            "title": text(f"spec-check {report.command} assessment results"),
            "last-modified": report.generated_at,
            "version": text(report.tool_version),
            "oscal-version": OSCAL_VERSION,
            "props": [prop("spec-version", report.spec_version),
                      prop("rule-pack", f"{report.rule_pack.get('id')} {report.rule_pack.get('digest')}")],
        },
        "import-ap": {"href": f"#{plan}"},
        "results": [result],
        "back-matter": {"resources": [{
            "uuid": plan,
            "title": text(f"spec-check rule pack {report.rule_pack.get('id')} for spec v{report.spec_version}"),
            "description": "The assessment plan: the rule pack that judged these controls, and its digest.",
            "props": [prop("digest", report.rule_pack.get("digest"))],
        }]},
    }}


class OscalRenderer:
    def __init__(self, **_: object) -> None:
        pass

    def render(self, report: Report, stream: TextIO) -> None:
        doc: JSONValue = assessment_results(report)
        stream.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
