"""Reading a JSON result back (``report``, ``diff``, ``sign``, ``verify``).

A result file is input like any other: truncated, malformed or another schema's JSON
ends in one ``SpecCheckError`` naming the file and the problem (exit 2), never a
traceback. The check is by hand rather than with jsonschema, which is a test-only
dependency; it covers what ``report_from_dict`` needs, so a file that passes here
always rebuilds into a Report.

What it checks comes from the result model (``validator/report/model.py``), the definition
``spec/result.schema.json`` is generated from: the keys and types of findings, subjects,
waivers and rule docs, the identifiers' forms, the statuses, levels and scopes. It reads
every readable version (result/1 lacks keys result/2 requires) and is stricter than the
published schema where that was published loosely (rule ids, commands, rule docs, unknown
keys): tests/hardening/test_properties.py holds that what it accepts, the schema accepts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from validator.errors import SpecCheckError
from validator.report import model
from validator.report.model import JSONValue, Report, Status, report_from_dict
from validator.rules.rulemodel import Level, Scope
from validator.versions import unreadable

# Read back whatever spec-check writes: the largest result ``cluster`` writes (25,000 nodes,
# passes folded) is under 200 MiB; the cap leaves room for unfolded fleets of that size
# (tests/hardening/test_round_trip.py holds the writer to it).
MAX_RESULT_BYTES = 1024 * 1024 * 1024
_STATUSES = {s.value for s in Status}
_LEVELS = tuple(lv.value for lv in Level)  # a tuple: a list value is not hashable
_SCOPES = tuple(s.value for s in Scope)


def read_json(path: Path, *, duplicates: list[str] | None = None) -> JSONValue:
    """Parse one JSON file; every failure is one error naming the file (and line).

    Keys repeated within one object are collected into ``duplicates`` when given: JSON
    parsers disagree on which copy wins, so a signed file with one is never intact.
    """
    where = str(path)
    from validator.io.jsondoc import JSONProblem, parse
    from validator.io.safeio import InputError, read_text

    try:
        text = read_text(path, cap=MAX_RESULT_BYTES, what="JSON result")
    except InputError as exc:
        raise SpecCheckError(exc.problem, file=where, line=exc.line) from None
    try:  # repeated keys, NaN, numbers beyond any real value, lone surrogates: jsondoc
        return parse(text, duplicates=duplicates)
    except JSONProblem as exc:
        raise SpecCheckError(exc.problem, file=where, line=exc.line) from None


def check_result(data: JSONValue, where: str) -> dict[str, JSONValue]:
    """The document if it is a spec-check result; else one error naming the field.

    Every field a renderer, verdict or diff reads is checked for its type (a boolean is
    a boolean: ``"active": "false"`` is no waiver), and the contract's identifiers for
    their form (so rich markup or a control character cannot pose as a rule id), before
    anything renders or counts it; spec/result.schema.json says the same (a test holds
    the two together).
    """
    if not isinstance(data, dict):
        raise SpecCheckError(
            f"not a spec-check result (a JSON {type(data).__name__}, expected an object)",
            file=where,
        )
    if "schema" not in data:  # another format handed over for a result: say which, and what to pass
        other = _other_format(data)
        if other:
            raise SpecCheckError(f"{other}, not a spec-check result: pass the JSON result spec-check wrote "
                                 "(--format json)", file=where)
    why = unreadable("result", data.get("schema"))  # older versions are read; newer ones refused
    if why:
        raise SpecCheckError(why, file=where)
    for key, kind in _TOP.items():
        if not isinstance(data.get(key), kind):
            raise SpecCheckError(
                f'"{key}" missing or not a JSON {_JSON_NAME[kind]} (truncated?)', file=where
            )
    _Check(where).result(data)
    return data


def _other_format(data: dict[str, JSONValue]) -> str | None:
    """What a document that is not a result is, where its own keys say so."""
    for key in ("assessment-results", "catalog", "profile", "system-security-plan", "component-definition",
                "assessment-plan", "plan-of-action-and-milestones"):
        if key in data:
            return f"an OSCAL {key} document"
    if "payloadType" in data and "signatures" in data:
        return "a DSSE envelope (verify it with `spec-check verify`; its predicate is the result)"
    if "runs" in data and "version" in data:
        return "a SARIF log"
    return None


_TOP = {
    "command": str,
    "spec_version": str,
    "tool_version": str,
    "rule_pack": dict,
    "generated_at": str,
    "findings": list,
}
_JSON_NAME = {str: "string", dict: "object", list: "array", bool: "boolean", int: "integer"}
_PATTERNS = {name: re.compile(form.regex) for name, form in model.FORMS.items()}
_OPT_STR = (str, type(None))
Kinds = type | tuple[type, ...]  # the Python type(s) a JSON value must parse to


def _json_types(cls: type) -> dict[str, Kinds]:
    """Each key of a result object (a model dataclass or TypedDict) and the Python type(s)
    its JSON value parses to: text (enums included) is ``str``, ``X | None`` a tuple."""
    import enum
    import types
    import typing

    out: dict[str, Kinds] = {}
    for name, tp in typing.get_type_hints(cls).items():
        if typing.get_origin(tp) is typing.ClassVar:
            continue
        args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
        kinds = tuple(str if isinstance(a, type) and issubclass(a, enum.Enum) else a for a in args)
        out[name] = kinds if len(kinds) > 1 else kinds[0]
    return out


_FINDING = _json_types(model.Finding)
# what every readable version has (result/1 lacked "level", "expected", "message", "remediation")
_FINDING_STR = ("rule", "requirement", "status", "subject")
_FINDING_OPT_STR = tuple(k for k, t in _FINDING.items() if t == _OPT_STR)
_FINDING_TEXT = tuple(k for k, t in _FINDING.items() if t is str and k not in _FINDING_STR and k != "level")
_WAIVER = _json_types(model.Waiver)
_SUBJECT = _json_types(model.Subject)
_RULE_DOC = tuple(_json_types(model.RuleDoc))
_REQ_DOC = tuple(_json_types(model.RequirementDoc))


def _either(words: Iterable[str]) -> str:
    words = list(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def _short(value: JSONValue) -> str:
    text = value if isinstance(value, str) else json.dumps(value)[:60]
    return text[:60] + ("..." if len(text) > 60 else "")


class _Check:
    """Field-by-field checks of a result; the first failure is one error naming its field."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, field: str, problem: str) -> None:
        raise SpecCheckError(f"{field}: {problem}", file=self.where)

    def kind(self, field: str, value: JSONValue, kind: Kinds) -> None:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        # bool is an int in Python, never in a result: "line": true is not a line
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if not ok:
            names = " or ".join("null" if k is type(None) else _JSON_NAME.get(k, k.__name__) for k in kinds)
            got = "null" if value is None else f"{type(value).__name__} {_short(value)}"
            self.fail(field, f"expected a JSON {names}, got {got}")

    def form(self, field: str, value: JSONValue, name: str) -> None:
        self.kind(field, value, str)
        if not _PATTERNS[name].fullmatch(value):
            self.fail(field, f'"{_short(value)}" is not a valid {name.replace("_", " ")}')

    def result(self, d: dict[str, JSONValue]) -> None:
        for name in ("spec_version", "tool_version", "generated_at", "command"):
            self.form(name, d[name], name)
        self.kind("rule_pack.id", d["rule_pack"].get("id"), str)
        if "digest" in d["rule_pack"]:
            self.form("rule_pack.digest", d["rule_pack"]["digest"], "digest")
        self.kind("profile", d.get("profile"), _OPT_STR)
        params = d.get("parameters", {})
        self.kind("parameters", params, dict)
        for k, v in params.items():
            self.kind(f"parameters.{_short(k)}", v, dict)
            for f in ("value", "origin"):
                self.kind(f"parameters.{_short(k)}.{f}", v.get(f), str)
            self.kind(f"parameters.{_short(k)}.default", v.get("default", ""), str)
        sel = d.get("selection", {})
        self.kind("selection", sel, dict)
        for k, v in sel.items():
            self.kind(f"selection.{_short(k)}", v, list)
            for i, x in enumerate(v):
                self.kind(f"selection.{_short(k)}[{i}]", x, str)
        self.kind("extra", d.get("extra", {}), dict)
        self.fleet(d.get("extra", {}).get("fleet"))
        for name in ("subjects", "rules", "requirements"):
            self.kind(name, d.get(name, []), list)
        for i, sub in enumerate(d.get("subjects", [])):
            self.record(f"subjects[{i}]", sub, _SUBJECT)
            if sub["kind"] not in _SCOPES:
                self.fail(f"subjects[{i}].kind", f'"{_short(sub["kind"])}" is not {_either(Scope)}')
        for i, r in enumerate(d.get("rules", [])):
            self.record(f"rules[{i}]", r, dict.fromkeys(_RULE_DOC, str))
        for i, r in enumerate(d.get("requirements", [])):
            self.record(f"requirements[{i}]", r, dict.fromkeys(_REQ_DOC, str))
        ok = _FastFinding()
        for i, f in enumerate(d["findings"]):
            if not ok(f):  # the detailed check only to name what is wrong
                self.finding(f"findings[{i}]", f)

    def fleet(self, fleet: JSONValue) -> None:
        """``extra.fleet`` (a cluster run's summary): its counts are counts and its rates
        numbers, none negative (a text throughput was a TypeError in ``report``)."""
        if fleet is None:
            return
        self.kind("extra.fleet", fleet, dict)
        numbers: list[tuple[str, JSONValue, Kinds]] = [
            (f"extra.fleet.{k}", fleet.get(k), int) for k in ("hosts", "probed") if k in fleet]
        pairs = fleet.get("pairs")
        if pairs is not None:
            self.kind("extra.fleet.pairs", pairs, dict)
            numbers += [(f"extra.fleet.pairs.{k}", pairs[k], int) for k in ("measured", "rounds") if k in pairs]
            numbers += [(f"extra.fleet.pairs.{k}", pairs[k], (int, float))
                        for k in ("throughput_min_gbps", "throughput_max_gbps") if k in pairs]
        for field, v, kind in numbers:
            self.kind(field, v, kind)
            if v < 0:
                self.fail(field, f"{v} is out of range (not a count or a rate)")

    def record(self, field: str, value: JSONValue, spec: dict[str, Kinds]) -> None:
        """An object of exactly these keys (absent optional ones are null)."""
        self.kind(field, value, dict)
        for k in value:
            if k not in spec:
                self.fail(field, f'unknown key "{_short(k)}"')
        for k, kind in spec.items():
            if k not in value and not (isinstance(kind, tuple) and type(None) in kind):
                self.fail(field, f'"{k}" missing')
            self.kind(f"{field}.{k}", value.get(k), kind)

    def finding(self, field: str, f: JSONValue) -> None:
        self.kind(field, f, dict)
        for k in _FINDING_STR:
            self.kind(f"{field}.{k}", f.get(k), str)
        self.form(f"{field}.rule", f["rule"], "rule")
        self.form(f"{field}.requirement", f["requirement"], "requirement")
        if f["status"] not in _STATUSES:
            self.fail(f"{field}.status", f'unknown status "{_short(f["status"])}"')
        if f.get("level", Level.MUST.value) not in _LEVELS:
            self.fail(f"{field}.level", f'"{_short(f.get("level"))}" is not {_either(Level)}')
        for k in _FINDING_OPT_STR:
            if k in f:
                self.kind(f"{field}.{k}", f[k], _OPT_STR)
        for k in _FINDING_TEXT:
            if k in f:
                self.kind(f"{field}.{k}", f[k], str)
        loc = f.get("location")
        if loc is not None:
            self.kind(f"{field}.location", loc, dict)
            self.kind(f"{field}.location.file", loc.get("file"), str)
            self.kind(f"{field}.location.line", loc.get("line"), (int, type(None)))
            if "text" in loc:
                self.kind(f"{field}.location.text", loc["text"], str)
        if f.get("fixes") is not None:
            self.fixes(f"{field}.fixes", f["fixes"])
        w = f.get("waiver")
        if w is not None:
            self.kind(f"{field}.waiver", w, dict)
            self.kind(f"{field}.waiver.active", w.get("active"), bool)
            for k, kind in _WAIVER.items():
                if k in w:
                    self.kind(f"{field}.waiver.{k}", w[k], kind)

    def fixes(self, field: str, fixes: JSONValue) -> None:
        """A finding's ``fixes`` (``model.Fix``): what the renderers use of each edit is
        there, of its type (a result is read back by ``report`` and rendered to SARIF)."""
        self.kind(field, fixes, list)
        for i, fx in enumerate(fixes):
            at = f"{field}[{i}]"
            self.kind(at, fx, dict)
            for k in ("file", "kind", "target", "why"):
                self.kind(f"{at}.{k}", fx.get(k), str)
            if fx["kind"] not in ("key", "flag", "env"):
                self.fail(f"{at}.kind", f'"{_short(fx["kind"])}" is not key, flag or env')
            if "value" not in fx:
                self.fail(at, '"value" missing')
            if "line" in fx:
                self.kind(f"{at}.line", fx["line"], (int, type(None)))
            if "needs" in fx:
                self.kind(f"{at}.needs", fx["needs"], str)
            rep = fx.get("replace")
            if rep is not None:
                self.kind(f"{at}.replace", rep, dict)
                self.kind(f"{at}.replace.start", rep.get("start"), int)
                self.kind(f"{at}.replace.end", rep.get("end"), int)
                self.kind(f"{at}.replace.text", rep.get("text"), str)


class _FastFinding:
    """True for a finding that ``_Check.finding`` would accept, in few operations: a
    25,000-node result has 800,000 findings. Identifiers already seen valid are
    remembered; anything unusual returns False and gets the detailed check."""

    _STR_OR_NONE = (str, type(None))

    def __init__(self) -> None:
        self.rules: set[str] = set()
        self.reqs: set[str] = set()

    def __call__(self, f: JSONValue) -> bool:
        if type(f) is not dict:
            return False
        rule, req, subject = f.get("rule"), f.get("requirement"), f.get("subject")
        if type(rule) is not str or type(req) is not str or type(subject) is not str:
            return False
        if rule not in self.rules:
            if not _PATTERNS["rule"].fullmatch(rule):
                return False
            self.rules.add(rule)
        if req not in self.reqs:
            if not _PATTERNS["requirement"].fullmatch(req):
                return False
            self.reqs.add(req)
        status, level = f.get("status"), f.get("level", Level.MUST.value)
        if type(status) is not str or status not in _STATUSES or type(level) is not str \
                or level not in _LEVELS:
            return False
        g = f.get
        if (type(g("item")) not in self._STR_OR_NONE or type(g("observed")) not in self._STR_OR_NONE
                or type(g("unit")) not in self._STR_OR_NONE or type(g("source")) not in self._STR_OR_NONE
                or type(g("expected", "")) is not str or type(g("message", "")) is not str
                or type(g("remediation", "")) is not str):
            return False
        loc = g("location")
        if loc is not None and (type(loc) is not dict or type(loc.get("file")) is not str
                                or type(loc.get("line")) not in (int, type(None))
                                or type(loc.get("text", "")) is not str):
            return False
        if "fixes" in f or "no_fix" in f:  # lint's edits: the detailed check
            return False
        w = g("waiver")
        return w is None or (type(w) is dict and all(
            k not in w or type(w[k]) is kind for k, kind in _WAIVER.items()) and "active" in w)


def to_report(data: dict[str, JSONValue], where: str) -> Report:
    try:
        return report_from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SpecCheckError(
            f"not a valid spec-check result ({type(exc).__name__}: {exc})", file=where
        ) from None


def load_result(path: Path) -> tuple[dict[str, JSONValue], Report]:
    """The raw document (for signing, which covers bytes the model may not keep) and its Report."""
    data = check_result(read_json(Path(path)), str(path))
    return data, to_report(data, str(path))
