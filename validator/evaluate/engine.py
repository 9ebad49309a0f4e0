"""The rule engine: facts and rules in, findings out. Pure: no I/O, deterministic order.

For each subject (a node, a job, the cluster) and each selected rule of that scope:

1. ``when`` conditions decide applicability; false -> ``skip`` with the reason.
2. The rule's fact is looked up; missing or an error value -> ``error`` with the reason.
3. A collection gives one finding per item (after ``where``); ``all_equal`` gives one.
4. The expected value is resolved (literal, parameter, field, fact, formula) and both
   sides are put in the fact's unit; an unset parameter -> ``skip`` naming ``--set``.
5. The operator decides pass, or fail (MUST) / warn (SHOULD).

Unknown is never pass: every path that cannot decide ends in ``error`` or ``skip``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from validator.errors import SpecCheckError
from validator.lazy import Pattern
from validator.report.model import Finding, JSONValue, Location, Status, gc_paused
from validator.rules.operators import AGGREGATE_OPS, OPERATORS
from validator.rules.rulemodel import Condition, FactInfo, Level, Parameter, Rule, RulePack, Spec
from validator.rules.selection import is_selected
from validator.rules.spec import ParamValue
from validator.rules.wording import value_words
from validator.values.units import UNLIMITED, Quantity, format_quantity, format_value, unit_of

Fact = Mapping[str, JSONValue]


class _Undecided(Exception):
    """Evaluation cannot reach a verdict; carries the status (skip/error) and reason."""

    def __init__(self, status: Status, reason: str, source: str | None = None):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.source = source


@dataclass(frozen=True)
class Context:
    spec: Spec
    catalogue: Mapping[str, FactInfo]
    params: Mapping[str, ParamValue]


@dataclass(frozen=True)
class _Resolved:
    value: JSONValue  # in the fact's unit
    text: str  # for the expected sentence
    shown: str = ""  # the value alone, as shown ("8", "400 Gb/s"), where text adds an aside
    label: str = ""  # what it is: a fact's label, or a formula's inputs in words
    note: str = ""  # where a value came from when that matters ("--set gpu_count=1024 wins over ...")


def _noun(ctx: Context, p: ParamValue) -> str:
    """A parameter that is unset, in words ("the time per step")."""
    from validator.rules.wording import param_noun

    spec_param = ctx.spec.parameters.get(p.name)
    return param_noun(p.name, spec_param.description if spec_param is not None else "")


_FORMATTED: dict[tuple[type, JSONValue, str | None], str] = {}
_HASHABLE = frozenset({str, int, float, bool, type(None)})


def _fmt(value: JSONValue, unit: str | None) -> str:
    """``format_value``, remembered for scalars: a fleet repeats the same few values (8 GPUs,
    "ACTIVE", 400 Gb/s) hundreds of thousands of times. The type is part of the key
    (``True``, ``1`` and ``1.0`` are equal as keys but read differently)."""
    cls = value.__class__
    if cls not in _HASHABLE:
        return format_value(value, unit)
    key = (cls, value, unit)
    text = _FORMATTED.get(key)
    if text is None:
        text = format_value(value, unit)
        if len(_FORMATTED) > 50_000:  # bounded: serial numbers, NaNs (never equal to themselves)
            _FORMATTED.clear()
        _FORMATTED[key] = text
    return text


def _static(raw: JSONValue) -> bool:
    """A rule value that needs no facts (a literal, a parameter, a formula of those): its
    resolution depends only on the unit it is put in, so it is resolved once per unit."""
    if isinstance(raw, dict):
        if "field" in raw or "fact" in raw:
            return False
        return all(_static(a) for a in (raw.get("args") or {}).values())
    if isinstance(raw, list):
        return all(_static(r) for r in raw)
    return True


class _ResolveCache:
    """Resolutions of one static rule value per unit; failures (an unset parameter: skip)
    are remembered as their status and reason, and raised anew each time."""

    def __init__(self, ctx: Context, raw: JSONValue, fields_info: Mapping[str, FactInfo]):
        self.ctx, self.raw, self.fields_info = ctx, raw, fields_info
        self.static = _static(raw)
        self._done: dict[str | None, _Resolved | tuple[Status, str, str | None]] = {}

    def get(self, unit: str | None, facts: Mapping[str, Fact], fields: Mapping[str, Fact] | None) -> _Resolved:
        if not self.static:
            return _resolve(self.ctx, self.raw, unit, facts, fields, self.fields_info)
        hit = self._done.get(unit)
        if hit is None:
            try:
                hit = _resolve(self.ctx, self.raw, unit, facts, fields, self.fields_info)
            except _Undecided as u:
                hit = (u.status, u.reason, u.source)
            self._done[unit] = hit
        if isinstance(hit, tuple):
            raise _Undecided(*hit)
        return hit


def _info(ctx: Context, fact: str, field: str | None) -> FactInfo | None:
    info = ctx.catalogue.get(fact)
    if info is not None and field:
        return info.fields.get(field)
    return info


def _fields_info(ctx: Context, fact: str) -> Mapping[str, FactInfo]:
    info = ctx.catalogue.get(fact)
    return info.fields if info else {}


def _unit(fact: Fact, info: FactInfo | None) -> str | None:
    return fact.get("unit") or (info.unit if info else None)


def _label(ctx: Context, fact: str, field: str | None) -> str:
    info = _info(ctx, fact, field)
    return info.label if info else (field or fact)


_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,), "number": (int, float), "quantity": (int, float), "bool": (bool,),
    "list": (list,), "string": (str,),
}


def _actual(fact: Fact, info: FactInfo | None, what: str) -> JSONValue:
    """The fact's value, checked against the catalogue's type: a recording with a string
    where a number belongs, NaN, or a collection where a value belongs is an error, never
    something an operator might happen to accept."""
    if "items" in fact:
        if info is not None and info.type == "collection":
            return len(fact["items"])
        raise _Undecided(Status.ERROR, f"{what} is a collection, expected a single value")
    v = fact.get("value")
    if info is None or v is None:
        return v
    if (v == UNLIMITED and info.type == "quantity" and info.unit
            and unit_of(info.unit).dimension in ("bytes", "duration")):
        return math.inf  # a resource limit (memlock: RLIM_INFINITY) or a job with no time limit
    allowed = _TYPES.get(info.type)
    if allowed is None:
        return v
    ok = isinstance(v, allowed) and (bool not in allowed) == (not isinstance(v, bool))
    if ok and isinstance(v, float) and not math.isfinite(v):
        ok = False
    if not ok:
        shown = repr(v) if len(repr(v)) < 60 else repr(v)[:57] + "..."
        raise _Undecided(Status.ERROR, f"{what} should be {info.type}, the facts hold {shown}")
    return v


def _to_unit(q: Quantity, unit: str | None, what: str) -> float:
    if unit is None:
        raise _Undecided(Status.ERROR, f"{what} is a {q.dimension} but the fact has no unit")
    try:
        return q.to(unit)
    except SpecCheckError as exc:
        raise _Undecided(Status.ERROR, f"{what}: {exc.problem}") from None


def _resolve(ctx: Context, raw: JSONValue, unit: str | None, facts: Mapping[str, Fact],
             fields: Mapping[str, Fact] | None, fields_info: Mapping[str, FactInfo] | None = None) -> _Resolved:
    """A rule value, in the fact's unit, with the text shown as "expected"."""
    if isinstance(raw, dict):
        if "param" in raw:
            from validator.rules.wording import origin_note

            p = ctx.params[raw["param"]]
            if not p.is_set:
                raise _Undecided(
                    Status.SKIP, f"needs {_noun(ctx, p)}: pass --set {p.name}=VALUE (or a profile)"
                )
            if isinstance(p.value, Quantity):
                shown = format_quantity(p.value, unit)
                return _Resolved(_to_unit(p.value, unit, f"parameter {p.name}"), shown + origin_note(p.origin),
                                 shown)
            shown = format_value(p.value, None)
            return _Resolved(p.value, shown + origin_note(p.origin), shown)
        if "field" in raw:
            f = (fields or {}).get(raw["field"])
            return _from_fact(f, f"field {raw['field']}", unit, raw["field"], (fields_info or {}).get(raw["field"]))
        if "fact" in raw:
            return _from_fact(facts.get(raw["fact"]), f"fact {raw['fact']}", unit, raw["fact"],
                              ctx.catalogue.get(raw["fact"]))
        return _formula(ctx, raw, unit, facts, fields, fields_info)
    if isinstance(raw, list):
        parts = [_resolve(ctx, r, unit, facts, fields, fields_info) for r in raw]
        if _range_pair(raw) is not None:  # Daly's range: "2,596 to 10,384 (Daly's optimum for ...)"
            return _Resolved([p.value for p in parts], f"{parts[0].shown} to {parts[1].shown} ({parts[0].label})")
        return _Resolved([p.value for p in parts], "[" + ", ".join(p.text for p in parts) + "]")
    if isinstance(raw, str) and raw[:1].isdigit() and unit is not None:
        from validator.values.units import parse_quantity

        q = parse_quantity(raw)
        if unit_of(unit).dimension == q.dimension:
            return _Resolved(q.to(unit), format_quantity(q, unit))
    if raw == UNLIMITED and unit is not None:  # "no bound" on a duration or size (a job of unknown length)
        return _Resolved(math.inf, UNLIMITED)
    return _Resolved(raw, format_value(raw, unit))


def _not_gathered(what: str) -> str:
    """A fact the document lacks. The probe writes every fact of its catalogue (an error value
    when it cannot read one), so a missing one almost always means a recording made by an
    older spec-check, before the fact existed: say how to get it."""
    return f"{what} was not gathered (not in the facts document: re-record it with this version)"


def _from_fact(f: Fact | None, what: str, unit: str | None, name: str,
               info: FactInfo | None = None) -> _Resolved:
    if f is None:
        raise _Undecided(Status.ERROR, _not_gathered(what))
    if "error" in f:
        raise _Undecided(Status.ERROR, f"{info.label if info is not None else what} could not be read: {f['error']}",
                         f.get("source"))
    own = f.get("unit")
    v = _actual(f, info, what)
    shown = format_value(v, own or unit)
    if own and own != unit and isinstance(v, (int, float)):
        base = v * unit_of(own).factor  # formulas (unit None) work in base units
        v = base if unit is None else Quantity(base, unit_of(own).dimension).to(unit)
    label = _short(info.label, False) if info is not None else name
    src = f.get("source")
    if isinstance(src, str) and src.startswith("--set") and " wins over " in src:
        # a command-line value that overrides a job file: say so wherever it is used
        return _Resolved(v, f"{shown} ({label}: {src})", shown, label, src)
    return _Resolved(v, f"{shown} ({label})", shown, label)


def _formula(ctx: Context, raw: dict[str, JSONValue], unit: str | None, facts: Mapping[str, Fact],
             fields: Mapping[str, Fact] | None, fields_info: Mapping[str, FactInfo] | None) -> _Resolved:
    from validator.rules.formulas import FORMULAS, LABELS, PRODUCTS
    from validator.rules.wording import DALY, WHAT, Arg, count, daly_words, product_words

    args: dict[str, float] = {}
    shown: dict[str, Arg] = {}
    for name, arg in (raw.get("args") or {}).items():
        # formulas work in base units: resolve each argument without the fact's unit
        if isinstance(arg, dict) and "param" in arg:
            p = ctx.params[arg["param"]]
            if not p.is_set:
                raise _Undecided(Status.SKIP, f"needs {_noun(ctx, p)}: pass --set {p.name}=VALUE")
            args[name] = p.value.base if isinstance(p.value, Quantity) else p.value
            shown[name] = Arg(p.text)
        else:
            r = _resolve(ctx, arg, None, facts, fields, fields_info)
            args[name] = r.value
            shown[name] = Arg(r.shown or r.text, r.label, r.note)
    formula = raw["formula"]
    try:
        result = FORMULAS[formula](**args)
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        raise _Undecided(Status.SKIP, f"cannot work out {WHAT.get(formula, 'the expected value')}: {exc}") from None
    if unit is not None and unit_of(unit).factor != 1.0:
        result = result / unit_of(unit).factor
    # values and meaning, never the rule file's names (wording.py)
    value = count(result) if unit is None and formula in DALY else format_value(result, unit)
    if formula in PRODUCTS:
        words = product_words(list(shown.values()))
    elif formula in DALY:
        words = daly_words(shown)
    else:
        words = LABELS.get(formula, "computed")
    return _Resolved(result, f"{value} ({words})", value, words)


def _range_pair(raw: JSONValue) -> tuple[str, str] | None:
    """The two formulas of a ``between`` range read as one (Daly's min and max of the same
    inputs), else None."""
    from validator.rules.formulas import RANGES

    if not (isinstance(raw, list) and len(raw) == 2 and all(isinstance(r, dict) and "formula" in r for r in raw)):
        return None
    pair = (raw[0]["formula"], raw[1]["formula"])
    return pair if pair in RANGES and raw[0].get("args") == raw[1].get("args") else None


def _test(op_name: str, actual: JSONValue, expected: JSONValue) -> bool:
    op = OPERATORS[op_name]
    try:
        return op.test(actual, expected)
    except (TypeError, ValueError) as exc:
        raise _Undecided(Status.ERROR, f"cannot evaluate: {exc}") from None


def _sentence(op_name: str, label: str, value_text: str) -> str:
    if op_name == "gte" and value_text.split(" (")[0] == UNLIMITED:
        return f"{label} {value_text}"  # "locked-memory limit unlimited (memlock_min)", not ">= unlimited"
    return OPERATORS[op_name].sentence.format(label=label, value=value_text)


def _condition_text(ctx: Context, rule: Rule, cond: Condition) -> str:
    if cond.param is not None:
        label = _param_label(ctx, cond.param)
    elif cond.field is not None:
        label = _label(ctx, rule.fact, cond.field)
    else:
        label = _label(ctx, cond.fact or rule.fact, None)
    text = _words(ctx, rule, cond.value, top=True) if OPERATORS[cond.op].needs_value else ""
    info = _info(ctx, rule.fact, cond.field) if cond.field is not None else _info(ctx, cond.fact or rule.fact, None)
    values = _param_values(ctx, cond.param) if cond.param is not None else (info.values if info is not None else None)
    if values:
        text = value_words(values, text)
    return _sentence(cond.op, label, text)


def _param_spec(ctx: Context, name: str) -> Parameter | None:
    return ctx.spec.parameters.get(name) if getattr(ctx, "spec", None) is not None else None


def _param_label(ctx: Context, name: str) -> str:
    """A profile parameter as a person reads it: the spec's label, never the bare name."""
    p = _param_spec(ctx, name)
    return p.label if p is not None and p.label else f"profile parameter {name.replace('_', ' ')}"


def _param_values(ctx: Context, name: str) -> dict[str, str]:
    p = _param_spec(ctx, name)
    return dict(p.values) if p is not None and p.values else {}


def describe_rule(ctx: Context, rule: Rule) -> dict[str, JSONValue]:
    """A rule in words, as findings say it: the expected sentence and each condition's."""
    b = Builder(ctx, rule, "", Level.MUST)
    return {
        "expected": b.static_expected(),
        "when": [_condition_text(ctx, rule, c) + (f" (otherwise it passes: {c.reason or 'met another way'})"
                                                  if c.otherwise == "pass" else "") for c in rule.when],
        "where": [(_condition_text(ctx, rule, c), c.reason) for c in rule.where],
        "filter": [_condition_text(ctx, rule, c) for c in rule.filter],
    }


class _Held(NamedTuple):
    """A condition's answer on one document or item."""

    holds: bool
    sentence: str  # the condition in words: "port state = ACTIVE"
    observed: str  # the value seen, as shown: "DOWN", "Mellanox (rev 2)"

    @property
    def reason(self) -> str:
        """Why a rule does not apply, where the condition is false."""
        return f"applies only where {self.sentence} (observed {self.observed})"


class _When:
    """One ``when``/``where``/``filter`` condition of one rule, with what does not depend on
    the facts worked out once: its label, catalogue entry, and expected value per unit."""

    def __init__(self, ctx: Context, rule: Rule, cond: Condition):
        self.cond = cond
        self.param = getattr(cond, "param", None)
        if self.param is not None:  # a profile's declaration (platform_metric_families)
            self.name = self.param
            self.label, self.info = _param_label(ctx, self.param), None
            pv = ctx.params.get(self.param)
            value = pv.value if pv is not None else None
            self.param_fact: Fact = {"value": getattr(value, "base", value),
                                     "source": f"parameter {self.param} ({pv.origin if pv else 'unset'})"}
        elif cond.field is not None:
            self.name = cond.field
            self.label, self.info = _label(ctx, rule.fact, cond.field), _info(ctx, rule.fact, cond.field)
        else:
            self.name = cond.fact or rule.fact
            self.label, self.info = _label(ctx, self.name, None), _info(ctx, self.name, None)
        self.on_field = cond.field is not None
        # rules share "when" conditions (gpu.count >= 1): on one document, one answer
        self.key = (self.name, self.label, cond.op, repr(cond.value))
        self.needs_value = OPERATORS[cond.op].needs_value
        self.expected = _ResolveCache(ctx, cond.value, _fields_info(ctx, rule.fact))
        self._sentences: dict[str, str] = {}
        self.values = self.info.values if self.info is not None else {}
        if self.param is not None:
            self.values = _param_values(ctx, self.param)

    def holds(self, facts: Mapping[str, Fact], fields: Mapping[str, Fact] | None) -> _Held:
        """Whether the condition holds, with the condition in words and the value seen, kept
        apart so a ``where`` with its own reason quotes the value whatever characters it has."""
        if self.param is not None:
            f: Fact | None = self.param_fact
        else:
            f = (fields or {}).get(self.name) if self.on_field else facts.get(self.name)
        if f is None:
            raise _Undecided(Status.ERROR, f"cannot tell whether the rule applies: {_not_gathered(self.name)}")
        if "error" in f:
            raise _Undecided(Status.ERROR, f"cannot tell whether the rule applies: {self.label}: {f['error']}",
                             f.get("source"))
        unit = _unit(f, self.info)
        actual = _actual(f, self.info, self.name)
        expected = self.expected.get(unit, facts, fields) if self.needs_value else None
        holds = _test(self.cond.op, actual, expected.value if expected else None)
        text = expected.text if expected else ""
        observed = _fmt(actual, unit)
        if self.values:  # coded values in words ("divisible" -> what the rule means by it)
            text, observed = value_words(self.values, text), value_words(self.values, observed)
        sentence = self._sentences.get(text)
        if sentence is None:
            sentence = _sentence(self.cond.op, self.label, text)
            if self.expected.static:  # one text per unit; a fact's value could be anything
                self._sentences[text] = sentence
        return _Held(holds, sentence, observed)


class Builder:
    """Makes the findings of one rule, sharing the fixed parts: made once per rule for a
    whole run (``subject`` is set per document), so the label, the static expected
    sentence, the compiled conditions and the expected value per unit are worked out once,
    not once per finding."""

    def __init__(self, ctx: Context, rule: Rule, subject: str, level: Level):
        self.ctx, self.rule, self.subject, self.level = ctx, rule, subject, level
        self.label = _label(ctx, rule.fact, rule.field)
        self.info = _info(ctx, rule.fact, rule.field)
        self.rule_id, self.requirement = rule.id, rule.requirement
        self.fact_name, self.field = rule.fact, rule.field
        self.aggregate = rule.check.op in AGGREGATE_OPS
        self.remediation = rule.remediation.strip()
        self.summary = rule.summary.strip()
        self._static_expected: str | None = None
        self.when = [_When(ctx, rule, c) for c in rule.when]
        self.where = [(_When(ctx, rule, c), c.reason) for c in rule.where]
        self.filter = [_When(ctx, rule, c) for c in rule.filter]
        self.needs_value = OPERATORS[rule.check.op].needs_value
        self.expected = _ResolveCache(ctx, rule.check.value, _fields_info(ctx, rule.fact))
        self._sentences: dict[str, str] = {}
        self.values = self.info.values if self.info is not None else {}

    def make(self, status: Status, expected: str, message: str, *, item: str | None = None,
             fact: Fact | None = None, value: JSONValue = None, unit: str | None = None,
             observed: str | None = None, source: str | None = None) -> Finding:
        if fact is not None:
            loc = fact.get("location")
            location = (Location(loc["file"], loc.get("line") if isinstance(loc.get("line"), int) else None,
                                 loc.get("text") if isinstance(loc.get("text"), str) else None)
                        if isinstance(loc, dict) and isinstance(loc.get("file"), str) and loc["file"] else None)
            source = source or fact.get("source")
        else:
            location = None
        return Finding(  # positional, in field order: 330,000 calls for a 10,000-node fleet
            self.rule_id, self.requirement, self.level, status, self.subject, expected, message,
            self.remediation, item, observed,
            None if isinstance(value, float) and math.isinf(value) else value,
            unit, source, location,
        )

    def expected_text(self, facts: Mapping[str, Fact], fields: Mapping[str, Fact] | None,
                      unit: str | None) -> tuple[JSONValue, str]:
        if not self.needs_value:
            return None, _sentence(self.rule.check.op, self.label, "")
        r = self.expected.get(unit, facts, fields)
        sentence = self._sentences.get(r.text)
        if sentence is None:
            sentence = _sentence(self.rule.check.op, self.label,
                                 value_words(self.values, r.text) if self.values else r.text)
            if self.expected.static:
                self._sentences[r.text] = sentence
        return r.value, sentence

    def verdict(self, fact: Fact | None, facts: Mapping[str, Fact], fields: Mapping[str, Fact] | None,
                item: str | None, cited: str = "") -> Finding:
        """Judge one value: a scalar fact, or one field of one item."""
        info = self.info
        try:
            for cond, why in self.where if item is not None else ():
                held = cond.holds(facts, fields)
                if not held.holds:
                    # the rule's own words, with what was seen
                    reason = f"{why} (observed {held.observed})" if why else held.reason
                    return self.make(Status.SKIP, self.static_expected(), reason, item=item)
            if fact is None:
                what = f"{self.rule.field} of {item}" if item else self.rule.fact
                raise _Undecided(Status.ERROR, _not_gathered(what))
            if "error" in fact:
                raise _Undecided(Status.ERROR, f"could not be read: {fact['error']}", fact.get("source"))
            unit = _unit(fact, info)
            actual = _actual(fact, info, self.rule.field or self.rule.fact)
            expected_value, expected = self.expected_text(facts, fields, unit)
            ok = _test(self.rule.check.op, actual, expected_value)
        except _Undecided as u:
            return self.make(u.status, self.static_expected(), u.reason, item=item, fact=fact, source=u.source)
        observed = _fmt(actual, unit)
        if self.values:  # coded values in words; the raw value stays in ``value``
            observed = value_words(self.values, observed)
        # a command-line value that overrode a job file: the message says so too
        note = f" (expected {expected})" if " wins over " in expected else ""
        if " wins over " in str(fact.get("source")) or str(fact.get("source")).startswith("default of "):
            # a value nobody wrote, or one the command line overrode: say so in the message,
            # which every output format shows
            note += f" ({fact['source']})"
        elif self.rule.cite_source and fact.get("source"):
            # a rule whose verdict rests on how the value was found (the mechanism and its
            # origin, the setting that emits a metric) says so in its message
            note += f" ({fact['source']})"
        note += cited
        shown = observed
        if str(fact.get("source")).startswith("default of "):  # the short form, beside the value
            observed += " (" + fact["source"].split(":", 1)[0] + ")"
        elif self.rule.cite_source and "default of " in str(fact.get("source")):
            # a mechanism whose timeout is a framework default (v1.1's REC-02): the same label
            label = re.search(r"default of [^:()]*(?:\([^()]*\))?", str(fact["source"]))
            if label:
                observed += f" ({label.group(0).strip()})"
        if self.rule.check.op == "between":  # a range rule says the range and the side
            shown += _side(self.label, expected, actual, expected_value)
        if ok:
            return self.make(Status.PASS, expected, f"{self.label} is {shown}{note}", item=item,
                             fact=fact, value=actual, unit=unit, observed=observed)
        status = Status.FAIL if self.level == Level.MUST else Status.WARN
        return self.make(status, expected, f"{self.summary}: {self.label} is {shown}{note}",
                         item=item, fact=fact, value=actual, unit=unit, observed=observed)

    def static_expected(self) -> str:
        """The expected sentence without resolving facts (for skip/error findings)."""
        if self._static_expected is None:
            self._static_expected = self._static_text()
        return self._static_expected

    def _static_text(self) -> str:
        check = self.rule.check
        text = _words(self.ctx, self.rule, check.value, top=True)
        return _sentence(check.op, self.label, value_words(self.values, text) if self.values else text)


def _side(label: str, expected: str, actual: JSONValue, bounds: JSONValue) -> str:
    """``, below the expected range 4,583 to 18,331 (checkpoints too often)``: where a value
    lies against a ``between`` range, in every output's message (the range was only in
    ``expected``, which the default terminal output of a lint does not print). An interval
    below its range is too often, above it too rarely."""
    try:
        lo, hi = bounds
        below, above = actual < lo, actual > hi
    except (TypeError, ValueError):
        return ""
    span = expected.removeprefix(f"{label} within ").split(" (", 1)[0]
    if not below and not above:
        return f", within the expected range {span}"
    often = "interval" in label
    what = ("checkpoints too often" if "checkpoint" in label else "too often") if often else "too low"
    if above:
        what = ("checkpoints too rarely" if "checkpoint" in label else "too rarely") if often else "too high"
    return f", {'below' if below else 'above'} the expected range {span} ({what})"


def _words(ctx: Context, rule: Rule, raw: JSONValue, *, top: bool = False) -> str:
    """A rule value in words, unresolved (``rules explain``, skip and error findings): a
    parameter as its value and name, a field or fact as its label, a formula as what it
    computes (formulas.py's PRODUCTS, LABELS and RANGES), a literal as written."""
    from validator.rules.formulas import LABELS, PRODUCTS, RANGES
    from validator.rules.wording import DALY, origin_note, static_daly_words

    if isinstance(raw, dict) and "param" in raw:
        p = ctx.params[raw["param"]]
        if not p.is_set:
            return _noun(ctx, p)
        return p.text + (origin_note(p.origin) if top else "")
    if isinstance(raw, dict) and "field" in raw:
        return _short(_label(ctx, rule.fact, raw["field"]), top)
    if isinstance(raw, dict) and "fact" in raw:
        return _short(_label(ctx, raw["fact"], None), top)
    if isinstance(raw, dict) and "formula" in raw:
        name, args = raw["formula"], raw.get("args") or {}
        if name in PRODUCTS:
            factors = [_words(ctx, rule, a) for a in args.values() if not (type(a) is int and a == 1)]
            return " x ".join(factors or ["1"])
        if name in DALY:
            inputs_d = {k: _words(ctx, rule, a) for k, a in args.items()}
            return f"{LABELS.get(name, name)}: {static_daly_words(inputs_d)}"
        inputs = ", ".join(_words(ctx, rule, a) for a in args.values())
        return f"{LABELS.get(name, name)} (of {inputs})"
    if isinstance(raw, list):
        pair = _range_pair(raw)
        if pair is not None:
            inputs_d = {k: _words(ctx, rule, a) for k, a in (raw[0].get("args") or {}).items()}
            return RANGES[pair] + static_daly_words(inputs_d).removeprefix("Daly's optimum")
        return "[" + ", ".join(_words(ctx, rule, r) for r in raw) + "]"
    return format_value(raw, None)


_SET_ASIDE = Pattern(r" \([^()]*--set [^()]*\)$")


def _short(label: str, top: bool) -> str:
    """A label inside a formula's words drops its --set aside: "job GPU count", not "job GPU
    count (--set gpu_count=N when unknown)" in the middle of a list of inputs (a qualifier,
    "PCIe width (current)", stays)."""
    return label if top else _SET_ASIDE.sub("", label)


_Answer = _Held | tuple[Status, str, str | None]


def _when_holds(cond: _When, facts: Mapping[str, Fact], answers: dict[Hashable, _Answer]) -> _Held:
    """A ``when`` condition on one document, answered once for every rule that has it."""
    answer = answers.get(cond.key)
    if answer is None:
        try:
            answer = cond.holds(facts, None)
        except _Undecided as u:
            answer = (u.status, u.reason, u.source)
        answers[cond.key] = answer
    if isinstance(answer, _Held):
        return answer
    raise _Undecided(*answer)


def _cite(cond: _When, facts: Mapping[str, Fact], held: _Held) -> str:
    """`` (<label> <value>: <source>)``: what a ``when`` with ``cite: true`` rested on, so a
    verdict that holds because a value is unknown says which setting would decide it (and
    one that rests on a known value says where it came from), instead of the rule asking
    for it whether it was given or not."""
    f = facts.get(cond.name) if cond.param is None else None
    src = f.get("source") if f is not None else None
    return f" ({cond.label} {held.observed}: {src})" if isinstance(src, str) and src else ""


def evaluate_rule(b: Builder, kind: str, facts: Mapping[str, Fact], out: list[Finding],
                   answers: dict[Hashable, _Answer]) -> None:
    """Append the rule's findings on one subject to ``out`` (a plain function, not a
    generator: it runs 33 times per node, 330,000 times for a 10,000-node fleet).
    ``answers``: the document's ``when`` conditions answered so far."""
    rule = b.rule
    name = b.fact_name
    cited = ""
    try:
        for cond in b.when:
            held = _when_holds(cond, facts, answers)
            if held.holds and cond.cond.cite:
                cited += _cite(cond, facts, held)
            if not held.holds:
                # a "when" with its own words says them, with what was seen
                reason = f"{cond.cond.reason} (observed {held.observed})" if cond.cond.reason else held.reason
                f = None if cond.param is not None else facts.get(cond.name)
                otherwise = getattr(cond.cond, "otherwise", "skip")
                if otherwise == "pass":
                    # met another way (a run shorter than the checkpoint threshold, a family
                    # the platform provides): a pass that says why, with the value seen
                    out.append(b.make(Status.PASS, b.static_expected(), reason, fact=f, observed=held.observed))
                    return
                # a null value whose source says why it is unknown ("inherited default:
                # ... runtime.mixed_precision_dtype ...") quotes it: the key that decides it
                src = f.get("source") if f is not None and f.get("value") is None else None
                if isinstance(src, str) and src and src != "not set":
                    reason = f"{reason}: {src}"
                out.append(b.make(Status.SKIP, b.static_expected(), reason))
                return
    except _Undecided as u:
        out.append(b.make(u.status, b.static_expected(), u.reason, source=u.source))
        return
    fact = facts.get(name)
    if fact is not None and "error" in fact:
        # the fact's own reason ("cannot list .../ports"), not a complaint about its shape
        out.append(b.make(Status.ERROR, b.static_expected(),
                          f"{_label(b.ctx, rule.fact, None)} could not be read: {fact['error']}", fact=fact))
        return
    if fact is not None and "items" in fact and not b.field:
        out.append(b.make(Status.ERROR, b.static_expected(),
                          f"{rule.fact} is a collection in these facts, expected a single value", fact=fact))
        return
    if fact is None or "items" not in fact:
        if fact is not None and b.field:
            out.append(b.make(Status.ERROR, b.static_expected(), f"{rule.fact} is not a collection",
                              fact=fact))
            return
        out.append(b.verdict(fact, facts, None, None, cited))
        return
    members = fact["items"]
    undecided: list[tuple[dict[str, JSONValue], _Undecided]] = []
    if b.filter:
        members, undecided = _filtered(b, facts, members)
    if b.aggregate:
        out.append(_aggregate(b, fact, members, undecided))
        return
    field = b.field
    found = [b.make(u.status, b.static_expected(), u.reason, item=item_label(m), source=u.source)
             for m, u in undecided]
    found += [b.verdict(m["fields"].get(field), facts, m["fields"], item_label(m)) for m in members]
    judged = [f for f in found if not (f.status is Status.SKIP and b.where)]
    if not judged:
        empty = rule.if_empty
        status = Status(empty.status) if empty else Status.SKIP
        message = empty.message if empty else f"no {_label(b.ctx, rule.fact, None)} on this {kind}"
        why = fact.get("empty")  # the source says why its collection is empty (no log, not no failure)
        if isinstance(why, str) and why and status is Status.SKIP:
            message = why
        # a verdict on an empty collection (no Xid event: pass) carries what was seen: none
        seen = "none" if status in (Status.PASS, Status.FAIL, Status.WARN) else None
        out.append(b.make(status, b.static_expected(), message, fact=fact, observed=seen))
        return
    out.extend(found)


def _filtered(b: Builder, facts: Mapping[str, Fact], members: list[dict[str, JSONValue]]
              ) -> tuple[list[dict[str, JSONValue]], list[tuple[dict[str, JSONValue], _Undecided]]]:
    """The items a ``filter`` keeps (NIC links of pcie.links): the others are not this rule's
    business and get no finding at all. An item whose filter field is unreadable cannot be
    sorted out: it comes back with why, for an error (its own finding, or the aggregate's),
    never silently dropped."""
    kept: list[dict[str, JSONValue]] = []
    undecided: list[tuple[dict[str, JSONValue], _Undecided]] = []
    for m in members:
        try:
            if all(c.holds(facts, m["fields"]).holds for c in b.filter):
                kept.append(m)
        except _Undecided as u:
            undecided.append((m, u))
    return kept, undecided


_PCI_ID = Pattern(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def item_label(member: Mapping[str, JSONValue]) -> str:
    """``GPU0 (GPU-4a3f...)``: a GPU's index can change across reboots, its UUID cannot, and
    waivers and auditors name GPUs by UUID. An item named by its PCI address shows its
    device name first (``mlx5_3 (0000:2b:00.0)``): people know NICs by name."""
    fields = member["fields"]
    uuid = fields.get("uuid", {}).get("value")
    if isinstance(uuid, str) and uuid:
        return f"{member['id']} ({uuid})"
    name = fields.get("name", {}).get("value")
    if isinstance(name, str) and name and _PCI_ID.match(str(member["id"])):
        return f"{name} ({member['id']})"
    return str(member["id"])


class GroupItem(dict[str, JSONValue]):
    """A collection item that stands for ``members`` identical ones (a fleet's value
    group, ``validator.cluster.groups``: its id is their host list), which ``all_equal``
    counts as that many. A type of its own, not a key of the item: a document's items are
    plain dicts, and a "members" key one of them carries (the facts schema allows more
    keys) must count for nothing, nor end in a TypeError."""

    __slots__ = ("members",)

    def __init__(self, item: dict[str, JSONValue], members: int):
        super().__init__(item)
        self.members = members


def _aggregate(b: Builder, fact: Fact, members: list[dict[str, JSONValue]],
               undecided: list[tuple[dict[str, JSONValue], _Undecided]]) -> Finding:
    """One verdict over the kept items. An item the filter could not sort out might be the
    one that differs: the comparison is then unknown, an error naming the item and why (a
    skip where only an unset parameter stands in the way)."""
    field = b.rule.field or ""
    values: dict[str, JSONValue] = {}
    weights: dict[str, int] = {}
    errors = [f"{m['id']}: {u.reason}" for m, u in undecided if u.status is not Status.SKIP]
    skipped = [u.reason for _, u in undecided if u.status is Status.SKIP]
    for m in members:
        f = m["fields"].get(field)
        if f is None or "error" in f:
            errors.append(f"{m['id']}: {f['error'] if f else 'not gathered'}")
        else:
            values[m["id"]] = f.get("value")
            # an item that stands for several identical members (a fleet's value group,
            # validator.cluster.groups: its id is their host list) counts each of them
            weights[m["id"]] = m.members if isinstance(m, GroupItem) else 1
    expected = _sentence(b.rule.check.op, b.label, "")
    if errors:
        return b.make(Status.ERROR, expected, "; ".join(errors[:5]) + (" ..." if len(errors) > 5 else ""),
                      fact=fact)
    if skipped:
        return b.make(Status.SKIP, expected, skipped[0], fact=fact)
    if not values:
        return b.make(Status.SKIP, expected, f"no {b.label} to compare", fact=fact)
    ok = _test(b.rule.check.op, list(values.values()), None)
    groups: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    for member, v in values.items():
        text = format_value(v, None)
        groups.setdefault(text, []).append(member)
        counts[text] = counts.get(text, 0) + weights[member]
    observed = "; ".join(f"{v} ({counts[v]})" for v in sorted(groups, key=lambda v: -counts[v]))
    if ok:
        return b.make(Status.PASS, expected, f"{b.label} is {observed}", fact=fact, value=values,
                      observed=observed)
    status = Status.FAIL if b.level == Level.MUST else Status.WARN
    fewest = sorted(groups, key=lambda v: counts[v])[0]
    detail = f"{', '.join(groups[fewest][:10])} differ{'s' if counts[fewest] == 1 else ''} ({fewest})"
    return b.make(status, expected, f"{b.rule.summary.strip()}: {detail}", fact=fact, value=values,
                  observed=observed)


def evaluate(ctx: Context, pack: RulePack, documents: Iterable[Mapping[str, JSONValue]], *,
             select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> list[Finding]:
    """Every finding of every selected rule on every subject, sorted for determinism."""
    rules = [r for r in pack.rules if is_selected(r.id, select, ignore)]
    levels = {r.id: pack.level_of(r, ctx.spec) for r in rules}
    by_scope: dict[str, list[Rule]] = {}
    for r in rules:
        by_scope.setdefault(r.scope, []).append(r)
    builders = {scope: [Builder(ctx, r, "", levels[r.id]) for r in rs] for scope, rs in by_scope.items()}
    findings: list[Finding] = []
    with gc_paused():
        for doc in documents:
            subject = doc["subject"]
            facts = doc["facts"]
            answers: dict[Hashable, _Answer] = {}
            for b in builders.get(subject["kind"], ()):
                b.subject = subject["name"]
                evaluate_rule(b, subject["kind"], facts, findings, answers)
        findings.sort(key=Finding.sort_key)  # a key tuple per finding: still no GC passes
    return findings
