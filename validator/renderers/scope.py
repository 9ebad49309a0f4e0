"""What a result covers, and the verdict sentence every format prints.

A node check evaluates the node rules only; a lint run the job rules only. A green
"CONFORMANT" over such a result reads, to a customer, as conformance to the whole spec.
So the verdict names its scope: "CONFORMANT to spec v1.0" only when every scope the rule
pack has was evaluated and every requirement of the spec has findings; otherwise
"CONFORMANT for node scope (12 of 28 requirements; job and cluster scope not in this
result)". A result merged by ``spec-check report`` from a fleet result and the lint
results of its jobs covers all three scopes, and may then claim the whole spec.

A requirement counts as evaluated when the result has at least one finding for it (a
``skip`` is an evaluation: the rule looked and found it not applicable). A scope counts
as evaluated when a rule of that scope produced a finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from validator.report.model import Report
from validator.report.model import Scope as Kind

if TYPE_CHECKING:
    from validator.report.model import JSONValue

SCOPES = tuple(s.value for s in (Kind.NODE, Kind.CLUSTER, Kind.JOB))  # the order the sentence names them in


@dataclass(frozen=True)
class Scope:
    scopes: tuple[str, ...]  # evaluated, in SCOPES order
    missing: tuple[str, ...]  # scopes of the rule pack with no finding in this result
    evaluated: tuple[str, ...]  # requirement IDs with at least one finding, catalogue order
    not_evaluated: tuple[str, ...]  # the spec's requirements with none
    total: int  # requirements in the spec (or named by the result, for an old result)
    selected: bool  # --select / --ignore narrowed the run

    @property
    def complete(self) -> bool:
        return not self.missing and not self.not_evaluated

    def to_dict(self) -> dict[str, JSONValue]:  # the result's Coverage (its scopes as text)
        return {
            "complete": self.complete,
            "scopes": list(self.scopes),
            "scopes_not_evaluated": list(self.missing),
            "requirements_evaluated": list(self.evaluated),
            "requirements_not_evaluated": list(self.not_evaluated),
            "requirements_total": self.total,
        }


def _and(words: tuple[str, ...] | list[str]) -> str:
    words = list(words)
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def scope_of(report: Report) -> Scope:
    """The scopes and requirements this result evaluated (one pass over the findings)."""
    rule_scope = {r.id: r.scope for r in report.rules}
    kind = {s.name: s.kind for s in report.subjects}
    seen_reqs: set[str] = set()
    seen_scopes: set[str] = set()
    for f in report.findings:
        seen_reqs.add(f.requirement)
        sc = rule_scope.get(f.rule) or kind.get(f.subject)
        if sc:
            seen_scopes.add(sc)
    pack_scopes = {r.scope for r in report.rules} or set(SCOPES)
    # the spec's requirements; a finding outside them (LINT-00: a config that could not be
    # read) is no requirement of the spec, and counts for neither side
    ids = [q.id for q in report.requirements] or sorted(seen_reqs)
    selected = any(v for v in report.selection.values()) if isinstance(report.selection, dict) else False
    return Scope(
        scopes=tuple(s for s in SCOPES if s in seen_scopes),
        missing=tuple(s for s in SCOPES if s in pack_scopes and s not in seen_scopes),
        evaluated=tuple(i for i in ids if i in seen_reqs),
        not_evaluated=tuple(i for i in ids if i not in seen_reqs),
        total=len(ids),
        selected=selected,
    )


def coverage_text(report: Report, scope: Scope | None = None) -> str:
    """``13 of 28 requirements; job scope not in this result`` (no parentheses), or
    ``all 28 requirements`` for a complete result."""
    sc = scope or scope_of(report)
    if sc.complete:
        return f"all {sc.total} requirements, {_and(list(sc.scopes))} scope"
    parts = [f"{len(sc.evaluated)} of {sc.total} requirements"]
    if sc.missing:
        parts.append(f"{_and(list(sc.missing))} scope not in this result")
    elif sc.not_evaluated:
        why = "left out by --select/--ignore" if sc.selected else "no findings"
        shown = ", ".join(sc.not_evaluated[:4]) + (" ..." if len(sc.not_evaluated) > 4 else "")
        parts.append(f"{shown}: {why}")
    return "; ".join(parts)


def verdict_text(report: Report, scope: Scope | None = None) -> str:
    """The verdict with its scope, the one sentence every format prints:

    * ``CONFORMANT to spec v1.0`` (every requirement evaluated)
    * ``CONFORMANT for node scope (12 of 28 requirements; job and cluster scope not in this result)``
    * ``NOT CONFORMANT to spec v1.0 (node scope evaluated: 12 of 28 requirements; ...)``

    A failure is a failure whatever else was left out, so a non-conformant result is not
    conformant to the spec; what it covered is still said.
    """
    sc = scope or scope_of(report)
    spec = f"spec v{report.spec_version}"
    if report.summary.conformant:
        if sc.complete:
            return f"CONFORMANT to {spec}"
        where = _and(list(sc.scopes)) or "no"
        return f"CONFORMANT for {where} scope ({coverage_text(report, sc)})"
    if sc.complete:
        return f"NOT CONFORMANT to {spec}"
    where = _and(list(sc.scopes)) or "no"
    return f"NOT CONFORMANT to {spec} ({where} scope evaluated: {coverage_text(report, sc)})"
