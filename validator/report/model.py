"""The result model: findings and the report, the hand-off from engine to renderers.

These are frozen dataclasses rather than pydantic models: a fleet run builds hundreds of
thousands of findings and they need no validation (the engine made them). ``to_dict``
gives the JSON result; ``report_from_dict`` reads one back (``spec-check report``,
``diff``, ``sign``).

They are also the one definition of the result format: ``spec/result.schema.json`` is
generated from their annotations (``python -m validator.report.schemas result``; a test fails
when the checked-in file drifts), and the reader's checks (``results.py``) take their
fields, forms and enums from here. What a Python type alone cannot say rides along in
``Annotated`` metadata (``Form``, ``Keywords``, ``Shape``, ``REQUIRED``, ``OMITTED_IF_NONE``): with
``from __future__ import annotations`` none of it is evaluated unless a schema is made.
"""

from __future__ import annotations

import enum
import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal, TypedDict

from validator.rules.rulemodel import Level as Level  # re-exported: renderers take the Report and its enums alone
from validator.rules.rulemodel import Scope as Scope
from validator.values import JSONValue as JSONValue  # re-exported: defined below every stage
from validator.versions import RESULT_SCHEMA as RESULT_SCHEMA  # re-exported; defined in one place

MAX_SOURCE_TEXT = 200  # characters of a source line a finding carries



# ---- what the result schema says beyond the Python types ------------------------------------
# validator/report/schemas.py reads these from the annotations below; results.py checks with them.


@dataclass(frozen=True)
class Form:
    """A text field's form: ``regex`` is what the reader accepts (full match). The schema
    states ``"^regex$"``, or ``published`` where result/2 published another pattern (""
    for none): tightening a published pattern is a new schema version."""

    name: str
    regex: str
    published: str | None = None

    @property
    def pattern(self) -> str | None:
        if self.published is None:
            return f"^{self.regex}$"
        return self.published or None


class Keywords:
    """JSON Schema keywords added to a field's generated schema (bounds, descriptions)."""

    def __init__(self, **keywords: JSONValue) -> None:
        self.keywords = keywords


class Shape:
    """The JSON object a ``dict`` field holds has the keys of ``typed`` (a TypedDict); the
    code keeps building plain dicts (a waiver record, a fleet's fold), so the Python type
    stays ``dict``."""

    def __init__(self, typed: type) -> None:
        self.typed = typed


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


REQUIRED = _Marker("REQUIRED")
"""A field with a default that is always written, and that the schema requires."""
OMITTED_IF_NONE = _Marker("OMITTED_IF_NONE")
"""A field written only when set: the schema allows no null for it."""

SPEC_VERSION = Form("spec_version", r"\d{1,4}(\.\d{1,4}){0,3}")
TOOL_VERSION = Form("tool_version", r"[0-9A-Za-z][0-9A-Za-z.+-]{0,63}")
GENERATED_AT = Form("generated_at", r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})")
COMMAND = Form("command", r"[a-z][a-z-]{0,31}", published="")
RULE = Form("rule", r"[A-Z]{2,5}-\d{2}\.[a-z0-9]+(?:-[a-z0-9]+)*", published=r"^[A-Z]{2,5}-\d{2}\.[a-z0-9-]+$")
REQUIREMENT = Form("requirement", r"[A-Z]{2,5}-\d{2}")
DIGEST = Form("digest", r"sha256:[0-9a-f]{64}")
FINDING_ID = Form("finding id", r"[0-9a-f]{32}")
FORMS = {f.name: f for f in (SPEC_VERSION, TOOL_VERSION, GENERATED_AT, COMMAND, RULE, REQUIREMENT, DIGEST)}


# ---- the result's JSON objects that are dicts in Python --------------------------------------


class RulePackRef(TypedDict):
    id: str
    digest: Annotated[str, DIGEST]


class _ParameterValue(TypedDict):
    value: str  # "400 Gb/s"
    origin: str  # "default", "profile p.yaml", "--set"


class ParameterValue(_ParameterValue, total=False):
    default: str


class _Waiver(TypedDict):
    active: bool


class Waiver(_Waiver, total=False):
    id: str
    subject: str
    justification: str
    approver: str
    expires: str
    waiver_id: str  # the waiver's own identity: written in the file, or derived from id and subject
    granted: str | None  # when it was granted (YYYY-MM-DD), where the file says
    as_of: str  # the day its expiry was judged on (``active``): the run's, or ``report --as-of``


class _Folded(TypedDict):
    subjects: Annotated[int, Keywords(minimum=1, description="hosts folded")]
    verdicts: Annotated[int, Keywords(minimum=1, description="verdicts folded (one per item)")]
    names: Annotated[str, Keywords(description="the hosts, as a Slurm-style host list (node[0001-0016])")]


class Folded(_Folded, total=False):
    range: Annotated[list[JSONValue] | None, Keywords(
        minItems=2, maxItems=2, description="[min, max] of a numeric value, in the finding's unit")]
    values: Annotated[list[str], Keywords(description="distinct values seen, as shown (at most 10)")]
    more: Annotated[int, Keywords(minimum=0, description="distinct values beyond those listed")]


class _Coverage(TypedDict):
    complete: bool
    scopes: list[Scope]
    requirements_evaluated: list[str]
    requirements_total: Annotated[int, Keywords(minimum=0)]


class Coverage(_Coverage, total=False):
    """What the verdict covers: conformance to the whole spec only when complete."""

    scopes_not_evaluated: list[Scope]
    requirements_not_evaluated: Annotated[list[str], Keywords(description="requirements with no finding")]
    requirements_not_judged: Annotated[list[str], Keywords(
        description="requirements whose findings are all skips: not judged, never counted as conformant")]
    ignored: Annotated[list[str], Keywords(description="rule or requirement ID prefixes --ignore left out")]


class _JobVerdict(TypedDict):
    name: str
    files: list[str]
    conformant: bool


class JobVerdict(_JobVerdict, total=False):
    """lint: each job found (an entry point and the files it names) with its own verdict;
    findings name their job as subject"""

    counts: dict[str, Annotated[int, Keywords(minimum=0)]]


class Replacement(TypedDict):
    """A fix as text: lines ``start``..``end`` of the file (1-based, inclusive; ``end`` =
    ``start`` - 1 inserts before line ``start``) replaced by ``text``."""

    start: Annotated[int, Keywords(minimum=1)]
    end: Annotated[int, Keywords(minimum=0)]
    text: str


class _Fix(TypedDict):
    file: str
    kind: Literal["key", "flag", "env"]
    target: str
    value: JSONValue
    why: str


class Fix(_Fix, total=False):
    """A machine-readable edit that clears the finding: in ``file``, set the key path
    (``kind`` "key": dotted, as the framework spells it), command-line flag ("flag": the
    flag, ``value`` true for a bare flag) or environment variable ("env") ``target`` to
    ``value``; ``why`` says why that value (the framework's documented setting with its
    version, a Daly interval from the step time). ``replace`` is the edit as text, lines
    ``start``..``end`` (1-based, inclusive; ``end`` = ``start`` - 1 inserts before ``start``)
    replaced by ``text``, computed when the file was read (SARIF's fixes). ``needs``: the
    edit is not applied, the tool lacks a value (``value`` null) and this says what to pass."""

    line: Annotated[int | None, Keywords(description="the line that holds the setting now, if any")]
    replace: Replacement
    needs: Annotated[str, Keywords(description="why the edit is not applied, and what to pass for it")]


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
    line: Annotated[int | None, REQUIRED] = None
    # the line's text, captured when the run read the file (capped at 200 characters):
    # renderers show this and never open ``file`` (a replayed result names paths that
    # this machine need not have, or should not show)
    text: Annotated[str | None, OMITTED_IF_NONE, Keywords(maxLength=MAX_SOURCE_TEXT)] = None

    def to_dict(self) -> dict[str, Any]:
        if self.text is None:
            return {"file": self.file, "line": self.line}
        return {"file": self.file, "line": self.line, "text": self.text}


@dataclass(frozen=True, slots=True)
class Finding:
    """One verdict of one rule on one subject (node, job, cluster) and item (GPU, port).

    A slotted frozen dataclass: a 10,000-node cluster run makes 330,000 of them, and slots
    keep each small.
    """

    rule: Annotated[str, RULE]
    requirement: Annotated[str, REQUIREMENT]
    level: Level
    status: Status
    subject: str
    expected: str
    message: Annotated[str, Keywords(minLength=1)]
    remediation: str
    item: str | None = None
    observed: Annotated[str | None, REQUIRED] = None  # the value with its unit, for people
    value: JSONValue = None  # the raw observed value, for machines
    unit: str | None = None
    source: str | None = None  # probe path, command, or file
    location: Annotated[Location | None, REQUIRED] = None
    waiver: Annotated[dict[str, Any] | None, Shape(Waiver)] = None
    # several verdicts in one finding (a large fleet's passes and skips): see FOLDED below
    folded: Annotated[dict[str, Any] | None, Shape(Folded), OMITTED_IF_NONE, Keywords(description=(
        "Present only on a finding that stands for many verdicts of one rule with one status and "
        "expected sentence (spec-check cluster folds a large fleet's passes and skips): its subject "
        "is the cluster."))] = None
    # lint: the edits to the job's files that clear this finding (``lint --fix`` applies them)
    fixes: Annotated[list[Fix] | None, OMITTED_IF_NONE, Keywords(description=(
        "Present only on a job finding whose remedy is an edit to the job's files: each edit, "
        "machine-readable (spec-check lint --fix applies them)."))] = None
    # lint: a failing finding with no edit to offer says why, and what evidence would decide it
    no_fix: Annotated[str | None, OMITTED_IF_NONE, Keywords(description=(
        "Present only on a failing job finding with no file edit to offer: why, and what "
        "evidence would decide it."))] = None

    # in the JSON, not a field: "error" for a MUST, "warning" for a SHOULD (the property below)
    JSON_COMPUTED: ClassVar[dict[str, Any]] = {
        "severity": Annotated[Literal["error", "warning"], REQUIRED],
        "id": Annotated[str, FINDING_ID],
    }

    @property
    def severity(self) -> str:
        return "error" if self.level == Level.MUST else "warning"

    @property
    def waived(self) -> bool:
        """Under an active waiver: still shown as observed, but out of the verdict. The one
        definition every verdict, renderer and diff uses (an expired waiver changes nothing).
        A fail or warn; an error only when a ``--baseline`` recorded it with the same reason
        (``report/baseline.py``): no waiver file accepts an unknown."""
        waiver = self.waiver
        if not (waiver and waiver.get("active")):
            return False
        return self.status in (Status.FAIL, Status.WARN) or (
            self.status is Status.ERROR and bool(waiver.get("baseline")))

    @property
    def against_verdict(self) -> bool:
        """Makes its run not conformant: a ``fail``, or an ``error`` on a MUST rule (unknown is
        never pass), outside an active waiver."""
        return not self.waived and (
            self.status is Status.FAIL or (self.status is Status.ERROR and self.level == Level.MUST)
        )

    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.subject, self.requirement, self.rule, self.item or "")

    def to_dict(self, fid: str | None = None) -> dict[str, Any]:
        # a dict display, not dataclasses.asdict (which deep-copies every value) nor a loop
        # over fields(): a 10,000-node cluster result has 330,000 findings. The key order
        # is the fields' order plus "severity", then "id" (``finding_ids``) where given
        # (test_finding_dict_keys_follow_the_fields)
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
            "severity": "error" if self.level == Level.MUST else "warning",
        }
        if self.folded is not None:  # only on folded findings: other results keep their bytes
            out["folded"] = dict(self.folded)
        if self.fixes is not None:
            out["fixes"] = [dict(f) for f in self.fixes]
        if self.no_fix is not None:
            out["no_fix"] = self.no_fix
        if fid is not None:
            out["id"] = fid
        return out


def finding_id(rule: str, subject: str, item: str | None) -> str:
    """A finding's identity across runs: the first 32 hex digits of the SHA-256 of rule,
    subject and item (joined by U+001F). The same finding in next month's result has the
    same ID whatever its status, observed value or line; ``diff``, the SARIF
    ``partialFingerprints`` and OSCAL read it."""
    import hashlib

    return hashlib.sha256("\x1f".join((rule, subject, item or "")).encode("utf-8")).hexdigest()[:32]


def finding_ids(findings: tuple[Finding, ...] | list[Finding]) -> list[str]:
    """Each finding's ID, in order. Two findings of one rule on one subject and item (two
    lines of one config) are told apart as ``item#2``, ``item#3`` in the order the result
    lists them, as ``diff`` pairs them."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for f in findings:
        base = (f.rule, f.subject, f.item or "")
        n = seen[base] = seen.get(base, 0) + 1
        out.append(finding_id(f.rule, f.subject, base[2] if n == 1 else f"{base[2]}#{n}"))
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



@dataclass(frozen=True, slots=True)
class RuleDoc:
    """What renderers need to describe a rule (SARIF rule metadata, HTML, explain)."""

    id: str
    requirement: str
    name: str
    level: Level
    scope: Scope
    summary: str
    why: str
    remediation: str

    # result/2 published only these keys as required, and no types: the reader checks all
    PUBLISHED_REQUIRED: ClassVar[tuple[str, ...]] = ("id", "requirement", "level", "summary")


@dataclass(frozen=True, slots=True)
class RequirementDoc:
    id: str
    level: Level
    title: str
    statement: str

    PUBLISHED_REQUIRED: ClassVar[tuple[str, ...]] = ("id", "level", "statement")


@dataclass(frozen=True, slots=True)
class Subject:
    name: str
    kind: Scope
    facts_digest: str | None = None
    collected_at: str | None = None
    source: str | None = None  # the facts file, the host address, or "probe"
    # a node's: the spec-check that probed it (its facts document's tool_version) and the
    # machine's identity (host.machine_id, host.board_serial) where the probe could read them
    probe_version: str | None = None
    machine_id: str | None = None
    board_serial: str | None = None

    @classmethod
    def of_document(cls, doc: Mapping[str, Any], facts_digest: str | None, source: str | None,
                    name: str | None = None) -> Subject:
        """The subject a facts document describes; a node's with its probe's version and
        the machine's identity, where its document holds them."""
        subject = doc["subject"]
        kind = subject["kind"]
        collected = doc.get("collected_at")
        collected = collected if isinstance(collected, str) else None  # a number or a list is no time
        if kind != "node":
            return cls(name or subject["name"], kind, facts_digest, collected, source)
        from validator.values import identity_of

        machine_id, serial, _ = identity_of(doc.get("facts") or {})
        version = doc.get("tool_version")
        return cls(name or subject["name"], kind, facts_digest, collected, source,
                   version if isinstance(version, str) and version else None, machine_id, serial)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "facts_digest": self.facts_digest,
                "collected_at": self.collected_at, "source": self.source, "probe_version": self.probe_version,
                "machine_id": self.machine_id, "board_serial": self.board_serial}


@dataclass(frozen=True)
class Summary:
    counts: dict[str, int]  # status -> findings
    conformant: bool
    # MUST requirements with findings on a subject that are all skips there: not judged, so
    # the run is not conformant (its verdict is INCOMPLETE when nothing else fails)
    not_judged: tuple[str, ...] = ()
    # a fail or MUST error outside a waiver: NOT CONFORMANT (else INCOMPLETE, when not_judged)
    problems: bool = False

    # the JSON, in place of the fields: the counts by status, their total, the verdict, and
    # (added by renderers/json_.py) the verdict in words and what it covers
    JSON_FIELDS: ClassVar[dict[str, Any]] = {
        **{s.value: Annotated[int, REQUIRED, Keywords(minimum=0)] for s in Status},
        "total": Annotated[int, REQUIRED, Keywords(minimum=0)],
        "conformant": Annotated[bool, REQUIRED],
        "not_judged": Annotated[list[str], Keywords(description=(
            "MUST requirements whose findings on some subject are all skips: not judged, so the "
            "result is not conformant (its verdict says INCOMPLETE when nothing else fails)"))],
        "verdict": Annotated[str, Keywords(description="the verdict in words, naming what it covers")],
        "coverage": Coverage,
    }

    @property
    def incomplete(self) -> bool:
        """Not conformant only because a MUST requirement was not judged (verdict INCOMPLETE)."""
        return bool(self.not_judged) and not self.problems

    def to_dict(self, *, findings: bool = True) -> dict[str, Any]:
        """The JSON result; ``findings=False`` leaves ``"findings"`` an empty list in its
        place, for a writer that converts the findings one at a time."""
        return {**self.counts, "total": sum(self.counts.values()), "conformant": self.conformant,
                "not_judged": list(self.not_judged)}


def summarize(findings: tuple[Finding, ...] | list[Finding]) -> Summary:
    """Counts per status, and whether the findings are conformant.

    Not conformant: any ``fail``, or any ``error`` on a MUST rule (unknown is never pass),
    or a MUST requirement *not judged*: on some subject every finding of it is a ``skip``
    (a rule that looked and could not apply judges nothing; a CONFORMANT over it would claim
    what was never checked). A finding under an active waiver does not count against
    conformance.
    """
    counts = {s.value: 0 for s in Status}
    problems = False
    judged: set[tuple[str, str]] = set()
    skipped: dict[tuple[str, str], str] = {}  # (subject, requirement) with a MUST skip
    skip, must = Status.SKIP, Level.MUST
    for f in findings:
        st = f.status
        counts[st.value] += 1
        # a folded finding stands for many hosts' verdicts under the cluster's name: kept
        # apart from the cluster's own findings, so the hosts' passes cannot judge them
        subject = f.subject if f.folded is None else f"{f.subject}\x1ffolded"
        if st is skip:
            if f.level == must:
                skipped[(subject, f.requirement)] = f.requirement
            continue
        judged.add((subject, f.requirement))
        if f.against_verdict:
            problems = True
    not_judged = tuple(dict.fromkeys(r for k, r in skipped.items() if k not in judged))
    return Summary(counts, not problems and not not_judged, not_judged, problems)


@dataclass(frozen=True)
class Report:
    """A whole run: what was checked, against what, and every finding."""

    command: Annotated[str, COMMAND]
    spec_version: Annotated[str, SPEC_VERSION]
    tool_version: Annotated[str, TOOL_VERSION]
    rule_pack: Annotated[dict[str, str], Shape(RulePackRef)]
    generated_at: Annotated[str, GENERATED_AT]
    # name -> {"value": "400 Gb/s", "origin": "default"}
    parameters: dict[str, Annotated[dict[str, Any], Shape(ParameterValue)]]
    subjects: tuple[Subject, ...]
    findings: tuple[Finding, ...]
    rules: tuple[RuleDoc, ...] = ()
    requirements: tuple[RequirementDoc, ...] = ()
    profile: str | None = None
    # published as any object (result/2); the reader checks lists of strings
    selection: Annotated[dict[str, list[str]], Keywords(published={"type": "object"})] = field(default_factory=dict)
    # e.g. cluster measurements ("fleet"); the schema describes lint's "jobs"
    extra: Annotated[dict[str, JSONValue], Keywords(properties={"jobs": list[JobVerdict]})] = field(
        default_factory=dict)

    # in the JSON, not fields: the format's version, and the counts with the verdict
    JSON_COMPUTED: ClassVar[dict[str, Any]] = {
        "schema": Annotated[Literal[RESULT_SCHEMA], REQUIRED],
        "summary": Annotated[Summary, REQUIRED],
    }

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
            "findings": [f.to_dict(i) for f, i in zip(self.findings, finding_ids(self.findings), strict=True)]
            if findings else [],
            "rules": [_flat_dict(r) for r in self.rules],
            "requirements": [_flat_dict(r) for r in self.requirements],
            **({"extra": self.extra} if self.extra else {}),
        }


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _flat_dict(record: Any) -> dict[str, Any]:
    """``dataclasses.asdict`` of a record whose fields are strings and enums (RuleDoc,
    RequirementDoc): the same dict, without asdict's deep copy of every value (a check's
    result has a hundred of them; tests/reports/test_json_writer.py compares the two)."""
    cls = type(record)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(record))
    return {name: getattr(record, name) for name in names}


def finding_from_dict(d: dict[str, Any]) -> Finding:
    loc = d.get("location")
    return Finding(
        rule=d["rule"],
        requirement=d["requirement"],
        level=d.get("level", Level.MUST),
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
        fixes=[f for f in d["fixes"] if isinstance(f, dict)] if isinstance(d.get("fixes"), list) else None,  # type: ignore[misc]
        no_fix=d.get("no_fix") if isinstance(d.get("no_fix"), str) else None,
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
