"""The rule, pack, spec and fact-catalogue formats, each defined once.

These dataclasses are the one definition of what a rule file (``rules/vX/*.yaml``), a
pack file (``pack.yaml``), the spec catalogue (``spec/vX/requirements.yaml``) and a fact
catalogue entry hold: the loader validates files into them (``validation_models.py``
hands these same classes to pydantic's ``TypeAdapter``, on the load path only), the
engine reads them, ``bundled.py`` keeps the bundled ones compiled as JSON, and
``spec/rulefile.schema.json`` is generated from them (``python -m validator.report.schemas``;
tests/test_loader.py checks the file matches). Each key is spelled once, here.

What a schema alone cannot say rides along in ``Annotated`` metadata (``Pattern``,
``Checked``) that pydantic reads when it validates: this module imports no pydantic, no
YAML library and nothing else of spec-check but its errors, so the engine and every
verb can import it for free.

Scopes and levels are str-valued enums: ``Scope.NODE == "node"``, and ``str()``,
f-strings and ``json.dumps`` give ``"node"``, so every output reads as before.
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from validator.errors import UnknownRuleError

if TYPE_CHECKING:
    from collections.abc import Callable


class _StrEnum(str, Enum):
    """A str that is also an enum member; reads as its value everywhere (Python 3.10 has
    no ``enum.StrEnum``)."""

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]


class Scope(_StrEnum):
    """What a rule judges, and what a facts document describes."""

    NODE = "node"
    JOB = "job"
    CLUSTER = "cluster"


class Level(_StrEnum):
    """RFC 2119 strength of a requirement (and of a rule that overrides it)."""

    MUST = "MUST"
    SHOULD = "SHOULD"


SCOPES: tuple[str, ...] = tuple(s.value for s in Scope)
LEVELS: tuple[str, ...] = tuple(lv.value for lv in Level)
RULE_ID = re.compile(r"^[A-Z]{2,5}-\d{2}\.[a-z0-9]+(?:-[a-z0-9]+)*$")
REQ_ID = re.compile(r"^[A-Z]{2,5}-\d{2}$")
QUANTITY_DIMENSIONS = ("bitrate", "bytes", "duration", "gpu_time", "power", "energy")
PLAIN_DIMENSIONS = ("count", "ratio", "steps", "string", "list", "bool")
REF_KEYS = ("param", "field", "fact", "formula")


# ---- metadata pydantic reads (imported only when it validates) ------------------------------


class Pattern:
    """A string field must match ``regex`` (and the JSON Schema says so)."""

    def __init__(self, regex: re.Pattern[str]):
        self.regex = regex

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        schema = handler(source)
        schema["pattern"] = self.regex.pattern
        return schema


class Checked:
    """After the type check, ``check(value)`` (a ValueError is the field's error)."""

    def __init__(self, check: Callable[[Any], Any]):
        self.check = check

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.check, handler(source))


def known_operator(op: str) -> str:
    from validator.rules.operators import COMPARISONS, OPERATORS

    if op not in OPERATORS and op not in COMPARISONS:
        raise ValueError(f'unknown operator "{op}" (known: {", ".join(OPERATORS)}; comparing two documents: '
                         f'{", ".join(COMPARISONS)})')
    return op


def check_value_form(value: Any) -> Any:
    """A value is a literal or exactly one of {param}, {field}, {fact}, {formula, args}.
    Whether "550" or "400 Gb/s" is a quantity depends on the fact it is compared with (a
    driver version is a string): the loader's cross-checks decide, against the catalogue."""
    if isinstance(value, dict):
        keys = set(value)
        refs = keys & set(REF_KEYS)
        if len(refs) != 1 or (keys - refs - {"args"}) or ("args" in keys and "formula" not in keys):
            raise ValueError(
                "a value reference is one of {param: NAME}, {field: NAME}, {fact: NAME}, "
                f"{{formula: NAME, args: {{...}}}}; got keys {sorted(keys)}"
            )
        ref = next(iter(refs))
        if not isinstance(value[ref], str):  # {param: [a]} is no name (it raised TypeError)
            got = "a list" if isinstance(value[ref], list) else type(value[ref]).__name__
            raise ValueError(f"{ref}: expected a name, got {got}")
        if "args" in value:
            if not isinstance(value["args"], dict):
                raise ValueError("formula args must be a mapping")
            for v in value["args"].values():
                check_value_form(v)
    elif isinstance(value, list):
        for v in value:
            check_value_form(v)
    return value


# ---- dumps as pydantic gave them --------------------------------------------------------------


def plain(obj: Any, mode: str = "python") -> Any:
    """A dataclass as pydantic's ``model_dump`` gave it: nested objects as dicts, lists
    copied, enums as their values; ``mode="json"`` also turns what JSON lacks into what
    pydantic made of it (dates as ISO text, NaN and infinities as null, tuples and sets
    as lists)."""
    import dataclasses  # here: off the start path (the pack digest, ``spec show``)

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name), mode) for f in dataclasses.fields(obj)}
    if isinstance(obj, _StrEnum):
        return obj.value
    if isinstance(obj, dict):
        return {k: plain(v, mode) for k, v in obj.items()}
    if isinstance(obj, list) or (mode == "json" and isinstance(obj, (tuple, set, frozenset))):
        return [plain(v, mode) for v in obj]
    if mode == "json":
        if isinstance(obj, float) and not math.isfinite(obj):
            return None
        if isinstance(obj, (datetime.date, datetime.time)):
            return obj.isoformat()
        if isinstance(obj, bytes):
            return obj.decode("utf-8")
    return obj


class _Dumps:
    """``model_dump`` and ``model_copy`` as on the pydantic models these replaced (``spec
    show --format json`` dumps the catalogue; the pack digest is made of rule dumps)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}  # pydantic: no unknown key

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return plain(self, mode)  # type: ignore[no-any-return, unused-ignore]

    def model_copy(self, update: dict[str, Any] | None = None) -> Any:
        return replace(self, **(update or {}))  # type: ignore[type-var]  # every subclass is a dataclass


def _enum(obj: Any, name: str, kind: type[_StrEnum], optional: bool = False) -> None:
    value = getattr(obj, name)
    if not (optional and value is None) and not isinstance(value, kind):
        object.__setattr__(obj, name, kind(value))


# ---- rule files -------------------------------------------------------------------------------
# Class names are the JSON Schema's $defs: keep them.


@dataclass(frozen=True, kw_only=True)
class Check(_Dumps):
    op: Annotated[str, Checked(known_operator)]
    value: Annotated[Any, Checked(check_value_form)] = None


@dataclass(frozen=True, kw_only=True)
class Condition(Check):
    fact: str | None = None
    field: str | None = None
    param: str | None = None  # a ``when`` on a profile parameter (platform_metric_families)
    reason: str | None = None  # a condition that does not hold skips (or passes) with this text
    otherwise: Literal["skip", "pass"] = "skip"  # a ``when`` that does not hold: not applicable, or met
    cite: bool = False  # a ``when`` that holds: the verdict's message names the fact's value and source


@dataclass(frozen=True, kw_only=True)
class IfEmpty(_Dumps):
    status: Literal["skip", "fail", "pass", "error"] = "skip"
    message: str


@dataclass(frozen=True, kw_only=True)
class Rule(_Dumps):
    id: Annotated[str, Pattern(RULE_ID)]
    requirement: str
    scope: Scope
    level: Level | None = None
    summary: str
    why: str
    remediation: str
    # the second document a rule compares the job with (``lint --nodes``: its nodes' facts,
    # ``lint --run``: its run); its ``check.op`` is then a comparison (operators.COMPARISONS)
    against: Literal["nodes", "run"] | None = None
    fact: str = ""  # required, except by a rule with ``against`` (it may name the job's side)
    field: str | None = None
    check: Check
    when: list[Condition] = dc_field(default_factory=list)
    where: list[Condition] = dc_field(default_factory=list)
    filter: list[Condition] = dc_field(default_factory=list)  # items that fail these get no finding
    if_empty: IfEmpty | None = None
    since: str = "1.0"
    status: Literal["stable", "preview", "deprecated"] = "stable"
    enabled: bool = True
    cite_source: bool = False  # pass/fail messages end with the fact's source (mechanism, setting)

    def __post_init__(self) -> None:
        _enum(self, "scope", Scope)
        _enum(self, "level", Level, optional=True)


@dataclass(frozen=True, kw_only=True)
class Override(_Dumps):
    id: str
    level: Level | None = None
    check: Check | None = None
    when: list[Condition] | None = None
    enabled: bool | None = None
    summary: str | None = None
    remediation: str | None = None
    if_empty: IfEmpty | None = None
    cite_source: bool | None = None  # a pack revision may have the message say where the value came from

    def __post_init__(self) -> None:
        _enum(self, "level", Level, optional=True)


@dataclass(frozen=True, kw_only=True)
class RuleFile(_Dumps):
    rules: list[Rule] = dc_field(default_factory=list)
    overrides: list[Override] = dc_field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class PackFile(_Dumps):
    id: str
    spec_version: str
    min_engine_version: str = "0.1"
    extends: str | None = None
    description: str = ""


# ---- the spec catalogue -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Parameter(_Dumps):
    default: Any = None
    dimension: Literal[QUANTITY_DIMENSIONS + PLAIN_DIMENSIONS]  # type: ignore[valid-type]
    description: str
    source: str
    # whose figure the default is (the report lists spec-check's own): the spec's, one a cited
    # source published, spec-check's choice, or none (set per run)
    reading: Literal["spec", "published", "spec-check", "per-run"]
    label: str | None = None  # how a finding names it ("metric families the platform provides")
    values: dict[str, str] | None = None  # coded list values in words, as a fact's ``values``


@dataclass(frozen=True, kw_only=True)
class Requirement(_Dumps):
    id: Annotated[str, Pattern(REQ_ID)]
    level: Level
    title: str
    statement: str
    rationale: str
    scopes: list[Scope]
    parameters: list[str] = dc_field(default_factory=list)

    def __post_init__(self) -> None:
        _enum(self, "level", Level)
        if not all(isinstance(s, Scope) for s in self.scopes):
            object.__setattr__(self, "scopes", [Scope(s) for s in self.scopes])


@dataclass(frozen=True, kw_only=True)
class Spec(_Dumps):
    spec_version: str
    title: str
    status: str
    requirements: list[Requirement]
    parameters: dict[str, Parameter]

    def requirement(self, req_id: str) -> Requirement | None:
        return next((r for r in self.requirements if r.id == req_id), None)


# ---- the fact catalogue -----------------------------------------------------------------------


@dataclass(frozen=True)
class FactInfo:
    name: str
    type: str
    unit: str | None
    label: str
    fields: dict[str, FactInfo]
    # coded values in words, for sentences that quote them ("divisible" -> "global batch a
    # multiple of micro-batch x data-parallel size"); the facts keep the codes
    values: dict[str, str] = dc_field(default_factory=dict)


# ---- a loaded pack --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RulePack:
    """The enabled rules of a pack (extends and overrides applied), its digest (over every
    rule, enabled or not) and the files it was read from."""

    id: str
    spec_version: str
    rules: tuple[Rule, ...]
    digest: str
    files: tuple[str, ...]

    def get(self, rule_id: str) -> Rule:
        for r in self.rules:
            if r.id == rule_id:
                return r
        known = ", ".join(r.id for r in self.rules[:6])
        raise UnknownRuleError(f'no such rule: "{rule_id}" (known: {known}, ...; see `spec-check rules list`)')

    def level_of(self, rule: Rule, spec: Spec) -> Level:
        if rule.level:
            return rule.level
        req = spec.requirement(rule.requirement)
        return req.level if req else Level.MUST


FILE_MODELS: dict[str, type] = {"RuleFile": RuleFile, "PackFile": PackFile, "Spec": Spec}
"""The top-level format of each kind of file, by the name errors and the schema use."""
