"""The result model: findings and the report, the hand-off from engine to renderers.

These are frozen dataclasses rather than pydantic models: a fleet run builds hundreds of
thousands of findings and they need no validation (the engine made them). ``to_dict``
gives the JSON result whose schema is ``spec/result.schema.json``; ``report_from_dict``
reads one back (``spec-check report``, ``diff``, ``sign``).
"""

from __future__ import annotations

import enum
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from functools import cached_property
from typing import Any

from validator.versions import RESULT_SCHEMA as RESULT_SCHEMA  # re-exported; defined in one place

MAX_SOURCE_TEXT = 200  # characters of a source line a finding carries


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while building many long-lived objects.

    Evaluating a fleet and rendering its result allocate millions of dicts, strings and
    findings that all stay alive (no cycles to find), and each allocation burst triggers
    collections that walk every live object, facts documents included: a third of the
    time of a 10,000-node run. Reference counting still frees everything as usual; the
    collector is switched back on (if it was on) on the way out."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Status(str, enum.Enum):
    """The five statuses; their meaning is a contract (README.md, docs/reports.md)."""

    PASS = "pass"  # the requirement is met, with the observed value
    FAIL = "fail"  # a MUST is not met
    WARN = "warn"  # a SHOULD is not met
    SKIP = "skip"  # not applicable here, with the reason
    ERROR = "error"  # the fact could not be gathered or read, with the reason


STATUS_ORDER = (Status.FAIL, Status.ERROR, Status.WARN, Status.SKIP, Status.PASS)


@dataclass(frozen=True, slots=True)
class Location:
    file: str
    line: int | None = None
    # the line's text, captured when the run read the file (capped at 200 characters):
    # renderers show this and never open ``file`` (a replayed result names paths that
    # this machine need not have, or should not show)
    text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.text is None:
            return {"file": self.file, "line": self.line}
        return {"file": self.file, "line": self.line, "text": self.text}


@dataclass(frozen=True, slots=True, init=False)
class Finding:
    """One verdict of one rule on one subject (node, job, cluster) and item (GPU, port).

    The constructor is written out (``init=False``) rather than generated: a frozen
    dataclass's ``__init__`` sets each field through ``object.__setattr__``, a third of
    the time a 10,000-node evaluation spends making its 330,000 findings; this one sets
    the slots through their descriptors. Same signature, same result (a test compares).
    """

    rule: str
    requirement: str
    level: str  # MUST | SHOULD
    status: Status
    subject: str
    expected: str
    message: str
    remediation: str
    item: str | None = None
    observed: str | None = None  # the value with its unit, for people
    value: Any = None  # the raw observed value, for machines
    unit: str | None = None
    source: str | None = None  # probe path, command, or file
    location: Location | None = None
    waiver: dict[str, Any] | None = None
    # several verdicts in one finding (a large fleet's passes and skips): see FOLDED below
    folded: dict[str, Any] | None = None

    def __init__(self, rule: str, requirement: str, level: str, status: Status, subject: str,
                 expected: str, message: str, remediation: str, item: str | None = None,
                 observed: str | None = None, value: Any = None, unit: str | None = None,
                 source: str | None = None, location: Location | None = None,
                 waiver: dict[str, Any] | None = None, folded: dict[str, Any] | None = None) -> None:
        s = _FINDING_SLOTS
        s[0](self, rule)
        s[1](self, requirement)
        s[2](self, level)
        s[3](self, status)
        s[4](self, subject)
        s[5](self, expected)
        s[6](self, message)
        s[7](self, remediation)
        s[8](self, item)
        s[9](self, observed)
        s[10](self, value)
        s[11](self, unit)
        s[12](self, source)
        s[13](self, location)
        s[14](self, waiver)
        s[15](self, folded)

    @property
    def severity(self) -> str:
        return "error" if self.level == "MUST" else "warning"

    @property
    def waived(self) -> bool:
        """Under an active waiver: still shown as observed, but out of the verdict. The one
        definition every verdict, renderer and diff uses (an expired waiver changes nothing).
        Only a fail or warn: an error is an unknown, which no waiver accepts, even one a
        result recorded by an older version carries."""
        return bool(self.waiver and self.waiver.get("active")) and self.status in (Status.FAIL, Status.WARN)

    @property
    def against_verdict(self) -> bool:
        """Makes its run not conformant: a ``fail``, or an ``error`` on a MUST rule (unknown is
        never pass), outside an active waiver."""
        return not self.waived and (
            self.status is Status.FAIL or (self.status is Status.ERROR and self.level == "MUST")
        )

    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.subject, self.requirement, self.rule, self.item or "")

    def to_dict(self) -> dict[str, Any]:
        # a dict display, not dataclasses.asdict (which deep-copies every value) nor a loop
        # over fields(): a 10,000-node cluster result has 330,000 findings. The key order
        # is the fields' order plus "severity" (test_finding_dict_keys_follow_the_fields)
        loc, waiver = self.location, self.waiver
        out = {
            "rule": self.rule,
            "requirement": self.requirement,
            "level": self.level,
            "status": self.status.value,
            "subject": self.subject,
            "expected": self.expected,
            "message": self.message,
            "remediation": self.remediation,
            "item": self.item,
            "observed": self.observed,
            "value": self.value,
            "unit": self.unit,
            "source": self.source,
            "location": None if loc is None else loc.to_dict(),
            "waiver": None if waiver is None else dict(waiver),
            "severity": "error" if self.level == "MUST" else "warning",
        }
        if self.folded is not None:  # only on folded findings: other results keep their bytes
            out["folded"] = dict(self.folded)
        return out


# A folded finding stands for many verdicts of one rule that share a status and an
# expected sentence (``spec-check cluster`` folds the passes and skips of a large fleet so
# that 25,000 nodes stay a result of a few MiB). Its subject is the cluster, and
# ``folded`` says what it stands for: "subjects" (how many hosts), "verdicts" (how many
# per-item verdicts), "names" (the hosts, as a Slurm-style host list), and for the values
# seen either "range" ([min, max] of a number, with "unit") or "values" (up to
# FOLDED_VALUES distinct texts; "more" counts the others).
FOLDED_KEYS = ("subjects", "verdicts", "names", "range", "values", "more")
FOLDED_VALUES = 10

_FINDING_FIELDS = tuple(f.name for f in fields(Finding))
# each field's slot setter, in field order (Finding.__init__ relies on this order)
_FINDING_SLOTS: tuple[Any, ...] = tuple(Finding.__dict__[name].__set__ for name in _FINDING_FIELDS)


@dataclass(frozen=True, slots=True)
class RuleDoc:
    """What renderers need to describe a rule (SARIF rule metadata, HTML, explain)."""

    id: str
    requirement: str
    name: str
    level: str
    scope: str
    summary: str
    why: str
    remediation: str


@dataclass(frozen=True, slots=True)
class RequirementDoc:
    id: str
    level: str
    title: str
    statement: str


@dataclass(frozen=True, slots=True)
class Subject:
    name: str
    kind: str  # node | job | cluster
    facts_digest: str | None = None
    collected_at: str | None = None
    source: str | None = None  # the facts file, the host address, or "probe"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "facts_digest": self.facts_digest,
                "collected_at": self.collected_at, "source": self.source}


@dataclass(frozen=True)
class Summary:
    counts: dict[str, int]
    conformant: bool

    def to_dict(self, *, findings: bool = True) -> dict[str, Any]:
        """The JSON result; ``findings=False`` leaves ``"findings"`` an empty list in its
        place, for a writer that converts the findings one at a time."""
        return {**self.counts, "total": sum(self.counts.values()), "conformant": self.conformant}


def summarize(findings: tuple[Finding, ...] | list[Finding]) -> Summary:
    """Counts per status, and whether the findings are conformant.

    Not conformant: any ``fail``, or any ``error`` on a MUST rule (unknown is never pass).
    A finding under an active waiver does not count against conformance.
    """
    counts = {s.value: 0 for s in Status}
    conformant = True
    for f in findings:
        counts[f.status.value] += 1
        if f.against_verdict:
            conformant = False
    return Summary(counts, conformant)


@dataclass(frozen=True)
class Report:
    """A whole run: what was checked, against what, and every finding."""

    command: str
    spec_version: str
    tool_version: str
    rule_pack: dict[str, str]  # {"id": "v1.0", "digest": "sha256:..."}
    generated_at: str
    parameters: dict[str, dict[str, Any]]  # name -> {"value": "400 Gb/s", "origin": "default"}
    subjects: tuple[Subject, ...]
    findings: tuple[Finding, ...]
    rules: tuple[RuleDoc, ...] = ()
    requirements: tuple[RequirementDoc, ...] = ()
    profile: str | None = None
    selection: dict[str, list[str]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. cluster measurements

    @cached_property
    def summary(self) -> Summary:
        """Counted once per report (its findings are a tuple: they cannot change; ``replace``
        and ``with_findings`` make a new report, with its own count)."""
        return summarize(self.findings)

    def with_findings(self, findings: tuple[Finding, ...]) -> Report:
        return replace(self, findings=findings)

    def to_dict(self, *, findings: bool = True, subjects: bool = True) -> dict[str, Any]:
        """The JSON result; ``findings=False`` (``subjects=False``) leaves ``"findings"``
        (``"subjects"``) an empty list in its place, for a writer that converts them one
        at a time."""
        return {
            "schema": RESULT_SCHEMA,
            "command": self.command,
            "spec_version": self.spec_version,
            "tool_version": self.tool_version,
            "rule_pack": dict(self.rule_pack),
            "generated_at": self.generated_at,
            "profile": self.profile,
            "parameters": self.parameters,
            "selection": self.selection,
            # 25,000 in a fleet result: no asdict
            "subjects": [s.to_dict() for s in self.subjects] if subjects else [],
            "summary": self.summary.to_dict(),
            "findings": [f.to_dict() for f in self.findings] if findings else [],
            "rules": [asdict(r) for r in self.rules],
            "requirements": [asdict(r) for r in self.requirements],
            **({"extra": self.extra} if self.extra else {}),
        }


def finding_from_dict(d: dict[str, Any]) -> Finding:
    loc = d.get("location")
    return Finding(
        rule=d["rule"],
        requirement=d["requirement"],
        level=d.get("level", "MUST"),
        status=Status(d["status"]),
        subject=d["subject"],
        expected=d.get("expected", ""),
        message=d.get("message", ""),
        remediation=d.get("remediation", ""),
        item=d.get("item"),
        observed=d.get("observed"),
        value=d.get("value"),
        unit=d.get("unit"),
        source=d.get("source"),
        location=Location(loc["file"], loc.get("line"),
                          loc["text"][:MAX_SOURCE_TEXT] if isinstance(loc.get("text"), str) else None)
        if loc else None,
        waiver=d.get("waiver"),
        folded=d.get("folded") if isinstance(d.get("folded"), dict) else None,
    )


def report_from_dict(d: dict[str, Any]) -> Report:
    """Rebuild a Report from its JSON form (validated against the schema by the caller)."""
    return Report(
        command=d["command"],
        spec_version=d["spec_version"],
        tool_version=d["tool_version"],
        rule_pack=d["rule_pack"],
        generated_at=d["generated_at"],
        parameters=d.get("parameters", {}),
        subjects=tuple(Subject(**s) for s in d.get("subjects", [])),
        findings=tuple(finding_from_dict(f) for f in d["findings"]),
        rules=tuple(RuleDoc(**r) for r in d.get("rules", [])),
        requirements=tuple(RequirementDoc(**r) for r in d.get("requirements", [])),
        profile=d.get("profile"),
        selection=d.get("selection", {}),
        extra=d.get("extra", {}),
    )
