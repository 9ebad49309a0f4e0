"""What a result covers, and the verdict sentence every format prints.

A node check evaluates the node rules only; a lint run the job rules only. A green
"CONFORMANT" over such a result reads, to a customer, as conformance to the whole spec.
So the verdict names its scope: "CONFORMANT to spec v1.0" only when every scope the rule
pack has was evaluated, every requirement of the spec was judged and no rule was left out
with ``--ignore``; otherwise "CONFORMANT for node scope (12 of 28 requirements; job
and cluster scope not in this result)". A result merged by ``spec-check report`` from a
fleet result and the lint results of its jobs covers all three scopes, and may then claim
the whole spec.

A requirement counts as *judged* when the result has a finding for it that is not a
``skip`` (pass, fail, warn, or error). A requirement whose findings are all skips is *not
judged*: a rule that found itself not applicable, or lacked the evidence, judged nothing,
and no output counts it as evaluated or conformant. A MUST requirement not judged on a
subject makes the result not conformant (``model.summarize``); when nothing else fails the
verdict word is **INCOMPLETE** (exit code 1, as any result that is not conformant), and the
verdict line names the requirements not judged. A scope counts as evaluated when a rule
of that scope produced a finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from validator.report.model import Level, Report, Status
from validator.report.model import Scope as Kind

if TYPE_CHECKING:
    from validator.report.model import JSONValue

SCOPES = tuple(s.value for s in (Kind.NODE, Kind.CLUSTER, Kind.JOB))  # the order the sentence names them in


@dataclass(frozen=True)
class Scope:
    scopes: tuple[str, ...]  # evaluated, in SCOPES order
    missing: tuple[str, ...]  # scopes of the rule pack with no finding in this result
    evaluated: tuple[str, ...]  # requirement IDs judged (a finding that is not a skip), catalogue order
    not_evaluated: tuple[str, ...]  # the spec's requirements with no finding at all
    total: int  # requirements in the spec (or named by the result, for an old result)
    selected: bool  # --select / --ignore narrowed the run
    not_judged: tuple[str, ...] = ()  # requirements whose findings are all skips
    ignored: tuple[str, ...] = ()  # what --ignore left out (rule or requirement ID prefixes)
    must: frozenset[str] = frozenset()  # the MUST requirements among them all

    @property
    def complete(self) -> bool:
        return not self.missing and not self.not_evaluated and not self.not_judged and not self.ignored

    def to_dict(self) -> dict[str, JSONValue]:  # the result's Coverage (its scopes as text)
        out: dict[str, JSONValue] = {
            "complete": self.complete,
            "scopes": list(self.scopes),
            "scopes_not_evaluated": list(self.missing),
            "requirements_evaluated": list(self.evaluated),
            "requirements_not_evaluated": list(self.not_evaluated),
            "requirements_not_judged": list(self.not_judged),
            "requirements_total": self.total,
        }
        if self.ignored:
            out["ignored"] = list(self.ignored)
        return out


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
    judged: set[str] = set()
    seen_scopes: set[str] = set()
    skip = Status.SKIP
    for f in report.findings:
        seen_reqs.add(f.requirement)
        if f.status is not skip:
            judged.add(f.requirement)
        sc = rule_scope.get(f.rule) or kind.get(f.subject)
        if sc:
            seen_scopes.add(sc)
    pack_scopes = {r.scope for r in report.rules} or set(SCOPES)
    # the spec's requirements; a finding outside them (LINT-00: a config that could not be
    # read) is no requirement of the spec, and counts for neither side
    ids = [q.id for q in report.requirements] or sorted(seen_reqs)
    sel = report.selection if isinstance(report.selection, dict) else {}
    selected = any(v for v in sel.values())
    ignored = tuple(str(i) for i in (sel.get("ignore") or ()))
    must = {q.id for q in report.requirements if q.level == Level.MUST}
    must |= {f.requirement for f in report.findings if f.level == Level.MUST} if not report.requirements else set()
    return Scope(
        scopes=tuple(s for s in SCOPES if s in seen_scopes),
        missing=tuple(s for s in SCOPES if s in pack_scopes and s not in seen_scopes),
        evaluated=tuple(i for i in ids if i in judged),
        not_evaluated=tuple(i for i in ids if i not in seen_reqs),
        total=len(ids),
        selected=selected,
        not_judged=tuple(i for i in ids if i in seen_reqs and i not in judged),
        ignored=ignored,
        must=frozenset(must),
    )


def _listed(ids: tuple[str, ...], limit: int = 6) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def not_judged_text(report: Report, scope: Scope | None = None) -> str:
    """``not judged (only skips): CKPT-03 (MUST), NET-04``: every requirement whose findings
    are all skips, MUST ones marked, and those not judged on only some subjects
    (``model.Summary.not_judged``); ``""`` when every requirement with findings was judged."""
    sc = scope or scope_of(report)
    ids = list(sc.not_judged)
    ids += [r for r in report.summary.not_judged if r not in ids]
    if not ids:
        return ""
    partly = set(report.summary.not_judged) - set(sc.not_judged)
    words = tuple(f"{r} (MUST{', on some subjects' if r in partly else ''})"
                  if r in sc.must or r in partly else r for r in ids)
    return f"not judged (only skips): {_listed(words)}"


def coverage_text(report: Report, scope: Scope | None = None) -> str:
    """``13 of 28 requirements; job scope not in this result`` (no parentheses), or
    ``all 28 requirements`` for a complete result (a requirement counts when judged); it names the requirements not
    judged (only skips) and the rules ``--ignore`` left out."""
    sc = scope or scope_of(report)
    if sc.complete and not report.summary.not_judged:
        return f"all {sc.total} requirements, {_and(list(sc.scopes))} scope"
    parts = [f"{len(sc.evaluated)} of {sc.total} requirements"]
    nj = not_judged_text(report, sc)
    if nj:
        parts.append(nj)
    if sc.missing:
        parts.append(f"{_and(list(sc.missing))} scope not in this result")
    elif sc.not_evaluated:
        why = "left out by --select/--ignore" if sc.selected else "no findings"
        parts.append(f"{_listed(sc.not_evaluated, 4)}: {why}")
    if sc.ignored:
        parts.append(f"--ignore {', '.join(sc.ignored)}")
    return "; ".join(parts)


def verdict_word(report: Report) -> str:
    """CONFORMANT; NOT CONFORMANT (a fail or a MUST error); INCOMPLETE (nothing fails, but a
    MUST requirement was not judged: its findings are all skips)."""
    s = report.summary
    if s.conformant:
        return "CONFORMANT"
    return "INCOMPLETE" if s.incomplete else "NOT CONFORMANT"


def verdict_text(report: Report, scope: Scope | None = None) -> str:
    """The verdict with its scope, the one sentence every format prints:

    * ``CONFORMANT to spec v1.0`` (every requirement judged, nothing ignored)
    * ``CONFORMANT for node scope (12 of 28 requirements; job and cluster scope not in this result)``
    * ``INCOMPLETE for job scope (15 of 28 requirements; not judged (only skips): CKPT-03 (MUST); ...)``
    * ``NOT CONFORMANT to spec v1.0 (node scope evaluated: 12 of 28 requirements; ...)``

    A failure is a failure whatever else was left out, so a non-conformant result is not
    conformant to the spec; what it covered is still said.
    """
    sc = scope or scope_of(report)
    spec = f"spec v{report.spec_version}"
    word = verdict_word(report)
    where = _and(list(sc.scopes)) or "no"
    if word == "CONFORMANT":
        if sc.complete:
            return f"CONFORMANT to {spec}"
        return f"CONFORMANT for {where} scope ({coverage_text(report, sc)})"
    if word == "INCOMPLETE":
        return f"INCOMPLETE for {where} scope ({coverage_text(report, sc)})"
    if sc.complete and not report.summary.not_judged:
        return f"NOT CONFORMANT to {spec}"
    return f"NOT CONFORMANT to {spec} ({where} scope evaluated: {coverage_text(report, sc)})"
